-- The fragments report's queries are built from (package report puts them
-- together: a WITH of report_base, a filter, the cost rule of rules.sql, a
-- day column, then usage_aggregates grouped by the report's dimensions).
-- Each is tested on its own in report/fragments_test.go.

-- name: report_base
-- The counted billed records with what a report needs: time, session,
-- project, source, cwd, kind, model, tokens and both costs. session_summary
-- records name no model: the export stores none, and a model an older export
-- attributed is dropped, so they are never priced from the table.
SELECT u.file_id, u.entry_index, u.rollup_part, u.timestamp AS ts, u.session_id, s.project, s.source, s.cwd, u.kind,
       CASE WHEN u.kind = 'session_summary' THEN NULL ELSE u.provider END AS provider,
       CASE WHEN u.kind = 'session_summary' THEN NULL ELSE u.model END AS model,
       u.input, u.output, u.cache_read, u.cache_write, u.cache_write_1h, u.total_tokens,
       u.recorded_cost_total,
       CASE WHEN u.kind = 'session_summary' THEN NULL ELSE u.calculated_cost_total END AS calculated_cost_total
FROM usage u JOIN sessions s USING (file_id)
WHERE u.counted

-- name: usage_aggregates
-- The select list of a usage group (after its grouping columns): first and
-- last time, records, token sums, the exact cost sum as text (DECIMAL, so
-- no float drift), records per cost source, and the unpriced records'
-- tokens, which are never priced as $0. Over rows with ts, the token
-- columns, cost and src.
min(ts), max(ts), count(*),
CAST(sum(input) AS BIGINT), CAST(sum(output) AS BIGINT), CAST(sum(cache_read) AS BIGINT),
CAST(sum(cache_write) AS BIGINT), CAST(sum(total_tokens) AS BIGINT),
CAST(sum(CAST(cost AS DECIMAL(38,15))) AS VARCHAR),
count(*) FILTER (WHERE src = 'recorded'), count(*) FILTER (WHERE src = 'calculated'),
count(*) FILTER (WHERE src IS NULL),
CAST(coalesce(sum(input) FILTER (WHERE src IS NULL), 0) AS BIGINT),
CAST(coalesce(sum(output) FILTER (WHERE src IS NULL), 0) AS BIGINT),
CAST(coalesce(sum(cache_read) FILTER (WHERE src IS NULL), 0) AS BIGINT),
CAST(coalesce(sum(cache_write) FILTER (WHERE src IS NULL), 0) AS BIGINT),
CAST(coalesce(sum(total_tokens) FILTER (WHERE src IS NULL), 0) AS BIGINT)

-- name: tool_calls_usage
-- The tool calls of a usage-mode database (tool_uses), fork copies left
-- out as the export marked them (export.sql derive_tool_uses_fork_copy):
-- one row per call with its file, call id, tool, time and model.
SELECT file_id, tool_call_id, tool_name, timestamp AS ts, provider, model_id AS model
FROM tool_uses
WHERE is_call AND NOT fork_copy

-- name: tool_results_usage
-- The results of a usage-mode database's tool calls, one row per file and
-- call id: whether any of its results is an error, and the bytes of its
-- output. Fork copies left out.
SELECT file_id, tool_call_id, bool_or(is_error) AS is_error, sum(byte_size) AS output_bytes
FROM tool_uses
WHERE is_result AND NOT fork_copy
GROUP BY file_id, tool_call_id

-- name: tool_calls_full
-- tool_calls_usage for a full export: the toolCall content blocks, with
-- their entry's time and model; entries copied by a fork left out.
SELECT b.file_id, b.tool_call_id, b.tool_name, e.timestamp AS ts, e.provider, e.model_id AS model
FROM content_blocks b JOIN entries e USING (file_id, entry_index)
WHERE b.block_type = 'toolCall' AND e.fork_copy_of IS NULL

-- name: tool_results_full
-- tool_results_usage for a full export: the toolResult messages with a
-- call id and the bytes of their content blocks; fork copies left out.
SELECT e.file_id, e.tool_call_id, bool_or(e.is_error) AS is_error, sum(b.byte_size) AS output_bytes
FROM entries e LEFT JOIN content_blocks b USING (file_id, entry_index)
WHERE e.role = 'toolResult' AND e.fork_copy_of IS NULL AND e.tool_call_id IS NOT NULL
GROUP BY e.file_id, e.tool_call_id
