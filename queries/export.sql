-- Statements the export runs, in one transaction, after loading the rows of
-- new and changed files, to maintain the columns that depend on more than
-- one file (SPEC.md §3, §4). Each is idempotent: it only writes rows whose
-- value changes.

-- name: session_order
-- The order in which sessions own the records they share with copies
-- (SPEC.md §4): oldest header instant first (missing or unparseable last),
-- then session id, then path.
CREATE OR REPLACE TEMP TABLE session_order AS
SELECT file_id, session_id,
       row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path) AS ord
FROM sessions

-- name: derive_fork_copies
-- entries.fork_copy_of: the session of the oldest file (in session order)
-- holding the same entry, when that is another file. The same entry: the
-- same copy_key (entry id and timestamp), or for v1 entries the same
-- content_key (a v1 fork and its parent, once migrated, have different ids
-- for the entries they share). The oldest file is the least ord (one ord
-- per file), so grouped minimums and hash joins find it (0.6 s for the
-- 609 k entries of a usage-dense 1 GB home; windows carrying each row's
-- file, order and session id took 4.7 s), and only the rows whose value
-- changes reach the UPDATE's join with entries: joining every row ran out
-- of DuckDB's 96 MB inside that home's first export, which then ran again
-- with twice the limit (issue 12 finding 15).
UPDATE entries SET fork_copy_of = d.fork_copy_of
FROM (
  WITH eo AS NOT MATERIALIZED (
    SELECT e.file_id, e.entry_index, e.copy_key, e.content_key, e.fork_copy_of, o.ord
    FROM entries e JOIN session_order o USING (file_id)
  ), a AS (
    SELECT copy_key, min(ord) AS a_ord FROM eo GROUP BY copy_key
  ), b AS (
    SELECT content_key, min(ord) AS b_ord FROM eo WHERE content_key IS NOT NULL GROUP BY content_key
  ), x AS (
    SELECT eo.file_id, eo.entry_index, eo.fork_copy_of AS old,
           CASE WHEN a.a_ord <> eo.ord AND (b.b_ord IS NULL OR b.b_ord = eo.ord OR a.a_ord <= b.b_ord) THEN a.a_ord
                WHEN b.b_ord <> eo.ord THEN b.b_ord END AS owner_ord
    FROM eo
    JOIN a ON a.copy_key IS NOT DISTINCT FROM eo.copy_key
    LEFT JOIN b ON b.content_key = eo.content_key
  )
  SELECT x.file_id, x.entry_index, s.session_id AS fork_copy_of
  FROM x LEFT JOIN session_order s ON s.ord = x.owner_ord
  WHERE x.old IS DISTINCT FROM s.session_id -- only the rows that change join entries below
) d
WHERE entries.file_id = d.file_id AND entries.entry_index = d.entry_index

-- name: tool_uses_fork_copy
-- The rows of tool_uses with fork_copy: the block's entry is a fork copy
-- when an older session (in session_order's order) holds an entry with the
-- same copy_key or content_key, as derive_fork_copies decides for entries;
-- only entries with tool blocks are compared (a fork copies an entry
-- verbatim, so a copy of such an entry has them too). Used by
-- usage_mode_tool_calls and by the tools report of a usage-mode database.
SELECT t.*,
       first_value(t.file_id) OVER (PARTITION BY t.copy_key ORDER BY o.ord, t.entry_index) <> t.file_id
       OR coalesce(t.content_key IS NOT NULL
                   AND first_value(t.file_id) OVER (PARTITION BY t.content_key ORDER BY o.ord, t.entry_index) <> t.file_id, false) AS fork_copy
FROM tool_uses t
JOIN (SELECT file_id, row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path) AS ord FROM sessions) o USING (file_id)

-- name: usage_mode_tool_calls
-- The tool_calls view (views.sql) of a usage-mode database, which has
-- tool_uses instead of content_blocks and entries: the same query over the
-- same rows, fork copies as tool_uses_fork_copy marks them.
WITH t AS (
  {{tool_uses_fork_copy}}
), calls AS (
  SELECT file_id, tool_call_id, tool_name
  FROM t
  WHERE is_call AND NOT fork_copy
), results AS (
  SELECT file_id, tool_call_id,
         bool_or(is_error) AS is_error,
         sum(byte_size) AS output_bytes
  FROM t
  WHERE is_result AND NOT fork_copy
  GROUP BY file_id, tool_call_id
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

-- name: derive_counted
-- usage.counted and duplicate_of_session_id (SPEC.md §4). A billed record
-- is identified by its entry id and entry timestamp (copy_key_a); a v1
-- record, which has no entry id, by its kind, entry timestamp, message
-- timestamp and tokens (copy_key_b). "Earlier" is session order, then
-- entry_index. A row with an entry id is a copy when an earlier row has
-- its copy_key_a, or when an earlier row without an entry id has its
-- copy_key_b (a v1 original of a migrated or imported copy); rows with ids
-- are never matched with each other by copy_key_b, so distinct entries
-- with equal timestamps and tokens all count. A row without an entry id is
-- a copy when any earlier row has its copy_key_b. duplicate_of_session_id
-- is the session of the earliest such row. A subagent roll-up whose child
-- session is in the database (rollup_of_session_id, derive_rollups) is not
-- counted either: the child's own records are (SPEC.md §7.3).
UPDATE usage SET counted = d.counted, duplicate_of_session_id = d.dup
FROM (
  SELECT file_id, entry_index,
         NOT (copy_a OR copy_b) AND rollup_of_session_id IS NULL AS counted,
         CASE
           WHEN copy_a AND (NOT copy_b OR a_ord < b_ord OR (a_ord = b_ord AND a_idx < b_idx)) THEN a_session
           WHEN copy_b THEN b_session
         END AS dup
  FROM (
    SELECT file_id, entry_index,
           has_id AND (a_ord < ord OR (a_ord = ord AND a_idx < entry_index)) AS copy_a,
           b_ord IS NOT NULL AND (b_ord < ord OR (b_ord = ord AND b_idx < entry_index)) AS copy_b,
           a_ord, a_idx, a_session, b_ord, b_idx, b_session, rollup_of_session_id
    FROM (
      SELECT u.file_id, u.entry_index, o.ord, u.copy_key_a IS NOT NULL AS has_id, u.rollup_of_session_id,
             -- the first row with the same entry id and timestamp
             first_value(o.ord) OVER a AS a_ord,
             first_value(u.entry_index) OVER a AS a_idx,
             first_value(o.session_id) OVER a AS a_session,
             -- the first row with the same copy_key_b that may make this
             -- one a copy: any row for a row without id, a row without id
             -- for a row with one
             CASE WHEN u.copy_key_a IS NULL THEN first_value(o.ord) OVER b
                  ELSE first_value(CASE WHEN u.copy_key_a IS NULL THEN o.ord END IGNORE NULLS) OVER b END AS b_ord,
             CASE WHEN u.copy_key_a IS NULL THEN first_value(u.entry_index) OVER b
                  ELSE first_value(CASE WHEN u.copy_key_a IS NULL THEN u.entry_index END IGNORE NULLS) OVER b END AS b_idx,
             CASE WHEN u.copy_key_a IS NULL THEN first_value(o.session_id) OVER b
                  ELSE first_value(CASE WHEN u.copy_key_a IS NULL THEN o.session_id END IGNORE NULLS) OVER b END AS b_session
      FROM usage u JOIN session_order o USING (file_id)
      WINDOW a AS (PARTITION BY u.copy_key_a ORDER BY o.ord, u.entry_index),
             b AS (PARTITION BY u.copy_key_b ORDER BY o.ord, u.entry_index
                   ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    )
  )
) d
WHERE usage.file_id = d.file_id AND usage.entry_index = d.entry_index
  AND (usage.counted IS DISTINCT FROM d.counted OR usage.duplicate_of_session_id IS DISTINCT FROM d.dup)

-- name: resolve_parents
-- sessions.parent_session_id for headers that name their parent by path
-- (pre-v4 parentSession, v1 branchedFrom): the session at that exact path,
-- else a session whose file has the same name (files move between ~/.pi and
-- ~/.atomic), else the id in a <ts>_<id>.jsonl file name; NULL when none
-- applies. Headers with parentSessionId are left alone.
UPDATE sessions SET parent_session_id = r.pid, parent_resolved_by = r.how
FROM (
  SELECT s.file_id,
         coalesce(bypath.session_id, byname.session_id, s.id_in_name) AS pid,
         CASE WHEN bypath.session_id IS NOT NULL THEN 'path'
              WHEN byname.session_id IS NOT NULL THEN 'file_name'
              WHEN s.id_in_name IS NOT NULL THEN 'id_in_file_name' END AS how
  FROM (
    SELECT file_id, parent_session_path,
           regexp_extract(parent_session_path, '[^/\\]+$') AS base,
           nullif(regexp_extract(regexp_extract(parent_session_path, '[^/\\]+$'), '^[^_]*_(.+)\.jsonl$', 1), '') AS id_in_name
    FROM sessions
    WHERE parent_session_path IS NOT NULL AND parent_resolved_by IS DISTINCT FROM 'header'
  ) s
  LEFT JOIN (SELECT path, min(session_id) AS session_id FROM sessions GROUP BY path) bypath
         ON bypath.path = s.parent_session_path
  LEFT JOIN (SELECT regexp_extract(path, '[^/\\]+$') AS base, min(session_id) AS session_id
             FROM sessions GROUP BY ALL) byname
         ON byname.base = s.base
) r
WHERE sessions.file_id = r.file_id
  AND (sessions.parent_session_id IS DISTINCT FROM r.pid OR sessions.parent_resolved_by IS DISTINCT FROM r.how)

-- name: apply_cost_mode
-- cost_* and cost_source for the --cost mode $1 (auto, recorded, calculate),
-- SPEC.md §4: recorded uses usage.cost; calculate prices the tokens; auto
-- uses the recorded cost when present and non-zero for non-zero tokens, else
-- calculates. Without a cost the row is unpriced and its cost columns NULL.
-- Applied to rows not costed yet (cost_source '') or, when $2, to all rows.
UPDATE usage SET
  cost_source      = s.src,
  cost_input       = CASE s.src WHEN 'recorded' THEN recorded_cost_input       WHEN 'calculated' THEN calculated_cost_input END,
  cost_output      = CASE s.src WHEN 'recorded' THEN recorded_cost_output      WHEN 'calculated' THEN calculated_cost_output END,
  cost_cache_read  = CASE s.src WHEN 'recorded' THEN recorded_cost_cache_read  WHEN 'calculated' THEN calculated_cost_cache_read END,
  cost_cache_write = CASE s.src WHEN 'recorded' THEN recorded_cost_cache_write WHEN 'calculated' THEN calculated_cost_cache_write END,
  cost_total       = CASE s.src WHEN 'recorded' THEN recorded_cost_total       WHEN 'calculated' THEN calculated_cost_total END
FROM (
  SELECT file_id, entry_index,
         CASE
           WHEN $1 = 'recorded' THEN CASE WHEN recorded_cost_total IS NOT NULL THEN 'recorded' ELSE 'unpriced' END
           WHEN $1 = 'calculate' THEN CASE WHEN calculated_cost_total IS NOT NULL THEN 'calculated' ELSE 'unpriced' END
           WHEN recorded_cost_total IS NOT NULL
                AND (recorded_cost_total <> 0 OR input + output + cache_read + cache_write = 0) THEN 'recorded'
           WHEN calculated_cost_total IS NOT NULL THEN 'calculated'
           ELSE 'unpriced'
         END AS src
  FROM usage
  WHERE cost_source = '' OR $2
) s
WHERE usage.file_id = s.file_id AND usage.entry_index = s.entry_index

-- name: derive_project_labels
-- sessions.project (SPEC.md §7.5): the last element of the cwd, unless
-- another cwd among all sessions of the database has the same last
-- element: then the shortest path-element suffix that no other cwd has
-- (web/src, api/src); a cwd that is itself a suffix of another (/b/src
-- beside /a/b/src) is labelled by its whole cwd. Elements are split on /
-- and \ (Windows cwds), empty ones dropped, so cwds that differ only in
-- separators or a trailing slash share their label. Computed over every
-- session before any report filter, so --project does not change labels.
UPDATE sessions SET project = l.label
FROM (
  WITH c AS (
    SELECT cwd, list_filter(string_split(replace(cwd, '\', '/'), '/'), x -> x <> '') AS el
    FROM (SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd <> '')
  ), s AS (
    SELECT cwd, el, k, array_to_string(el[len(el) - k + 1:], '/') AS sfx
    FROM (SELECT cwd, el, unnest(range(1, len(el) + 1)) AS k FROM c)
  ), n AS (
    SELECT k, sfx, count(DISTINCT el) AS n FROM s GROUP BY k, sfx
  ), best AS (
    SELECT s.cwd, arg_min(s.sfx, s.k) AS label
    FROM s JOIN n USING (k, sfx)
    WHERE n.n = 1
    GROUP BY s.cwd
  )
  SELECT c.cwd, coalesce(best.label, c.cwd) AS label
  FROM c LEFT JOIN best USING (cwd)
) l
WHERE sessions.cwd = l.cwd AND sessions.project IS DISTINCT FROM l.label

-- name: derive_rollups
-- usage.rollup_of_session_id (SPEC.md §7.3): the scanned sessions a
-- subagent roll-up (a tool result's usage whose details, or else whose
-- tool call's arguments, name child sessions: rollup_child_id and
-- rollup_child_path, one line per child) stands for. Each child is found
-- like a parent path (§2.1): by the named id, else the session at the named
-- path, else a session whose file has the same name (files move between
-- machines and stores), else the id in a <ts>_<id>.jsonl file name. A child
-- named only by the tool call (rollup_link = 'tool_call') counts as found
-- only when its header points back at the roll-up's session. The roll-up
-- stands for its children (one line each, in the order named) when every
-- child it names is found; NULL when one is not in the database (the
-- roll-up is then the only record of that spend and counts) or names the
-- roll-up's own session. Run before derive_counted.
UPDATE usage SET rollup_of_session_id = r.children
FROM (
  SELECT file_id, entry_index,
         CASE WHEN count(*) = count(child) THEN string_agg(child, chr(10) ORDER BY k) END AS children
  FROM (
    SELECT n.file_id, n.entry_index, n.k,
           CASE WHEN n.rollup_link = 'tool_call' AND back.session_id IS NULL THEN NULL ELSE f.found END AS child
    FROM (
      SELECT file_id, entry_index, session_id, rollup_link, k,
             nullif(ids[k], '') AS cid, nullif(paths[k], '') AS cpath,
             regexp_extract(nullif(paths[k], ''), '[^/\\]+$') AS base,
             nullif(regexp_extract(regexp_extract(nullif(paths[k], ''), '[^/\\]+$'), '^[^_]*_(.+)\.jsonl$', 1), '') AS id_in_name
      FROM (
        SELECT file_id, entry_index, session_id, rollup_link, ids, paths,
               unnest(range(1, greatest(len(ids), len(paths)) + 1)) AS k
        FROM (
          SELECT file_id, entry_index, session_id, rollup_link,
                 string_split(coalesce(rollup_child_id, ''), chr(10)) AS ids,
                 string_split(coalesce(rollup_child_path, ''), chr(10)) AS paths
          FROM usage
          WHERE rollup_child_id IS NOT NULL OR rollup_child_path IS NOT NULL
        )
      )
    ) n
    LEFT JOIN (SELECT DISTINCT session_id FROM sessions) byid ON byid.session_id = n.cid
    LEFT JOIN (SELECT path, min(session_id) AS session_id FROM sessions GROUP BY path) bypath ON bypath.path = n.cpath
    LEFT JOIN (SELECT regexp_extract(path, '[^/\\]+$') AS base, min(session_id) AS session_id FROM sessions GROUP BY ALL) byname
           ON byname.base = n.base
    LEFT JOIN (SELECT DISTINCT session_id FROM sessions) byidname ON byidname.session_id = n.id_in_name
    CROSS JOIN LATERAL (SELECT nullif(coalesce(byid.session_id, bypath.session_id, byname.session_id, byidname.session_id), n.session_id) AS found) f
    LEFT JOIN (SELECT DISTINCT session_id, parent_session_id FROM sessions) back
           ON back.session_id = f.found AND back.parent_session_id = n.session_id
  )
  GROUP BY file_id, entry_index
) r
WHERE usage.file_id = r.file_id AND usage.entry_index = r.entry_index
  AND usage.rollup_of_session_id IS DISTINCT FROM r.children
