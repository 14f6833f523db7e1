-- Views created in every exported DuckDB database. Each block is the
-- SELECT of one view; the block's comment is its documentation. Totals
-- start from counted_usage, so fork and file copies are counted once
-- (SPEC.md §4). Timestamps are TIMESTAMPTZ (UTC instants). Days are UTC
-- whatever the session's TimeZone: group timestamps in another zone
-- yourself (timezone('America/Los_Angeles', timestamp)). Costs are
-- DOUBLE sums; `sessions-etl query` shows them to 10 significant digits in
-- its table and CSV output (JSON keeps every digit).

-- name: counted_usage
-- Billed records counted once: usage without fork and file copies.
SELECT * FROM usage WHERE counted

-- name: daily_usage
-- Counted usage per UTC day (day is a DATE; records without a timestamp
-- are on a row whose day is NULL). cost_total sums priced records only;
-- unpriced_records says how many had no cost (never counted as $0).
SELECT CAST(timezone('UTC', timestamp) AS DATE) AS day,
       count(*) AS records,
       count(DISTINCT session_id) AS sessions,
       sum(input) AS input,
       sum(output) AS output,
       sum(cache_read) AS cache_read,
       sum(cache_write) AS cache_write,
       sum(total_tokens) AS total_tokens,
       sum(cost_total) AS cost_total,
       count(*) FILTER (WHERE cost_source = 'unpriced') AS unpriced_records
FROM counted_usage
GROUP BY day
ORDER BY day NULLS LAST

-- name: session_usage
-- Counted usage per session id, with the session's project and name taken
-- from its oldest file.
SELECT u.session_id,
       s.project,
       s.name,
       s.source,
       s.created_at,
       s.parent_session_id,
       count(*) AS records,
       min(u.timestamp) AS first_usage,
       max(u.timestamp) AS last_usage,
       sum(u.input) AS input,
       sum(u.output) AS output,
       sum(u.cache_read) AS cache_read,
       sum(u.cache_write) AS cache_write,
       sum(u.total_tokens) AS total_tokens,
       sum(u.cost_total) AS cost_total,
       count(*) FILTER (WHERE u.cost_source = 'unpriced') AS unpriced_records
FROM counted_usage u
LEFT JOIN (
  SELECT session_id,
         first(project ORDER BY created_at NULLS LAST, path) AS project,
         first(name ORDER BY created_at NULLS LAST, path) AS name,
         first(source ORDER BY created_at NULLS LAST, path) AS source,
         min(created_at) AS created_at,
         first(parent_session_id ORDER BY created_at NULLS LAST, path) AS parent_session_id
  FROM sessions
  GROUP BY session_id
) s USING (session_id)
GROUP BY ALL
ORDER BY first_usage NULLS LAST, u.session_id

-- name: project_usage
-- Counted usage per project (last path element of the session's cwd).
SELECT s.project,
       count(DISTINCT u.session_id) AS sessions,
       count(*) AS records,
       sum(u.input) AS input,
       sum(u.output) AS output,
       sum(u.cache_read) AS cache_read,
       sum(u.cache_write) AS cache_write,
       sum(u.total_tokens) AS total_tokens,
       sum(u.cost_total) AS cost_total,
       count(*) FILTER (WHERE u.cost_source = 'unpriced') AS unpriced_records
FROM counted_usage u
JOIN sessions s USING (file_id)
GROUP BY s.project
ORDER BY cost_total DESC NULLS LAST, s.project NULLS LAST

-- name: model_usage
-- Counted usage per provider and model, with how each record was costed.
SELECT provider,
       model,
       count(*) AS records,
       sum(input) AS input,
       sum(output) AS output,
       sum(cache_read) AS cache_read,
       sum(cache_write) AS cache_write,
       sum(total_tokens) AS total_tokens,
       sum(cost_total) AS cost_total,
       count(*) FILTER (WHERE cost_source = 'recorded') AS recorded_records,
       count(*) FILTER (WHERE cost_source = 'calculated') AS calculated_records,
       count(*) FILTER (WHERE cost_source = 'unpriced') AS unpriced_records
FROM counted_usage
GROUP BY provider, model
ORDER BY cost_total DESC NULLS LAST, provider NULLS LAST, model NULLS LAST

-- name: unpriced_models
-- Models whose counted usage has no cost (SPEC.md §4: listed, never $0),
-- with the billed kinds of those records. session_summary records name no
-- model: they are the row whose provider and model are NULL ("(no model)"
-- in reports), priced only from a recorded cost.
SELECT provider,
       model,
       array_to_string(list_sort(list_distinct(list(kind))), ', ') AS kinds,
       count(*) AS records,
       sum(input) AS input,
       sum(output) AS output,
       sum(cache_read) AS cache_read,
       sum(cache_write) AS cache_write,
       min(timestamp) AS first_seen,
       max(timestamp) AS last_seen
FROM counted_usage
WHERE cost_source = 'unpriced'
GROUP BY provider, model
ORDER BY records DESC, provider NULLS LAST, model NULLS LAST

-- name: tool_calls
-- Tool calls per tool name: toolCall blocks of assistant messages, joined
-- to the toolResult messages of the same file by tool call id (a result is
-- a result whatever its content: [], missing or a string). Entries
-- copied from an older session (fork_copy_of) are left out, so a forked
-- call is counted once. errors counts results with isError; output_bytes
-- sums the byte_size of the results' blocks (0 for a result without any).
WITH calls AS (
  SELECT b.file_id, b.tool_call_id, b.tool_name
  FROM content_blocks b
  JOIN entries e USING (file_id, entry_index)
  WHERE b.block_type = 'toolCall' AND e.fork_copy_of IS NULL
), results AS (
  SELECT e.file_id, e.tool_call_id,
         bool_or(e.is_error) AS is_error,
         sum(b.byte_size) AS output_bytes
  FROM entries e
  LEFT JOIN content_blocks b USING (file_id, entry_index)
  WHERE e.role = 'toolResult' AND e.fork_copy_of IS NULL AND e.tool_call_id IS NOT NULL
  GROUP BY e.file_id, e.tool_call_id
)
SELECT c.tool_name,
       count(*) AS calls,
       count(r.tool_call_id) AS results,
       count(*) FILTER (WHERE r.is_error) AS errors,
       coalesce(sum(r.output_bytes), 0) AS output_bytes
FROM calls c
LEFT JOIN results r ON r.file_id = c.file_id AND r.tool_call_id = c.tool_call_id
GROUP BY c.tool_name
ORDER BY calls DESC, c.tool_name NULLS LAST

-- name: subagent_rollups
-- Subagent roll-ups (SPEC.md §7.3): tool results whose usage rolls up
-- child sessions' spend, one row each, with the children they name (one
-- line each; how: rollup_link) and, when children were read
-- (child_session_id not NULL, one line per child read), their own counted
-- records and cost. A roll-up with a child read is not counted (counted
-- false): the children's records are. A roll-up naming several children
-- read only in part counts through its part rows (the children not read)
-- and its rest row: counted_records and counted_cost are what counts of
-- the roll-up's own rows (all of it when no child was read, nothing when
-- all were).
SELECT u.session_id AS parent_session_id,
       u.entry_id,
       u.timestamp,
       coalesce(u.rollup_child_id, u.rollup_child_path) AS named_child,
       u.rollup_link,
       u.rollup_of_session_id AS child_session_id,
       u.counted,
       u.input, u.output, u.cache_read, u.cache_write,
       u.cost_total AS rollup_cost,
       coalesce(p.records, 0) AS counted_records,
       p.cost_total AS counted_cost,
       c.records AS child_records,
       c.cost_total AS child_cost
FROM usage u
LEFT JOIN (SELECT x.file_id, x.entry_index, sum(s.records) AS records, sum(s.cost_total) AS cost_total
           FROM (SELECT file_id, entry_index, unnest(string_split(rollup_of_session_id, chr(10))) AS child
                 FROM usage WHERE rollup_of_session_id IS NOT NULL AND rollup_part IS NULL) x
           JOIN (SELECT session_id, count(*) AS records, sum(cost_total) AS cost_total
                 FROM counted_usage GROUP BY session_id) s ON s.session_id = x.child
           GROUP BY x.file_id, x.entry_index) c ON c.file_id = u.file_id AND c.entry_index = u.entry_index
LEFT JOIN (SELECT file_id, entry_index, count(*) AS records, sum(cost_total) AS cost_total
           FROM usage WHERE counted GROUP BY file_id, entry_index) p ON p.file_id = u.file_id AND p.entry_index = u.entry_index
WHERE (u.rollup_child_id IS NOT NULL OR u.rollup_child_path IS NOT NULL) AND u.rollup_part IS NULL
ORDER BY u.timestamp NULLS LAST, u.session_id, u.entry_id

-- name: rejected_files
-- Session files whose records are not in the tables (SPEC.md §1.5: not a
-- session, a future or unrecognized version, unreadable), with the first
-- error that decided it; and the paths discovery could not read at all (an
-- unreadable directory, a non-regular file named as a path: the path-level
-- ingest_issues of severity error, which have no files row), with status
-- unreadable, as `sessions-etl validate` reports them. `sessions-etl
-- validate` tells more. Empty files are not listed.
WITH first_issue AS (
  SELECT file_id, line_no, code, message
  FROM ingest_issues
  WHERE file_id IS NOT NULL
  QUALIFY row_number() OVER (PARTITION BY file_id ORDER BY severity = 'error' DESC, line_no NULLS FIRST, code) = 1
), path_error AS (
  SELECT path, line_no, code, message
  FROM ingest_issues
  WHERE file_id IS NULL AND severity = 'error'
  QUALIFY row_number() OVER (PARTITION BY path ORDER BY line_no NULLS FIRST, code, message) = 1
)
SELECT f.path, f.status, i.line_no, i.code, i.message
FROM files f
LEFT JOIN first_issue i USING (file_id)
WHERE f.status <> 'empty' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.file_id = f.file_id)
UNION ALL
SELECT p.path, 'unreadable' AS status, p.line_no, p.code, p.message
FROM path_error p
WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.path = p.path)
ORDER BY path
