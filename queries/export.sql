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

-- name: derive_tool_uses_fork_copy
-- tool_uses.fork_copy (a ModeUsage database, which has tool_uses instead
-- of entries and content_blocks): the block's entry is a fork copy when
-- the oldest file (in session_order's order) holding an entry with tool
-- blocks and the same copy_key, or the same content_key, is another file,
-- as derive_fork_copies decides for entries (a fork copies an entry
-- verbatim, so a copy of an entry with tool blocks has them too). The
-- oldest file of a key is arg_min(file_id, ord): ord numbers the files
-- one by one (session_order), so there is no tie. Computed here, once per
-- ingest that changes the files, rather than at every tools report; the
-- tools report and usage_mode_tool_calls filter on NOT fork_copy.
UPDATE tool_uses SET fork_copy = d.fork_copy
FROM (
  SELECT t.file_id, t.entry_index, t.block_index,
         a.first_file <> t.file_id OR coalesce(b.first_file <> t.file_id, false) AS fork_copy
  FROM tool_uses t
  JOIN (SELECT u.copy_key, arg_min(u.file_id, o.ord) AS first_file
        FROM tool_uses u JOIN session_order o USING (file_id)
        GROUP BY u.copy_key) a ON a.copy_key = t.copy_key
  LEFT JOIN (SELECT u.content_key, arg_min(u.file_id, o.ord) AS first_file
             FROM tool_uses u JOIN session_order o USING (file_id)
             WHERE u.content_key IS NOT NULL
             GROUP BY u.content_key) b ON b.content_key = t.content_key
) d
WHERE tool_uses.file_id = d.file_id AND tool_uses.entry_index = d.entry_index
  AND tool_uses.block_index = d.block_index
  AND tool_uses.fork_copy IS DISTINCT FROM d.fork_copy

-- name: usage_mode_tool_calls
-- The tool_calls view (views.sql) of a usage-mode database, which has
-- tool_uses instead of content_blocks and entries: the same query over the
-- same rows, fork copies as derive_tool_uses_fork_copy marks them.
WITH calls AS (
  SELECT file_id, tool_call_id, tool_name
  FROM tool_uses
  WHERE is_call AND NOT fork_copy
), results AS (
  SELECT file_id, tool_call_id,
         bool_or(is_error) AS is_error,
         sum(byte_size) AS output_bytes
  FROM tool_uses
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
-- is the session of the earliest such row. A row whose spend is counted
-- elsewhere (rollup_covered, derive_rollups: a subagent roll-up whose
-- children were read, SPEC.md §7.3) is not counted either. The rows a
-- roll-up is split into (rollup_part) share its entry: they are never
-- copies of each other, and copies of another file's rows all alike.
UPDATE usage SET counted = d.counted, duplicate_of_session_id = d.dup
FROM (
  SELECT file_id, entry_index, rollup_part,
         NOT (copy_a OR copy_b) AND NOT rollup_covered AS counted,
         CASE
           WHEN copy_a AND (NOT copy_b OR a_ord < b_ord OR (a_ord = b_ord AND a_idx < b_idx)) THEN a_session
           WHEN copy_b THEN b_session
         END AS dup
  FROM (
    SELECT file_id, entry_index, rollup_part,
           has_id AND (a_ord < ord OR (a_ord = ord AND a_idx < entry_index)) AS copy_a,
           b_ord IS NOT NULL AND (b_ord < ord OR (b_ord = ord AND b_idx < entry_index)) AS copy_b,
           a_ord, a_idx, a_session, b_ord, b_idx, b_session, rollup_covered
    FROM (
      SELECT u.file_id, u.entry_index, u.rollup_part, o.ord, u.copy_key_a IS NOT NULL AS has_id, u.rollup_covered,
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
WHERE usage.file_id = d.file_id AND usage.entry_index = d.entry_index AND usage.rollup_part IS NOT DISTINCT FROM d.rollup_part
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
-- SPEC.md §4, the rules of rules.sql: recorded uses usage.cost; calculate
-- prices the tokens; auto uses the recorded cost when present and non-zero
-- for non-zero tokens, else calculates. Without a cost the row is unpriced
-- and its cost columns NULL.
-- Applied to rows not costed yet (cost_source '': rest rows derive_rollup_rest
-- changed) or, when $2, to all rows.
UPDATE usage SET
  cost_source      = s.src,
  cost_input       = CASE s.src WHEN 'recorded' THEN recorded_cost_input       WHEN 'calculated' THEN calculated_cost_input END,
  cost_output      = CASE s.src WHEN 'recorded' THEN recorded_cost_output      WHEN 'calculated' THEN calculated_cost_output END,
  cost_cache_read  = CASE s.src WHEN 'recorded' THEN recorded_cost_cache_read  WHEN 'calculated' THEN calculated_cost_cache_read END,
  cost_cache_write = CASE s.src WHEN 'recorded' THEN recorded_cost_cache_write WHEN 'calculated' THEN calculated_cost_cache_write END,
  cost_total       = CASE s.src WHEN 'recorded' THEN recorded_cost_total       WHEN 'calculated' THEN calculated_cost_total END
FROM (
  SELECT file_id, entry_index, rollup_part,
         coalesce(CASE $1
                    WHEN 'recorded' THEN {{cost_source_recorded}}
                    WHEN 'calculate' THEN {{cost_source_calculate}}
                    ELSE {{cost_source_auto}}
                  END, 'unpriced') AS src
  FROM usage
  WHERE cost_source = '' OR $2
) s
WHERE usage.file_id = s.file_id AND usage.entry_index = s.entry_index AND usage.rollup_part IS NOT DISTINCT FROM s.rollup_part

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
-- usage.rollup_of_session_id and rollup_covered (SPEC.md §7.3). A subagent
-- roll-up is a tool result's usage whose details, or else whose tool
-- call's arguments, name child sessions (rollup_child_id and
-- rollup_child_path, one line per child, on the roll-up's own row:
-- rollup_part NULL). Each child is found like a parent path (§2.1): by the
-- named id, else the session at the named path, else a session whose file
-- has the same name (files move between machines and stores), else the id
-- in a <ts>_<id>.jsonl file name. A child named only by the tool call
-- (rollup_link = 'tool_call') counts as found only when its header points
-- back at the roll-up's session; a child that is the roll-up's own session
-- is not found. Then, for the rows of the roll-up's entry:
--   - the roll-up (rollup_part NULL) and its rest row (0):
--     rollup_of_session_id = the children found, one line each in the
--     order named (NULL when none is);
--   - the part of the k-th child (rollup_part k): that child when found;
--   - rollup_covered: the roll-up when one child or more was found (the
--     children's records stand for them; a roll-up naming several has part
--     and rest rows for the others); a part when its child was found or
--     when none was (the roll-up counts whole); a rest row unless some but
--     not all children were found (derive_rollup_rest then decides).
-- Run before derive_counted.
UPDATE usage SET rollup_of_session_id = r.of, rollup_covered = r.covered
FROM (
  WITH named AS (
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
          WHERE rollup_part IS NULL AND (rollup_child_id IS NOT NULL OR rollup_child_path IS NOT NULL)
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
  ), rollup AS (
    SELECT file_id, entry_index, count(*) AS n, count(child) AS nfound,
           string_agg(child, chr(10) ORDER BY k) AS found
    FROM named
    GROUP BY file_id, entry_index
  )
  SELECT u.file_id, u.entry_index, u.rollup_part,
         CASE WHEN u.rollup_part IS NULL OR u.rollup_part = 0 THEN r.found ELSE p.child END AS of,
         CASE WHEN u.rollup_part IS NULL THEN r.nfound > 0
              WHEN u.rollup_part = 0 THEN r.nfound = 0 OR r.nfound = r.n
              ELSE p.child IS NOT NULL OR r.nfound = 0 END AS covered
  FROM usage u
  JOIN rollup r USING (file_id, entry_index)
  LEFT JOIN named p ON p.file_id = u.file_id AND p.entry_index = u.entry_index AND p.k = u.rollup_part
) r
WHERE usage.file_id = r.file_id AND usage.entry_index = r.entry_index AND usage.rollup_part IS NOT DISTINCT FROM r.rollup_part
  AND (usage.rollup_of_session_id IS DISTINCT FROM r.of OR usage.rollup_covered IS DISTINCT FROM r.covered)

-- name: derive_rollup_rest
-- The rest row (rollup_part 0) of a roll-up naming several children
-- (SPEC.md §7.3). When some but not all of its children were read, each of
-- its token counts and recorded costs is the roll-up's less what stands for
-- its children elsewhere, never below 0: every part the roll-up gives
-- (rollup_part k ≥ 1, counted or not), and for each child read that has no
-- part, the child session's counted usage (as recorded cost its recorded,
-- else calculated, cost). Its calculated costs are its tokens at the
-- roll-up's rates (each kind's calculated cost in proportion to the tokens
-- of that kind left), not a difference: the roll-up is priced as one
-- request at the parent's model, so its long-context tier (a sum of
-- children crossing 200k prompt tokens) or model differs from the parts'
-- and children's, and a difference would leave a cost with no token behind
-- it. So a roll-up read in part counts each spend once: the children read
-- through their own records, the others through their parts, and through
-- the rest what no part names. Otherwise the rest row is a copy of the
-- roll-up. The rest is covered (not counted) unless some but not all
-- children were read and something is left (a token or a recorded cost);
-- counted follows (a copy stays
-- uncounted: duplicate_of_session_id, derive_counted). A changed rest row
-- is re-costed (cost_source '', then apply_cost_mode). Costs are rounded
-- to 1e-9 USD, so that differences of sums leave no dust. Run after
-- derive_counted.
UPDATE usage SET input = d.input, output = d.output, cache_read = d.cache_read, cache_write = d.cache_write,
  cache_write_1h = d.cache_write_1h, total_tokens = d.total_tokens,
  recorded_cost_input = d.rci, recorded_cost_output = d.rco, recorded_cost_cache_read = d.rcr,
  recorded_cost_cache_write = d.rcw, recorded_cost_total = d.rct,
  calculated_cost_input = d.cci, calculated_cost_output = d.cco, calculated_cost_cache_read = d.ccr,
  calculated_cost_cache_write = d.ccw, calculated_cost_total = d.cct,
  rollup_covered = d.covered,
  counted = usage.duplicate_of_session_id IS NULL AND NOT d.covered,
  cost_source = ''
FROM (
  WITH w AS (
    -- roll-ups split into parts and a rest row, and whether they were read in part
    SELECT u.*,
           rollup_of_session_id IS NOT NULL
             AND len(string_split(rollup_of_session_id, chr(10)))
                 < greatest(len(string_split(coalesce(rollup_child_id, ''), chr(10))),
                            len(string_split(coalesce(rollup_child_path, ''), chr(10)))) AS partial
    FROM usage u
    WHERE u.rollup_part IS NULL AND u.rollup_of_session_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM usage r WHERE r.rollup_part = 0 AND r.file_id = u.file_id AND r.entry_index = u.entry_index)
  ), parts AS (
    SELECT file_id, entry_index, input, output, cache_read, cache_write, cache_write_1h, total_tokens,
           recorded_cost_input, recorded_cost_output, recorded_cost_cache_read, recorded_cost_cache_write, recorded_cost_total,
           calculated_cost_input, calculated_cost_output, calculated_cost_cache_read, calculated_cost_cache_write, calculated_cost_total
    FROM usage p
    WHERE p.rollup_part > 0
      AND EXISTS (SELECT 1 FROM w WHERE w.partial AND w.file_id = p.file_id AND w.entry_index = p.entry_index)
  ), read_unsplit AS (
    -- children read that have no part: their own counted usage
    WITH f AS (
      SELECT DISTINCT file_id, entry_index, unnest(string_split(rollup_of_session_id, chr(10))) AS child
      FROM w WHERE partial
    )
    SELECT f.file_id, f.entry_index, c.*
    FROM f
    JOIN (SELECT session_id,
                 sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
                 sum(cache_write_1h) AS cache_write_1h, sum(total_tokens) AS total_tokens,
                 sum(recorded_cost_input) AS recorded_cost_input, sum(recorded_cost_output) AS recorded_cost_output,
                 sum(recorded_cost_cache_read) AS recorded_cost_cache_read, sum(recorded_cost_cache_write) AS recorded_cost_cache_write,
                 sum(recorded_cost_total) AS recorded_cost_total,
                 sum(calculated_cost_input) AS calculated_cost_input, sum(calculated_cost_output) AS calculated_cost_output,
                 sum(calculated_cost_cache_read) AS calculated_cost_cache_read, sum(calculated_cost_cache_write) AS calculated_cost_cache_write,
                 sum(calculated_cost_total) AS calculated_cost_total
          FROM usage WHERE counted AND session_id IN (SELECT child FROM f) GROUP BY session_id) c ON c.session_id = f.child
    WHERE NOT EXISTS (SELECT 1 FROM usage p WHERE p.file_id = f.file_id AND p.entry_index = f.entry_index
                        AND p.rollup_part > 0 AND p.rollup_of_session_id = f.child)
  ), stand AS (
    SELECT file_id, entry_index,
           sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
           sum(cache_write_1h) AS cache_write_1h, sum(total_tokens) AS total_tokens,
           sum(coalesce(recorded_cost_input, calculated_cost_input, 0)) AS rci,
           sum(coalesce(recorded_cost_output, calculated_cost_output, 0)) AS rco,
           sum(coalesce(recorded_cost_cache_read, calculated_cost_cache_read, 0)) AS rcr,
           sum(coalesce(recorded_cost_cache_write, calculated_cost_cache_write, 0)) AS rcw,
           sum(coalesce(recorded_cost_total, calculated_cost_total, 0)) AS rct
    FROM (SELECT * FROM parts UNION ALL BY NAME SELECT * EXCLUDE (session_id) FROM read_unsplit)
    GROUP BY file_id, entry_index
  ), v AS (
    SELECT w.file_id, w.entry_index, w.partial,
           CASE WHEN w.partial THEN greatest(0, w.input - coalesce(s.input, 0)) ELSE w.input END AS input,
           CASE WHEN w.partial THEN greatest(0, w.output - coalesce(s.output, 0)) ELSE w.output END AS output,
           CASE WHEN w.partial THEN greatest(0, w.cache_read - coalesce(s.cache_read, 0)) ELSE w.cache_read END AS cache_read,
           CASE WHEN w.partial THEN greatest(0, w.cache_write - coalesce(s.cache_write, 0)) ELSE w.cache_write END AS cache_write,
           CASE WHEN w.partial THEN greatest(0, w.cache_write_1h - coalesce(s.cache_write_1h, 0)) ELSE w.cache_write_1h END AS cache_write_1h,
           CASE WHEN w.partial THEN greatest(0, w.total_tokens - coalesce(s.total_tokens, 0)) ELSE w.total_tokens END AS total_tokens,
           CASE WHEN w.partial THEN greatest(0, round(w.recorded_cost_input - coalesce(s.rci, 0), 9)) ELSE w.recorded_cost_input END AS rci,
           CASE WHEN w.partial THEN greatest(0, round(w.recorded_cost_output - coalesce(s.rco, 0), 9)) ELSE w.recorded_cost_output END AS rco,
           CASE WHEN w.partial THEN greatest(0, round(w.recorded_cost_cache_read - coalesce(s.rcr, 0), 9)) ELSE w.recorded_cost_cache_read END AS rcr,
           CASE WHEN w.partial THEN greatest(0, round(w.recorded_cost_cache_write - coalesce(s.rcw, 0), 9)) ELSE w.recorded_cost_cache_write END AS rcw,
           CASE WHEN w.partial THEN greatest(0, round(w.recorded_cost_total - coalesce(s.rct, 0), 9)) ELSE w.recorded_cost_total END AS rct
    FROM w LEFT JOIN stand s USING (file_id, entry_index)
  ), c AS (
    -- calculated costs: the rest's tokens at the roll-up's rates (not a
    -- difference of prices: the roll-up is priced as one request at the
    -- parent's model, so its long-context tier or model can differ from the
    -- parts' and the children's, and a difference would leave a cost with
    -- no token behind it)
    SELECT v.*,
           CASE WHEN v.partial THEN CASE WHEN w.input > 0 THEN round(w.calculated_cost_input * v.input / w.input, 9)
                                         ELSE w.calculated_cost_input * 0 END
                ELSE w.calculated_cost_input END AS cci,
           CASE WHEN v.partial THEN CASE WHEN w.output > 0 THEN round(w.calculated_cost_output * v.output / w.output, 9)
                                         ELSE w.calculated_cost_output * 0 END
                ELSE w.calculated_cost_output END AS cco,
           CASE WHEN v.partial THEN CASE WHEN w.cache_read > 0 THEN round(w.calculated_cost_cache_read * v.cache_read / w.cache_read, 9)
                                         ELSE w.calculated_cost_cache_read * 0 END
                ELSE w.calculated_cost_cache_read END AS ccr,
           CASE WHEN v.partial THEN CASE WHEN w.cache_write > 0 THEN round(w.calculated_cost_cache_write * v.cache_write / w.cache_write, 9)
                                         ELSE w.calculated_cost_cache_write * 0 END
                ELSE w.calculated_cost_cache_write END AS ccw,
           w.calculated_cost_total AS whole_cct
    FROM v JOIN w USING (file_id, entry_index)
  )
  SELECT * EXCLUDE (whole_cct),
         CASE WHEN partial AND whole_cct IS NOT NULL
              THEN round(coalesce(cci, 0) + coalesce(cco, 0) + coalesce(ccr, 0) + coalesce(ccw, 0), 9)
              ELSE whole_cct END AS cct,
         -- nothing left: no token and no recorded cost (a calculated cost
         -- is a price of tokens, so it is 0 too)
         NOT partial OR (input = 0 AND output = 0 AND cache_read = 0 AND cache_write = 0 AND total_tokens = 0
                         AND coalesce(rct, 0) = 0) AS covered
  FROM c
) d
WHERE usage.file_id = d.file_id AND usage.entry_index = d.entry_index AND usage.rollup_part = 0
  AND (usage.input IS DISTINCT FROM d.input OR usage.output IS DISTINCT FROM d.output
       OR usage.cache_read IS DISTINCT FROM d.cache_read OR usage.cache_write IS DISTINCT FROM d.cache_write
       OR usage.cache_write_1h IS DISTINCT FROM d.cache_write_1h OR usage.total_tokens IS DISTINCT FROM d.total_tokens
       OR usage.recorded_cost_input IS DISTINCT FROM d.rci OR usage.recorded_cost_output IS DISTINCT FROM d.rco
       OR usage.recorded_cost_cache_read IS DISTINCT FROM d.rcr OR usage.recorded_cost_cache_write IS DISTINCT FROM d.rcw
       OR usage.recorded_cost_total IS DISTINCT FROM d.rct OR usage.calculated_cost_input IS DISTINCT FROM d.cci
       OR usage.calculated_cost_output IS DISTINCT FROM d.cco OR usage.calculated_cost_cache_read IS DISTINCT FROM d.ccr
       OR usage.calculated_cost_cache_write IS DISTINCT FROM d.ccw OR usage.calculated_cost_total IS DISTINCT FROM d.cct
       OR usage.rollup_covered IS DISTINCT FROM d.covered OR usage.counted IS DISTINCT FROM (usage.duplicate_of_session_id IS NULL AND NOT d.covered))
