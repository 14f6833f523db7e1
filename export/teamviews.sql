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
-- copies counted once: duplicate_of_session_id). A record that several
-- machines hold (a session synced to two laptops, a fork continued on
-- another machine) has the same identity on each: its entry id and entry
-- timestamp (copy_key_a), or for v1 records without id its kind,
-- timestamps and tokens (copy_key_b). It is counted on one machine only:
-- the one whose copy is in the session with the oldest header (then the
-- machine name). A session id reused on two machines for different entries
-- is not a copy: its distinct entries count.
--
-- Subagent roll-ups (SPEC.md §7.3) are decided again over every machine,
-- as if one home held all their sessions: a child named by a roll-up
-- (rollup_child_id, rollup_child_path: one line per child) is read when a
-- session of any machine has its id, its path, its file name or the id in
-- its <ts>_<id>.jsonl name (a child named only by the tool call, also when
-- its header points back at the roll-up's session). A roll-up with a child
-- read anywhere is not counted; with all its children read, nor are its
-- parts and rest row; with some, the parts of the others count and the
-- rest row is the roll-up less every part and the counted usage of the
-- children read that have no part (never below 0; costed as --cost auto;
-- not counted when nothing is left). So a child read on one machine is
-- never counted again through its parent's roll-up on another. A roll-up
-- may name up to 1000 children here. Days are UTC. The functions used
-- (split_part, regexp_extract, chr, greatest, first_value) have these
-- names and meanings in DuckDB, Spark SQL and Trino; only DuckDB runs this
-- file in the tests.

CREATE OR REPLACE VIEW all_usage AS
SELECT * FROM read_parquet('usage/**/*.parquet', hive_partitioning = true); -- LOCATION

CREATE OR REPLACE VIEW all_sessions AS
SELECT * FROM read_parquet('sessions/**/*.parquet', hive_partitioning = true); -- LOCATION

-- Billed records counted once across every machine of the root: the
-- usage table's columns (not the partition key: month, day or source),
-- the session's project and created_at. A rest row of a roll-up read in
-- part carries its reduced tokens and costs; its rollup_of_session_id
-- names the children read on its own machine.
CREATE OR REPLACE VIEW counted_usage AS
WITH ss AS (
  -- every machine's sessions, with their file's name and their parent's
  -- (the last element of the path, / or \)
  SELECT machine, file_id, session_id, path, created_at, project,
         parent_session_id, parent_session_path, parent_resolved_by,
         nullif(regexp_extract(replace(path, chr(92), '/'), '[^/]+$', 0), '') AS base,
         nullif(regexp_extract(replace(parent_session_path, chr(92), '/'), '[^/]+$', 0), '') AS parent_base
  FROM all_sessions
), by_id AS (
  SELECT DISTINCT session_id FROM ss
), by_path AS (
  SELECT path, min(session_id) AS session_id FROM ss GROUP BY path
), by_name AS (
  SELECT base, min(session_id) AS session_id FROM ss GROUP BY base
), parents AS (
  -- each session's parent, one named by path resolved across every
  -- machine: the session at that path, else one whose file has the same
  -- name, else the id in a <ts>_<id>.jsonl name
  SELECT DISTINCT s.session_id,
         CASE WHEN s.parent_session_path IS NULL OR s.parent_resolved_by = 'header' THEN s.parent_session_id
              ELSE coalesce(p.session_id, n.session_id, nullif(regexp_extract(s.parent_base, '^[^_]*_(.+)[.]jsonl$', 1), ''))
         END AS parent_session_id
  FROM ss s
  LEFT JOIN by_path p ON p.path = s.parent_session_path
  LEFT JOIN by_name n ON n.base = s.parent_base
), un AS (
  -- every machine's usage: the columns counting needs
  SELECT machine, file_id, entry_index, session_id, rollup_part, rollup_link, rollup_child_id, rollup_child_path,
         rollup_covered, copy_key_a, copy_key_b, duplicate_of_session_id,
         input, output, cache_read, cache_write, cache_write_1h, total_tokens,
         recorded_cost_input, recorded_cost_output, recorded_cost_cache_read, recorded_cost_cache_write, recorded_cost_total,
         calculated_cost_input, calculated_cost_output, calculated_cost_cache_read, calculated_cost_cache_write, calculated_cost_total
  FROM all_usage
), ru AS (
  -- the rows of subagent roll-ups: the roll-up (naming its children), its
  -- parts and its rest row
  SELECT *
  FROM un
  WHERE rollup_part IS NOT NULL OR rollup_child_id IS NOT NULL OR rollup_child_path IS NOT NULL
), named AS (
  -- each child a roll-up names: the k-th line of rollup_child_id and
  -- rollup_child_path (up to 1000 children a roll-up)
  SELECT c.*, nullif(regexp_extract(c.cbase, '^[^_]*_(.+)[.]jsonl$', 1), '') AS id_in_name
  FROM (
    SELECT u.machine, u.file_id, u.entry_index, u.session_id, u.rollup_link, d.k,
           nullif(split_part(u.ids, chr(10), d.k), '') AS cid,
           nullif(split_part(u.paths, chr(10), d.k), '') AS cpath,
           nullif(regexp_extract(replace(split_part(u.paths, chr(10), d.k), chr(92), '/'), '[^/]+$', 0), '') AS cbase
    FROM (
      SELECT l.*, greatest(length(l.ids) - length(replace(l.ids, chr(10), '')),
                           length(l.paths) - length(replace(l.paths, chr(10), ''))) + 1 AS lines
      FROM (
        SELECT machine, file_id, entry_index, session_id, rollup_link,
               coalesce(rollup_child_id, '') AS ids, coalesce(rollup_child_path, '') AS paths
        FROM ru
        WHERE rollup_part IS NULL
      ) l
    ) u
    JOIN (SELECT a.d * 100 + b.d * 10 + c.d + 1 AS k
          FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS a(d) CROSS JOIN (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS b(d) CROSS JOIN (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS c(d)) d
      ON d.k <= u.lines
  ) c
), rc AS (
  -- the session read for each child on any machine (child; NULL when none
  -- is): by its id, else its path, else its file's name, else the id in
  -- that name, not the roll-up's own session; a child named only by the
  -- tool call only when its header points back at the roll-up's session
  SELECT f.machine, f.file_id, f.entry_index, f.k,
         CASE WHEN f.rollup_link = 'tool_call' AND back.session_id IS NULL THEN NULL ELSE f.found END AS child
  FROM (
    SELECT n.*, nullif(coalesce(i.session_id, p.session_id, b.session_id, j.session_id), n.session_id) AS found
    FROM named n
    LEFT JOIN by_id i ON i.session_id = n.cid
    LEFT JOIN by_path p ON p.path = n.cpath
    LEFT JOIN by_name b ON b.base = n.cbase
    LEFT JOIN by_id j ON j.session_id = n.id_in_name
  ) f
  LEFT JOIN parents back ON back.session_id = f.found AND back.parent_session_id = f.session_id
), r AS (
  -- each roll-up: how many children it names, how many were read
  SELECT machine, file_id, entry_index, count(*) AS n, count(child) AS nfound
  FROM rc GROUP BY machine, file_id, entry_index
), o AS (
  -- every record counted once across machines (its key, and what the
  -- rest rows below need); a roll-up's rows covered as in one home holding
  -- every machine's sessions (the rest row of a roll-up read in part still
  -- whole: below)
  SELECT *
  FROM (
    SELECT c.*,
           first_value(c.machine) OVER (
             PARTITION BY CASE WHEN c.copy_key_a IS NULL THEN 1 ELSE 0 END, coalesce(c.copy_key_a, c.copy_key_b)
             ORDER BY c.session_created_at NULLS LAST, c.machine) AS counted_on
    FROM (
      SELECT u.machine, u.file_id, u.entry_index, u.rollup_part, u.session_id, u.copy_key_a, u.copy_key_b,
             u.duplicate_of_session_id, u.input, u.output, u.cache_read, u.cache_write, u.cache_write_1h, u.total_tokens,
             u.recorded_cost_input, u.recorded_cost_output, u.recorded_cost_cache_read, u.recorded_cost_cache_write, u.recorded_cost_total,
             u.calculated_cost_input, u.calculated_cost_output, u.calculated_cost_cache_read, u.calculated_cost_cache_write, u.calculated_cost_total,
             s.project AS project, s.created_at AS session_created_at,
             CASE WHEN r.n IS NULL THEN u.rollup_covered
                  WHEN u.rollup_part IS NULL THEN r.nfound > 0
                  WHEN u.rollup_part = 0 THEN r.nfound = 0 OR r.nfound = r.n
                  ELSE p.child IS NOT NULL OR r.nfound = 0 END AS team_covered,
             r.n IS NOT NULL AND u.rollup_part = 0 AND r.nfound > 0 AND r.nfound < r.n AS team_partial
      FROM un u
      LEFT JOIN ss s ON s.machine = u.machine AND s.file_id = u.file_id
      LEFT JOIN r ON r.machine = u.machine AND r.file_id = u.file_id AND r.entry_index = u.entry_index
      LEFT JOIN rc p
             ON p.machine = u.machine AND p.file_id = u.file_id AND p.entry_index = u.entry_index AND p.k = u.rollup_part
    ) c
    WHERE c.duplicate_of_session_id IS NULL AND NOT c.team_covered
  ) x
  WHERE machine = counted_on
), parts AS (
  -- the parts of the roll-ups (rollup_part k >= 1), counted or not
  SELECT machine, file_id, entry_index, rollup_part AS k, input, output, cache_read, cache_write, cache_write_1h, total_tokens,
         coalesce(recorded_cost_input, calculated_cost_input, 0) AS rci,
         coalesce(recorded_cost_output, calculated_cost_output, 0) AS rco,
         coalesce(recorded_cost_cache_read, calculated_cost_cache_read, 0) AS rcr,
         coalesce(recorded_cost_cache_write, calculated_cost_cache_write, 0) AS rcw,
         coalesce(recorded_cost_total, calculated_cost_total, 0) AS rct
  FROM ru
  WHERE rollup_part > 0
), unsplit AS (
  -- the children read of roll-ups read in part that have no part
  SELECT DISTINCT ch.machine, ch.file_id, ch.entry_index, ch.child
  FROM rc ch
  JOIN r ON r.machine = ch.machine AND r.file_id = ch.file_id AND r.entry_index = ch.entry_index AND r.nfound < r.n
  LEFT JOIN (SELECT DISTINCT pc.machine, pc.file_id, pc.entry_index, pc.child
             FROM rc pc
             JOIN parts pp ON pp.machine = pc.machine AND pp.file_id = pc.file_id AND pp.entry_index = pc.entry_index AND pp.k = pc.k
             WHERE pc.child IS NOT NULL) hp
         ON hp.machine = ch.machine AND hp.file_id = ch.file_id AND hp.entry_index = ch.entry_index AND hp.child = ch.child
  WHERE ch.child IS NOT NULL AND hp.child IS NULL
), stand AS (
  -- what stands for a roll-up's children elsewhere: its parts, and the
  -- counted usage of its children read that have none
  SELECT machine, file_id, entry_index,
         sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
         sum(cache_write_1h) AS cache_write_1h, sum(total_tokens) AS total_tokens,
         sum(rci) AS rci, sum(rco) AS rco, sum(rcr) AS rcr, sum(rcw) AS rcw, sum(rct) AS rct
  FROM (
    SELECT machine, file_id, entry_index, input, output, cache_read, cache_write, cache_write_1h, total_tokens, rci, rco, rcr, rcw, rct
    FROM parts
    UNION ALL
    SELECT f.machine, f.file_id, f.entry_index, c.input, c.output, c.cache_read, c.cache_write, c.cache_write_1h, c.total_tokens,
           coalesce(c.recorded_cost_input, c.calculated_cost_input, 0),
           coalesce(c.recorded_cost_output, c.calculated_cost_output, 0),
           coalesce(c.recorded_cost_cache_read, c.calculated_cost_cache_read, 0),
           coalesce(c.recorded_cost_cache_write, c.calculated_cost_cache_write, 0),
           coalesce(c.recorded_cost_total, c.calculated_cost_total, 0)
    FROM unsplit f JOIN o c ON c.session_id = f.child
  ) y
  GROUP BY machine, file_id, entry_index
), v AS (
  -- the rest of each roll-up read in part: the roll-up less what stands
  -- for its children, each kind never below 0
  SELECT w.machine, w.file_id, w.entry_index, 0 AS rollup_part,
         w.input AS w_input, w.output AS w_output, w.cache_read AS w_cache_read, w.cache_write AS w_cache_write,
         w.calculated_cost_input AS w_cci, w.calculated_cost_output AS w_cco, w.calculated_cost_cache_read AS w_ccr,
         w.calculated_cost_cache_write AS w_ccw, w.calculated_cost_total AS w_cct,
         greatest(0, w.input - coalesce(s.input, 0)) AS input,
         greatest(0, w.output - coalesce(s.output, 0)) AS output,
         greatest(0, w.cache_read - coalesce(s.cache_read, 0)) AS cache_read,
         greatest(0, w.cache_write - coalesce(s.cache_write, 0)) AS cache_write,
         greatest(0, w.cache_write_1h - coalesce(s.cache_write_1h, 0)) AS cache_write_1h,
         greatest(0, w.total_tokens - coalesce(s.total_tokens, 0)) AS total_tokens,
         greatest(0, round(w.recorded_cost_input - coalesce(s.rci, 0), 9)) AS rci,
         greatest(0, round(w.recorded_cost_output - coalesce(s.rco, 0), 9)) AS rco,
         greatest(0, round(w.recorded_cost_cache_read - coalesce(s.rcr, 0), 9)) AS rcr,
         greatest(0, round(w.recorded_cost_cache_write - coalesce(s.rcw, 0), 9)) AS rcw,
         greatest(0, round(w.recorded_cost_total - coalesce(s.rct, 0), 9)) AS rct
  FROM ru w
  JOIN r ON r.machine = w.machine AND r.file_id = w.file_id AND r.entry_index = w.entry_index AND r.nfound > 0 AND r.nfound < r.n
  LEFT JOIN stand s ON s.machine = w.machine AND s.file_id = w.file_id AND s.entry_index = w.entry_index
  WHERE w.rollup_part IS NULL
), cc AS (
  -- its calculated costs: its tokens at the roll-up's rates
  SELECT v.*,
         CASE WHEN v.w_input > 0 THEN round(v.w_cci * v.input / v.w_input, 9) ELSE v.w_cci * 0 END AS cci,
         CASE WHEN v.w_output > 0 THEN round(v.w_cco * v.output / v.w_output, 9) ELSE v.w_cco * 0 END AS cco,
         CASE WHEN v.w_cache_read > 0 THEN round(v.w_ccr * v.cache_read / v.w_cache_read, 9) ELSE v.w_ccr * 0 END AS ccr,
         CASE WHEN v.w_cache_write > 0 THEN round(v.w_ccw * v.cache_write / v.w_cache_write, 9) ELSE v.w_ccw * 0 END AS ccw
  FROM v
), rest AS (
  -- costed as --cost auto; nothing left (no token, no recorded cost): not counted
  SELECT t.*,
         CASE WHEN t.rct IS NOT NULL AND (t.rct <> 0 OR t.input + t.output + t.cache_read + t.cache_write = 0) THEN 'recorded'
              WHEN t.cct IS NOT NULL THEN 'calculated'
              ELSE 'unpriced' END AS cost_src,
         t.input = 0 AND t.output = 0 AND t.cache_read = 0 AND t.cache_write = 0 AND t.total_tokens = 0
           AND coalesce(t.rct, 0) = 0 AS nothing_left
  FROM (
    SELECT cc.*,
           CASE WHEN cc.w_cct IS NULL THEN NULL
                ELSE round(coalesce(cc.cci, 0) + coalesce(cc.cco, 0) + coalesce(cc.ccr, 0) + coalesce(cc.ccw, 0), 9) END AS cct
    FROM cc
  ) t
)
SELECT {{COUNTED_COLUMNS}},
       o.project AS project, o.session_created_at AS session_created_at
FROM all_usage u
JOIN o ON o.machine = u.machine AND o.file_id = u.file_id AND o.entry_index = u.entry_index
      AND coalesce(o.rollup_part, -1) = coalesce(u.rollup_part, -1)
LEFT JOIN rest r -- the rest rows of roll-ups read in part (o.team_partial)
       ON r.machine = o.machine AND r.file_id = o.file_id AND r.entry_index = o.entry_index AND r.rollup_part = o.rollup_part
WHERE r.machine IS NULL OR NOT r.nothing_left;

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
