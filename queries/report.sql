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
