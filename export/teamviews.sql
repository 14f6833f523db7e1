-- sessions-etl views over a shared Parquet root (schema version {{VERSION}}),
-- written by every `export --partition-by` into the root (SPEC.md §7.7).
--
-- DuckDB, from the root:   cd ROOT && duckdb -c ".read views.sql" -c "SELECT * FROM daily_usage"
-- (or SET file_search_path = 'ROOT' before running this file from elsewhere).
--
-- The only engine-specific lines are the two table locations below
-- (marked LOCATION). Spark SQL: replace each read_parquet(…) by
-- parquet.`ROOT/usage` (partition discovery gives the machine and month
-- columns) and set spark.sql.session.timeZone=UTC; Trino: replace them by
-- the names of two Hive-connector tables over ROOT/usage and ROOT/sessions
-- with partitioned_by = ARRAY['machine', 'month'].
--
-- Counting (SPEC.md §4 across machines): every machine's export marks, in
-- usage.counted, the records it counts among its own files (fork and file
-- copies counted once). A record that several machines hold (a session
-- synced to two laptops, a fork continued on another machine) has the same
-- identity on each: its entry id and entry timestamp (copy_key_a), or for
-- v1 records without id its kind, timestamps and tokens (copy_key_b). It is
-- counted on one machine only: the one whose copy is in the session with
-- the oldest header (then the machine name). A session id reused on two
-- machines for different entries is not a copy: its distinct entries count.
-- Days are UTC.

CREATE OR REPLACE VIEW all_usage AS
SELECT * FROM read_parquet('usage/**/*.parquet', hive_partitioning = true); -- LOCATION

CREATE OR REPLACE VIEW all_sessions AS
SELECT * FROM read_parquet('sessions/**/*.parquet', hive_partitioning = true); -- LOCATION

-- Billed records counted once across every machine of the root.
CREATE OR REPLACE VIEW counted_usage AS
SELECT *
FROM (
  SELECT u.*, s.project AS project, s.created_at AS session_created_at,
         first_value(u.machine) OVER (
           PARTITION BY CASE WHEN u.copy_key_a IS NULL THEN 1 ELSE 0 END, coalesce(u.copy_key_a, u.copy_key_b)
           ORDER BY s.created_at NULLS LAST, u.machine) AS counted_on
  FROM all_usage u
  LEFT JOIN all_sessions s ON s.machine = u.machine AND s.file_id = u.file_id
  WHERE u.counted
) c
WHERE machine = counted_on;

-- Counted usage per UTC day.
CREATE OR REPLACE VIEW daily_usage AS
SELECT CAST(timestamp AT TIME ZONE 'UTC' AS DATE) AS day,
       count(*) AS records,
       sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read,
       sum(cache_write) AS cache_write, sum(total_tokens) AS total_tokens,
       sum(cost_total) AS cost_total,
       sum(CASE WHEN cost_total IS NULL THEN 1 ELSE 0 END) AS unpriced_records
FROM counted_usage
GROUP BY CAST(timestamp AT TIME ZONE 'UTC' AS DATE);

-- Counted usage per model (and provider).
CREATE OR REPLACE VIEW model_usage AS
SELECT provider, model,
       count(*) AS records, sum(input) AS input, sum(output) AS output,
       sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
       sum(total_tokens) AS total_tokens, sum(cost_total) AS cost_total
FROM counted_usage
GROUP BY provider, model;

-- Counted usage per project (the last element of the session's cwd).
CREATE OR REPLACE VIEW project_usage AS
SELECT project,
       count(*) AS records, sum(total_tokens) AS total_tokens, sum(cost_total) AS cost_total
FROM counted_usage
GROUP BY project;

-- Counted usage per machine: which machine each record was counted on.
CREATE OR REPLACE VIEW machine_usage AS
SELECT machine,
       count(*) AS records, sum(total_tokens) AS total_tokens, sum(cost_total) AS cost_total
FROM counted_usage
GROUP BY machine;
