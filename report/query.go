package report

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/queries"
)

// span is a stretch of time, from start on, during which a zone has one UTC
// offset (seconds east of UTC).
type span struct {
	start time.Time
	off   int
}

// maxSpans bounds the offset list handed to DuckDB (a DST zone has two
// changes a year; this is some 25 000 years of them).
const maxSpans = 50_000

// zoneSpans returns the offsets of loc from `from` to `to`: the first span
// starts at from, each next one at a change of offset.
func zoneSpans(loc *time.Location, from, to time.Time) ([]span, error) {
	var out []span
	t := from
	for {
		lt := t.In(loc)
		_, off := lt.Zone()
		if n := len(out); n == 0 || out[n-1].off != off {
			out = append(out, span{start: t, off: off})
		}
		if len(out) > maxSpans {
			return nil, fmt.Errorf("time zone %s changes offset more than %d times between %s and %s", loc, maxSpans, from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		_, end := lt.ZoneBounds()
		if end.IsZero() || end.After(to) || !end.After(t) {
			return out, nil
		}
		t = end
	}
}

// caseSpans is the most spans turned into a CASE expression; more are
// joined as a table with ASOF JOIN (a CASE is several times faster for the
// usual handful of spans; the join stays fast for any number). A variable
// so that tests run both.
var caseSpans = 64

// dayOf is how a query takes the local day of its timestamp column col: a
// CTE to add (or ""), a join to add to the FROM clause (or ""), and the DATE
// expression.
type dayOf struct{ cte, join, expr string }

func dayOfSpans(spans []span, col string) dayOf {
	if len(spans) > caseSpans {
		return dayOf{cte: spansSQL(spans), join: "ASOF LEFT JOIN tz ON " + col + " >= tz.start",
			expr: "CAST(" + col + " + to_seconds(tz.off) AS DATE)"}
	}
	var b strings.Builder
	if len(spans) == 1 {
		b.WriteString(strconv.Itoa(spans[0].off))
	} else {
		b.WriteString("CASE")
		for i := 1; i < len(spans); i++ {
			fmt.Fprintf(&b, " WHEN %s < TIMESTAMP '%s' THEN %d", col, spans[i].start.UTC().Format("2006-01-02 15:04:05.999999"), spans[i-1].off)
		}
		fmt.Fprintf(&b, " ELSE %d END", spans[len(spans)-1].off)
	}
	return dayOf{expr: "CAST(" + col + " + to_seconds(" + b.String() + ") AS DATE)"}
}

// spansSQL is the VALUES list of a `tz(start, off)` CTE. The first span
// starts at the beginning of time so that every instant has an offset.
func spansSQL(spans []span) string {
	var b strings.Builder
	b.WriteString("tz(start, off) AS (VALUES ")
	for i, s := range spans {
		if i > 0 {
			b.WriteString(", ")
		}
		start := "0001-01-01 00:00:00"
		if i > 0 {
			start = s.start.UTC().Format("2006-01-02 15:04:05.999999")
		}
		fmt.Fprintf(&b, "(TIMESTAMP '%s', %d)", start, s.off)
	}
	b.WriteString(")")
	return b.String()
}

// timeRange returns the span of a timestamp column (ok false when every
// value is NULL).
func timeRange(ctx context.Context, db *sql.DB, q string) (from, to time.Time, ok bool, err error) {
	var lo, hi sql.NullTime
	if err := db.QueryRowContext(ctx, q).Scan(&lo, &hi); err != nil {
		return from, to, false, err
	}
	if !lo.Valid || !hi.Valid {
		return from, to, false, nil
	}
	return lo.Time.UTC(), hi.Time.UTC(), true, nil
}

// zoneDay returns how to take the local day in loc of the instants of
// column col, whose range query q gives.
func zoneDay(ctx context.Context, db *sql.DB, loc *time.Location, q, col string) (dayOf, error) {
	from, to, ok, err := timeRange(ctx, db, q)
	if err != nil {
		return dayOf{}, err
	}
	if !ok {
		from, to = time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC()
	}
	spans, err := zoneSpans(loc, from, to)
	if err != nil {
		return dayOf{}, err
	}
	return dayOfSpans(spans, col), nil
}

// withCTE is cte followed by a comma, or "".
func withCTE(cte string) string {
	if cte == "" {
		return ""
	}
	return cte + ",\n"
}

// dims are the grouping columns of a usage query besides the day and the
// model: for session reports the session id, for project reports the
// project and the session id (to count sessions).
func dims(k Kind) (dim1, dim2 string) {
	switch k {
	case Session:
		return "session_id", "NULL"
	case Project:
		return "project", "session_id"
	}
	return "NULL", "NULL"
}

// baseCTE is the report's base relation: queries/report.sql report_base,
// the counted billed records with what a report needs.
func baseCTE() string { return "base AS (\n" + queries.Report("report_base") + "\n)" }

// filterSQL is the WHERE condition of the Source, Project and Model
// filters over base (or any relation with source, project, cwd, provider
// and model columns), with its arguments.
func filterSQL(o *Options) (string, []any) {
	conds := []string{"TRUE"}
	var args []any
	if o.Source != "" {
		conds = append(conds, "source = ?")
		args = append(args, o.Source)
	}
	if o.Project != "" {
		// SPEC.md §7.5: a label, a suffix of whole path elements or a full
		// cwd, / and \ alike; a trailing separator names the same
		// directory: "/home/dev/app/", "/home/dev/app", "dev/app" and "app/"
		// all select /home/dev/app, and "tool" does not select .../tool2.
		p := strings.TrimRight(strings.ReplaceAll(o.Project, `\`, "/"), "/")
		if p == "" {
			conds = append(conds, "(project = ? OR cwd = ?)")
			args = append(args, o.Project, o.Project)
		} else {
			conds = append(conds, `(project = ? OR cwd = ? OR rtrim(replace(cwd, '\', '/'), '/') = ?
  OR ends_with(rtrim(replace(cwd, '\', '/'), '/'), '/' || ?))`)
			args = append(args, o.Project, o.Project, p, p)
		}
	}
	if o.Model != "" {
		m := strings.ToLower(o.Model)
		conds = append(conds, "(contains(lower(model), ?) OR contains(lower(provider || '/' || model), ?))")
		args = append(args, m, m)
	}
	return strings.Join(conds, " AND "), args
}

// daySQL is the condition of the Since/Until filter on a day column.
func daySQL(o *Options) (string, []any) {
	conds := []string{"TRUE"}
	var args []any
	if !o.Since.IsZero() {
		conds = append(conds, "day >= CAST(? AS DATE)")
		args = append(args, o.Since.Format(time.DateOnly))
	}
	if !o.Until.IsZero() {
		conds = append(conds, "day <= CAST(? AS DATE)")
		args = append(args, o.Until.Format(time.DateOnly))
	}
	return strings.Join(conds, " AND "), args
}

// costSQL is the cost and cost source of a base row in mode (SPEC.md §4),
// by the rules of queries/rules.sql (the ones the export applies).
func costSQL(mode export.CostMode) (cost, src string) {
	switch mode {
	case export.CostRecorded:
		return "recorded_cost_total", queries.Rule("cost_source_recorded")
	case export.CostCalculate:
		return "calculated_cost_total", queries.Rule("cost_source_calculate")
	}
	return "CASE WHEN " + queries.Rule("auto_uses_recorded") + " THEN recorded_cost_total ELSE calculated_cost_total END",
		queries.Rule("cost_source_auto")
}

// cell is one group of records: a day (time reports), up to two dimension
// values, a provider/model, and their usage.
type cell struct {
	day         time.Time
	hasDay      bool
	dim1, dim2  string
	key         ModelKey
	first, last time.Time
	u           Usage
}

// usageCellsSQL aggregates in DuckDB (costs from the database's columns).
func usageCellsSQL(ctx context.Context, db *sql.DB, o *Options) ([]cell, error) {
	day, err := zoneDay(ctx, db, o.Location, "SELECT min(timestamp), max(timestamp) FROM usage WHERE counted", "c.ts")
	if err != nil {
		return nil, err
	}
	where, args := filterSQL(o)
	dayWhere, dayArgs := daySQL(o)
	cost, src := costSQL(o.CostMode)
	dim1, dim2 := dims(o.Kind)
	gday := "NULL"
	if o.Kind.timeKind() {
		gday = "day"
	}
	q := `WITH ` + withCTE(day.cte) + baseCTE() + `,
c AS (SELECT *, ` + cost + ` AS cost, ` + src + ` AS src FROM base WHERE ` + where + `),
d AS (SELECT c.*, ` + day.expr + ` AS day FROM c ` + day.join + `)
SELECT ` + gday + ` AS g_day, ` + dim1 + ` AS g_dim1, ` + dim2 + ` AS g_dim2, provider, model,
` + usageAggregates() + `
FROM d WHERE ` + dayWhere + `
GROUP BY ALL
ORDER BY g_day NULLS LAST, g_dim1 NULLS LAST, g_dim2 NULLS LAST, provider NULLS LAST, model NULLS LAST`
	rows, err := db.QueryContext(ctx, q, append(args, dayArgs...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []cell
	for rows.Next() {
		var (
			c                cell
			d                sql.NullTime
			d1, d2, pv, md   sql.NullString
			first, last      sql.NullTime
			costSum          sql.NullString
			unIn, unOut, unR int64
			unW, unTot       int64
		)
		if err := rows.Scan(&d, &d1, &d2, &pv, &md, &first, &last, &c.u.Records,
			&c.u.Input, &c.u.Output, &c.u.CacheRead, &c.u.CacheWrite, &c.u.TotalTokens, &costSum,
			&c.u.RecordedRecords, &c.u.CalculatedRecords, &c.u.Unpriced.Records,
			&unIn, &unOut, &unR, &unW, &unTot); err != nil {
			return nil, err
		}
		c.day, c.hasDay = d.Time, d.Valid
		c.dim1, c.dim2 = d1.String, d2.String
		c.key = ModelKey{pv.String, md.String}
		c.first, c.last = first.Time, last.Time
		if c.u.exact, err = parseFemto(costSum.String); err != nil {
			return nil, err
		}
		c.u.Cost = c.u.exact.usd()
		c.u.Unpriced.Input, c.u.Unpriced.Output, c.u.Unpriced.CacheRead = unIn, unOut, unR
		c.u.Unpriced.CacheWrite, c.u.Unpriced.TotalTokens = unW, unTot
		out = append(out, c)
	}
	return out, rows.Err()
}

// usageCellsGo reads every record and prices it in Go with o.Prices (a
// price table the database was not built with); days are taken with
// time.In. One cell per record.
func usageCellsGo(ctx context.Context, db *sql.DB, o *Options) ([]cell, error) {
	where, args := filterSQL(o)
	dim1, dim2 := dims(o.Kind)
	q := `WITH ` + baseCTE() + `
SELECT ts, ` + dim1 + `, ` + dim2 + `, kind, provider, model, input, output, cache_read, cache_write, cache_write_1h, total_tokens, recorded_cost_total
FROM base WHERE ` + where + `
ORDER BY file_id, entry_index, rollup_part NULLS FIRST`
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []cell
	for rows.Next() {
		var (
			c              cell
			ts             sql.NullTime
			d1, d2, pv, md sql.NullString
			kind           string
			rec            sql.NullFloat64
			t              Tokens
			cw1h           int64
		)
		if err := rows.Scan(&ts, &d1, &d2, &kind, &pv, &md, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &cw1h,
			&t.TotalTokens, &rec); err != nil {
			return nil, err
		}
		t.Records = 1
		if ts.Valid {
			c.first, c.last = ts.Time.UTC(), ts.Time.UTC()
			y, m, d := c.first.In(o.Location).Date()
			c.day, c.hasDay = time.Date(y, m, d, 0, 0, 0, 0, time.UTC), true
		}
		if !inDays(o, c) {
			continue
		}
		c.dim1, c.dim2 = d1.String, d2.String
		c.key = ModelKey{pv.String, md.String}
		c.u.Tokens = t
		cost, src := recordCost(o, c.first, c.key, kind, t, cw1h, rec)
		switch src {
		case "recorded":
			c.u.RecordedRecords = 1
		case "calculated":
			c.u.CalculatedRecords = 1
		default:
			c.u.Unpriced = t
		}
		c.u.exact = femtoOf(cost)
		c.u.Cost = c.u.exact.usd()
		if !o.Kind.timeKind() {
			c.day, c.hasDay = time.Time{}, false
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// inDays applies Since/Until to a cell; records without a day pass only
// when neither is set.
func inDays(o *Options, c cell) bool {
	if o.Since.IsZero() && o.Until.IsZero() {
		return true
	}
	if !c.hasDay {
		return false
	}
	return (o.Since.IsZero() || !c.day.Before(o.Since)) && (o.Until.IsZero() || !c.day.After(o.Until))
}

// recordCost is costSQL in Go, pricing from o.Prices at the record's
// instant (the zero time when it has none, as the export does); cw1h is the
// 1-hour part of the cache writes (SPEC.md §7.4).
func recordCost(o *Options, at time.Time, k ModelKey, kind string, t Tokens, cw1h int64, rec sql.NullFloat64) (float64, string) {
	calc := func() (float64, bool) {
		if kind == "session_summary" || k.Provider == "" || k.Model == "" {
			return 0, false
		}
		p, ok := o.Prices.LookupAt(k.Provider, k.Model, at)
		if !ok {
			return 0, false
		}
		return p.Cost(pricing.Tokens{Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite,
			CacheWrite1h: cw1h}).Total, true
	}
	switch o.CostMode {
	case export.CostRecorded:
		if rec.Valid {
			return rec.Float64, "recorded"
		}
		return 0, ""
	case export.CostCalculate:
		if c, ok := calc(); ok {
			return c, "calculated"
		}
		return 0, ""
	}
	if rec.Valid && (rec.Float64 != 0 || t.Input+t.Output+t.CacheRead+t.CacheWrite == 0) {
		return rec.Float64, "recorded"
	}
	if c, ok := calc(); ok {
		return c, "calculated"
	}
	return 0, ""
}

// sessionInfos returns each session's source, project, cwd and parent from
// its oldest file, and its name from the file with the most entries that
// has one.
func sessionInfos(ctx context.Context, db *sql.DB) (map[string]*SessionInfo, error) {
	rows, err := db.QueryContext(ctx, `SELECT session_id,
       first(source ORDER BY created_at NULLS LAST, path),
       first(project ORDER BY created_at NULLS LAST, path),
       first(cwd ORDER BY created_at NULLS LAST, path),
       first(name ORDER BY entry_count DESC, path) FILTER (WHERE name IS NOT NULL),
       first(parent_session_id ORDER BY created_at NULLS LAST, path)
FROM sessions GROUP BY session_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*SessionInfo{}
	for rows.Next() {
		var id string
		var src, proj, cwd, name, parent sql.NullString
		if err := rows.Scan(&id, &src, &proj, &cwd, &name, &parent); err != nil {
			return nil, err
		}
		out[id] = &SessionInfo{Source: src.String, Project: proj.String, Cwd: cwd.String, Name: name.String, ParentSessionID: parent.String}
	}
	return out, rows.Err()
}

// toolSources are the calls and results CTEs of the tools report and the
// table their timestamps come from: over content_blocks and entries in an
// export (ModeFull), over their tool_uses rows in a report's database
// (ModeUsage).
func toolSources(mode export.Mode) (ctes, timeTable string) {
	if mode == export.ModeUsage {
		// Fork copies as the export marked them (tool_uses.fork_copy,
		// queries/export.sql derive_tool_uses_fork_copy).
		return `calls AS (
  SELECT file_id, tool_call_id, tool_name, timestamp AS ts, provider, model_id AS model
  FROM tool_uses
  WHERE is_call AND NOT fork_copy
),
results AS (
  SELECT file_id, tool_call_id, bool_or(is_error) AS is_error, sum(byte_size) AS output_bytes
  FROM tool_uses
  WHERE is_result AND NOT fork_copy
  GROUP BY file_id, tool_call_id
),`, "tool_uses"
	}
	return `calls AS (
  SELECT b.file_id, b.tool_call_id, b.tool_name, e.timestamp AS ts, e.provider, e.model_id AS model
  FROM content_blocks b JOIN entries e USING (file_id, entry_index)
  WHERE b.block_type = 'toolCall' AND e.fork_copy_of IS NULL
),
results AS (
  SELECT e.file_id, e.tool_call_id, bool_or(e.is_error) AS is_error, sum(b.byte_size) AS output_bytes
  FROM entries e LEFT JOIN content_blocks b USING (file_id, entry_index)
  WHERE e.role = 'toolResult' AND e.fork_copy_of IS NULL AND e.tool_call_id IS NOT NULL
  GROUP BY e.file_id, e.tool_call_id
),`, "entries"
}

// toolCells aggregates tool calls per tool name and calling model.
func toolCells(ctx context.Context, db *sql.DB, o *Options, mode export.Mode) ([]ToolRow, error) {
	ctes, timeTable := toolSources(mode)
	day, err := zoneDay(ctx, db, o.Location, "SELECT min(timestamp), max(timestamp) FROM "+timeTable, "j.ts")
	if err != nil {
		return nil, err
	}
	where, args := filterSQL(o)
	dayWhere, dayArgs := daySQL(o)
	q := `WITH ` + withCTE(day.cte) + ctes + `
j AS (
  SELECT c.*, r.tool_call_id IS NOT NULL AS has_result, coalesce(r.is_error, FALSE) AS is_error,
         coalesce(r.output_bytes, 0) AS output_bytes, s.source, s.project, s.cwd
  FROM calls c
  LEFT JOIN results r ON r.file_id = c.file_id AND r.tool_call_id = c.tool_call_id
  JOIN sessions s ON s.file_id = c.file_id
  WHERE ` + where + `
),
d AS (SELECT j.*, ` + day.expr + ` AS day FROM j ` + day.join + `)
SELECT tool_name, provider, model, count(*), count(*) FILTER (WHERE has_result),
       count(*) FILTER (WHERE is_error), CAST(sum(output_bytes) AS BIGINT)
FROM d WHERE ` + dayWhere + `
GROUP BY ALL
ORDER BY tool_name NULLS LAST, provider NULLS LAST, model NULLS LAST`
	rows, err := db.QueryContext(ctx, q, append(args, dayArgs...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ToolRow
	for rows.Next() {
		var name, pv, md sql.NullString
		var m ToolModel
		if err := rows.Scan(&name, &pv, &md, &m.Calls, &m.Results, &m.Errors, &m.OutputBytes); err != nil {
			return nil, err
		}
		m.ModelKey = ModelKey{pv.String, md.String}
		if n := len(out); n > 0 && out[n-1].Tool == name.String {
			out[n-1].add(m)
			out[n-1].Models = append(out[n-1].Models, m)
			continue
		}
		r := ToolRow{Tool: name.String, Models: []ToolModel{m}}
		r.add(m)
		out = append(out, r)
	}
	return out, rows.Err()
}

// usageAggregates is the select list of a usage group: queries/report.sql
// usage_aggregates.
func usageAggregates() string { return queries.Report("usage_aggregates") }
