package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sessions-etl/sessions-etl/pricing"
)

// Format is a text rendering of a report.
type Format int

// Text formats.
const (
	Table    Format = iota // aligned columns with a totals row (terminal)
	Markdown               // a GitHub-flavoured Markdown table with a totals row
	CSV                    // one header line, one line per row (per row and model with breakdown), no totals
)

// column is one column of a text table.
type column struct {
	title string
	right bool // numbers are right-aligned
}

// grid is a report laid out as text cells.
type grid struct {
	cols   []column
	rows   [][]string
	sub    []bool // rows that are breakdown lines (indented)
	totals []string
	style  Style // colours of the aligned table
}

// WriteText renders the report as a table, Markdown or CSV. With
// breakdown, each row is followed by one line per provider/model (CSV:
// each row is split into one line per provider/model).
func (r *Report) WriteText(w io.Writer, f Format, breakdown bool) error {
	if f == CSV {
		return r.writeCSV(w, breakdown)
	}
	g := r.grid(breakdown)
	r.addBudgetColumn(&g)
	var b strings.Builder
	b.WriteString(r.title(f))
	b.WriteString("\n\n")
	if len(g.rows) == 0 {
		b.WriteString("No usage found")
		if r.Kind == Tools {
			b.Reset()
			b.WriteString(r.title(f) + "\n\nNo tool calls found")
		}
		b.WriteString(r.filterNote() + ".\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if f == Markdown {
		g.markdown(&b)
	} else {
		g.table(&b)
	}
	b.WriteString(r.overBudgetNote())
	b.WriteString(r.notes(f))
	_, err := io.WriteString(w, b.String())
	return err
}

// filterNote describes the filters for "No usage found".
func (r *Report) filterNote() string {
	var parts []string
	if !r.Since.IsZero() {
		parts = append(parts, "since "+r.Since.Format(time.DateOnly))
	}
	if !r.Until.IsZero() {
		parts = append(parts, "until "+r.Until.Format(time.DateOnly))
	}
	if r.Source != "" {
		parts = append(parts, "source "+r.Source)
	}
	if r.Project != "" {
		parts = append(parts, "project "+r.Project)
	}
	if r.Model != "" {
		parts = append(parts, "model ~ "+r.Model)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

var titles = map[Kind]string{Daily: "Daily usage", Weekly: "Weekly usage (ISO weeks)", Monthly: "Monthly usage",
	Session: "Usage by session", Project: "Usage by project", Model: "Usage by model", Provider: "Usage by provider",
	Tools: "Tool calls"}

// title is the line above the table: what, in which zone, costed how.
func (r *Report) title(f Format) string {
	t := titles[r.Kind]
	var parts []string
	if r.Kind.timeKind() || !r.Since.IsZero() || !r.Until.IsZero() || r.Kind == Session {
		parts = append(parts, "time zone "+r.Zone)
	}
	if r.Kind != Tools {
		p := "cost " + string(r.CostMode)
		if r.Pricing != nil && r.CostMode != "recorded" {
			if r.Pricing == pricing.Default() {
				p += ", bundled prices of " + r.Pricing.Retrieved
			} else {
				p += ", prices " + r.Pricing.Source + " of " + r.Pricing.Retrieved
			}
		}
		parts = append(parts, p)
	}
	if fn := r.filterNote(); fn != "" {
		parts = append(parts, strings.TrimSuffix(strings.TrimPrefix(fn, " ("), ")"))
	}
	s := t
	if len(parts) > 0 {
		s += " — " + strings.Join(parts, "; ")
	}
	if f == Markdown {
		return "**" + s + "**"
	}
	return s
}

// notes are the lines after the table: unpriced usage by model, and what
// a total with unpriced usage means.
func (r *Report) notes(f Format) string { return r.notesStyled(f, Style{}) }

func (r *Report) notesStyled(f Format, st Style) string {
	if r.Kind == Tools || len(r.Unpriced) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + apply(st.Unpriced, "Unpriced usage (no recorded cost and no price: its tokens are counted, its cost is not in the totals above):") + "\n")
	g := grid{cols: []column{{"Provider", false}, {"Model", false}, {"Records", true}, {"Input", true}, {"Output", true},
		{"Cache write", true}, {"Cache read", true}, {"Total tokens", true}}}
	for _, u := range r.Unpriced {
		g.rows = append(g.rows, []string{orUnknown(u.Provider), modelLabel(u.Model), num(u.Records), num(u.Input),
			num(u.Output), num(u.CacheWrite), num(u.CacheRead), num(u.TotalTokens)})
	}
	if f == Markdown {
		b.WriteString("\n")
		g.markdown(&b)
	} else {
		g.style = Style{Header: st.Header, Rule: st.Rule}
		g.table(&b)
	}
	for _, u := range r.Unpriced {
		if u.Model == "" {
			b.WriteString("\n(no model): session_summary records name no model; they are priced only from a recorded cost.\n")
			break
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func modelLabel(m string) string {
	if m == "" {
		return "(no model)"
	}
	return m
}

// keyColumns are the columns that name a row, per kind.
func (r *Report) keyColumns() []column {
	switch r.Kind {
	case Daily:
		return []column{{"Date", false}}
	case Weekly:
		return []column{{"Week", false}, {"Starts", false}}
	case Monthly:
		return []column{{"Month", false}}
	case Session:
		return []column{{"Session", false}, {"Project", false}, {"Source", false}, {"Last activity", false}}
	case Project:
		return []column{{"Project", false}, {"Sessions", true}}
	case Model:
		return []column{{"Provider", false}, {"Model", false}}
	case Provider:
		return []column{{"Provider", false}}
	}
	return nil
}

func (r *Report) keyCells(row Row) []string {
	noTime := "(no timestamp)"
	switch r.Kind {
	case Daily, Monthly:
		if row.Key == "" {
			return []string{noTime}
		}
		return []string{row.Key}
	case Weekly:
		if row.Key == "" {
			return []string{noTime, ""}
		}
		return []string{row.Week, row.Key}
	case Session:
		s := row.Session
		if s == nil {
			s = &SessionInfo{}
		}
		last := ""
		if !row.Last.IsZero() {
			last = row.Last.In(r.Location).Format("2006-01-02 15:04")
		}
		key := row.Key
		if row.Depth > 0 { // a subagent, under its parent (SPEC.md §7.3)
			key = strings.Repeat("  ", row.Depth-1) + "↳ " + key
		}
		return []string{key, orNone(s.Project), s.Source, last}
	case Project:
		return []string{orNone(row.Key), num(int64(row.Sessions))}
	case Model:
		return []string{orUnknown(row.Provider), modelLabel(row.ModelKey.Model)}
	case Provider:
		return []string{orUnknown(row.Key)}
	}
	return nil
}

// modelKeyLabel is "provider/model", "model" without a provider, and
// "(no model)" without a model.
func modelKeyLabel(k ModelKey) string {
	switch {
	case k.Model == "" && k.Provider == "":
		return "(no model)"
	case k.Model == "":
		return k.Provider + "/(no model)"
	case k.Provider == "":
		return k.Model
	}
	return k.Provider + "/" + k.Model
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

var usageColumns = []column{{"Records", true}, {"Input", true}, {"Output", true}, {"Cache write", true},
	{"Cache read", true}, {"Total tokens", true}, {"Cost (USD)", true}}

func usageCells(u Usage) []string {
	return []string{num(u.Records), num(u.Input), num(u.Output), num(u.CacheWrite), num(u.CacheRead),
		num(u.TotalTokens), costText(u)}
}

// grid lays the report out.
func (r *Report) grid(breakdown bool) grid {
	if r.Kind == Tools {
		return r.toolGrid(breakdown)
	}
	keys := r.keyColumns()
	g := grid{cols: append(append([]column{}, keys...), usageColumns...)}
	for _, row := range r.Rows {
		g.rows = append(g.rows, append(r.keyCells(row), usageCells(row.Usage)...))
		g.sub = append(g.sub, false)
		if row.WithSubagents != nil {
			// The parent's total with its subagents (its own is the row).
			cells := make([]string, len(keys))
			cells[0] = strings.Repeat("  ", row.Depth) + fmt.Sprintf("= with %d subagent(s)", len(row.Subagents))
			g.rows = append(g.rows, append(cells, usageCells(*row.WithSubagents)...))
			g.sub = append(g.sub, true)
		}
		if !breakdown || r.Kind == Model {
			continue
		}
		for _, m := range row.Models {
			cells := make([]string, len(keys))
			cells[0] = "└ " + modelKeyLabel(m.ModelKey)
			g.rows = append(g.rows, append(cells, usageCells(m.Usage)...))
			g.sub = append(g.sub, true)
		}
	}
	g.totals = make([]string, len(keys))
	g.totals[0] = "Total"
	g.totals = append(g.totals, usageCells(r.Totals)...)
	return g
}

func (r *Report) toolGrid(breakdown bool) grid {
	g := grid{cols: []column{{"Tool", false}, {"Calls", true}, {"Results", true}, {"Errors", true},
		{"Error rate", true}, {"Output", true}}}
	cells := func(name string, calls, results, errs, bytes int64) []string {
		t := ToolRow{Calls: calls, Results: results, Errors: errs}
		rate := "—"
		if results > 0 {
			rate = strconv.FormatFloat(100*t.ErrorRate(), 'f', 1, 64) + "%"
		}
		return []string{name, num(calls), num(results), num(errs), rate, humanBytes(bytes)}
	}
	for _, t := range r.ToolRows {
		g.rows = append(g.rows, cells(orUnknown(t.Tool), t.Calls, t.Results, t.Errors, t.OutputBytes))
		g.sub = append(g.sub, false)
		if !breakdown {
			continue
		}
		for _, m := range t.Models {
			label := "└ " + modelKeyLabel(m.ModelKey)
			g.rows = append(g.rows, cells(label, m.Calls, m.Results, m.Errors, m.OutputBytes))
			g.sub = append(g.sub, true)
		}
	}
	t := r.ToolTotals
	g.totals = cells("Total", t.Calls, t.Results, t.Errors, t.OutputBytes)
	return g
}

// costText is a cost cell: "$1.23", "$1.23 + unpriced" when some records
// have no cost, "unpriced" when none has one (never $0.00 for them).
func costText(u Usage) string {
	if !u.Priced() {
		if u.Records == 0 {
			return money(0)
		}
		return "unpriced"
	}
	s := money(u.Cost)
	if !u.Complete() {
		s += " + unpriced"
	}
	return s
}

// money formats dollars: cents with thousands separators from $1 up, four
// decimals below, "<$0.0001" for tinier non-zero amounts.
func money(v float64) string {
	switch {
	case v == 0:
		return "$0.00"
	case v < 0.00005:
		return "<$0.0001"
	case v < 0.99995:
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	return "$" + num(n) + "." + frac
}

// num formats an integer with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// table writes aligned columns, a rule and the totals row.
func (g *grid) table(b *strings.Builder) {
	width := make([]int, len(g.cols))
	all := append([][]string{titleCells(g.cols)}, g.rows...)
	if g.totals != nil {
		all = append(all, g.totals)
	}
	for r, row := range all {
		if slices.ContainsFunc(row, hasControl) {
			row = slices.Clone(row)
			for i := range row {
				row[i] = oneLine(row[i])
			}
			all[r] = row
		}
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string, whole func(string) string, isTitle bool) {
		var l strings.Builder
		for i, c := range cells {
			if i > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == len(cells)-1 && !g.cols[i].right {
				pad = "" // no trailing blanks
			}
			cell := c
			switch {
			case whole != nil:
			case isTitle:
				cell = apply(g.style.Header, c)
			case strings.Contains(c, "unpriced"):
				cell = apply(g.style.Unpriced, c)
			}
			if g.cols[i].right {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
		}
		out := strings.TrimRight(l.String(), " ")
		if whole != nil {
			out = apply(whole, out)
		}
		b.WriteString(out)
		b.WriteByte('\n')
	}
	rule := func() {
		total := 0
		for _, w := range width {
			total += w
		}
		b.WriteString(apply(g.style.Rule, strings.Repeat("─", total+2*(len(width)-1))))
		b.WriteByte('\n')
	}
	line(all[0], nil, true)
	rule()
	for _, row := range all[1 : 1+len(g.rows)] {
		line(row, nil, false)
	}
	if g.totals != nil {
		rule()
		line(all[len(all)-1], g.style.Total, false)
	}
}

func hasControl(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }

// oneLine shows the control characters of s (a newline in a cwd, a
// session name) as Go escapes, so that a cell stays on its row.
func oneLine(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func titleCells(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.title
	}
	return out
}

// markdown writes a pipe table; the totals row is bold.
func (g *grid) markdown(b *strings.Builder) {
	esc := func(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }
	b.WriteString("|")
	for _, c := range g.cols {
		b.WriteString(" " + esc(c.title) + " |")
	}
	b.WriteString("\n|")
	for _, c := range g.cols {
		if c.right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range g.rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	if g.totals != nil {
		b.WriteString("|")
		for _, c := range g.totals {
			if c != "" {
				c = "**" + esc(c) + "**"
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
}

// writeCSV writes machine-readable rows: exact integers, costs as plain
// decimals (empty when no record has one), no totals row.
func (r *Report) writeCSV(w io.Writer, breakdown bool) error {
	cw := csv.NewWriter(w)
	if r.Kind == Tools {
		head := []string{"tool"}
		if breakdown {
			head = append(head, "provider", "model")
		}
		if err := cw.Write(append(head, "calls", "results", "errors", "error_rate", "output_bytes")); err != nil {
			return err
		}
		rec := func(calls, results, errs, bytes int64) []string {
			rate := ""
			if results > 0 {
				rate = strconv.FormatFloat(float64(errs)/float64(results), 'g', -1, 64)
			}
			return []string{i64(calls), i64(results), i64(errs), rate, i64(bytes)}
		}
		for _, t := range r.ToolRows {
			if !breakdown {
				if err := cw.Write(append([]string{t.Tool}, rec(t.Calls, t.Results, t.Errors, t.OutputBytes)...)); err != nil {
					return err
				}
				continue
			}
			for _, m := range t.Models {
				if err := cw.Write(append([]string{t.Tool, m.Provider, m.Model}, rec(m.Calls, m.Results, m.Errors, m.OutputBytes)...)); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	}
	keyHead, keyVals := r.csvKeys()
	head := keyHead
	if breakdown && r.Kind != Model {
		head = append(head, "provider", "model")
	}
	head = append(head, "records", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
		"total_tokens", "cost_usd", "cost_complete", "recorded_records", "calculated_records", "unpriced_records", "unpriced_tokens")
	if err := cw.Write(head); err != nil {
		return err
	}
	vals := func(u Usage) []string {
		cost := ""
		if u.Priced() || u.Records == 0 {
			cost = strconv.FormatFloat(u.Cost, 'f', -1, 64)
		}
		return []string{i64(u.Records), i64(u.Input), i64(u.Output), i64(u.CacheWrite), i64(u.CacheRead), i64(u.TotalTokens),
			cost, strconv.FormatBool(u.Complete()), i64(u.RecordedRecords), i64(u.CalculatedRecords), i64(u.Unpriced.Records),
			i64(u.Unpriced.TotalTokens)}
	}
	for _, row := range r.Rows {
		if !breakdown || r.Kind == Model {
			if err := cw.Write(append(keyVals(row), vals(row.Usage)...)); err != nil {
				return err
			}
			continue
		}
		for _, m := range row.Models {
			if err := cw.Write(append(append(keyVals(row), m.Provider, m.Model), vals(m.Usage)...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// csvKeys are the key columns of CSV rows.
func (r *Report) csvKeys() ([]string, func(Row) []string) {
	switch r.Kind {
	case Daily:
		return []string{"date"}, func(row Row) []string { return []string{row.Key} }
	case Weekly:
		return []string{"week", "week_start"}, func(row Row) []string { return []string{row.Week, row.Key} }
	case Monthly:
		return []string{"month"}, func(row Row) []string { return []string{row.Key} }
	case Session:
		return []string{"session_id", "project", "project_path", "source", "name", "parent_session_id", "first_activity", "last_activity"},
			func(row Row) []string {
				s := row.Session
				if s == nil {
					s = &SessionInfo{}
				}
				return []string{row.Key, s.Project, s.Cwd, s.Source, s.Name, s.ParentSessionID, instant(row.First), instant(row.Last)}
			}
	case Project:
		return []string{"project", "sessions"}, func(row Row) []string { return []string{row.Key, strconv.Itoa(row.Sessions)} }
	case Model:
		return []string{"provider", "model"}, func(row Row) []string { return []string{row.Provider, row.ModelKey.Model} }
	}
	return []string{"provider"}, func(row Row) []string { return []string{row.Key} }
}

func instant(t time.Time) string {
	if p := isoMillis(t); p != nil {
		return *p
	}
	return ""
}
