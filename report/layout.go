package report

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Style colours parts of a table; a nil function leaves the text as it
// is. The caller decides whether colour is wanted (a terminal, NO_COLOR,
// FORCE_COLOR, --color) and with which library: escape codes never count
// in column widths.
type Style struct {
	Title    func(string) string // the line above the table
	Header   func(string) string // column titles
	Rule     func(string) string // the lines under the header and above the totals
	Total    func(string) string // the totals row
	Unpriced func(string) string // cost cells with unpriced usage, and the unpriced section's heading
}

func apply(f func(string) string, s string) string {
	if f == nil || s == "" {
		return s
	}
	return f(s)
}

// TableOptions shape the aligned table of [Report.WriteTable].
type TableOptions struct {
	Breakdown bool // a line per model under each row
	// Models adds a Models column after the key columns (the models of
	// the row, most expensive first) to the reports whose rows are not
	// models already; not with Breakdown.
	Models bool
	// Compact keeps the key columns, Models, Input, Output, Total tokens
	// and Cost, in at most Width columns (80 when Width is 0 or more).
	Compact bool
	// Width is the terminal's width in columns (0: unknown, no limit). A
	// table wider than Width is laid out compact; the Models and project
	// columns are then shortened with "…" (Models dropped if need be).
	Width int
	Style Style
}

// CompactWidth is the most columns a compact table takes.
const CompactWidth = 80

// WriteTable renders the report as an aligned table laid out for a
// terminal (see TableOptions); with the zero options it is WriteText's
// Table.
func (r *Report) WriteTable(w io.Writer, o TableOptions) error {
	g := r.grid(o.Breakdown)
	if len(g.rows) == 0 {
		return r.WriteText(w, Table, o.Breakdown) // "No usage found …"
	}
	if o.Models && !o.Breakdown && r.Kind != Model && r.Kind != Tools {
		g = r.withModels(g)
	}
	r.addBudgetColumn(&g)
	limit := o.Width
	if o.Compact {
		if limit <= 0 || limit > CompactWidth {
			limit = CompactWidth
		}
	}
	if o.Compact || (limit > 0 && g.width() > limit) {
		g = r.compact(g)
	}
	if limit > 0 {
		g.fit(limit)
	}
	var b strings.Builder
	b.WriteString(apply(o.Style.Title, wrapTitle(r.title(Table), limit)))
	b.WriteString("\n\n")
	g.style = o.Style
	g.table(&b)
	b.WriteString(r.overBudgetNote())
	b.WriteString(r.notesFit(o.Style, limit))
	_, err := io.WriteString(w, b.String())
	return err
}

// modelsCell names the models of a row: model ids without provider,
// most expensive first.
func modelsCell(ms []ModelUsage) string {
	var names []string
	for _, m := range ms {
		n := m.Model
		if n == "" {
			n = "(no model)"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// withModels inserts the Models column after the key columns.
func (r *Report) withModels(g grid) grid {
	nk := len(r.keyColumns())
	ins := func(cells []string, v string) []string {
		out := make([]string, 0, len(cells)+1)
		out = append(out, cells[:nk]...)
		out = append(out, v)
		return append(out, cells[nk:]...)
	}
	out := grid{sub: g.sub}
	out.cols = append(append(append([]column{}, g.cols[:nk]...), column{title: "Models"}), g.cols[nk:]...)
	i := 0
	for ri, row := range g.rows {
		v := ""
		if !g.sub[ri] {
			v = modelsCell(r.Rows[i].Models)
			i++
		}
		out.rows = append(out.rows, ins(row, v))
	}
	out.totals = ins(g.totals, "")
	return out
}

// compactDrop are the columns a compact table leaves out.
var compactDrop = map[string]bool{"Records": true, "Cache write": true, "Cache read": true, "Source": true}

// compact keeps the columns of a compact table and shortens session ids
// to 8 characters and last activity to the day.
func (r *Report) compact(g grid) grid {
	var keep []int
	for i, c := range g.cols {
		if !compactDrop[c.title] {
			keep = append(keep, i)
		}
	}
	pick := func(cells []string) []string {
		out := make([]string, len(keep))
		for j, i := range keep {
			out[j] = cells[i]
			switch g.cols[i].title {
			case "Session":
				if utf8.RuneCountInString(out[j]) > 8 && !strings.HasPrefix(out[j], "└") && out[j] != "Total" {
					out[j] = string([]rune(out[j])[:8])
				}
			case "Last activity":
				if len(out[j]) > 10 {
					out[j] = out[j][:10]
				}
			}
		}
		return out
	}
	out := grid{sub: g.sub}
	for _, i := range keep {
		c := g.cols[i]
		if c.title == "Last activity" {
			c.title = "Last"
		}
		out.cols = append(out.cols, c)
	}
	for _, row := range g.rows {
		out.rows = append(out.rows, pick(row))
	}
	if g.totals != nil {
		out.totals = pick(g.totals)
	}
	return out
}

// width is the table's width in columns.
func (g *grid) width() int {
	w := make([]int, len(g.cols))
	g.measure(w)
	total := 2 * (len(w) - 1)
	for _, n := range w {
		total += n
	}
	return total
}

func (g *grid) measure(w []int) {
	for i, c := range g.cols {
		w[i] = max(w[i], utf8.RuneCountInString(c.title))
	}
	for _, row := range append(slices.Clone(g.rows), g.totals) {
		for i, c := range row {
			w[i] = max(w[i], utf8.RuneCountInString(oneLine(c)))
		}
	}
}

// shrinkable are the columns fit may shorten.
var shrinkable = map[string]bool{"Models": true, "Project": true, "Tool": true, "Model": true}

// minShrunk is the narrowest a shortened column gets.
const minShrunk = 8

// fit shortens the shrinkable columns, widest first, until the table is
// at most limit columns wide; if that is not enough, it leaves out the
// columns of fitDrops, in order.
func (g *grid) fit(limit int) {
	for g.width() > limit {
		w := make([]int, len(g.cols))
		g.measure(w)
		best := -1
		for i, c := range g.cols {
			if shrinkable[c.title] && w[i] > minShrunk && (best < 0 || w[i] > w[best]) {
				best = i
			}
		}
		if best < 0 {
			for _, title := range fitDrops {
				if g.drop(title) {
					break
				}
			}
			if !slices.ContainsFunc(g.cols, func(c column) bool { return slices.Contains(fitDrops, c.title) }) {
				return // nothing left to leave out
			}
			continue
		}
		g.cap(best, max(minShrunk, w[best]-(g.width()-limit)))
	}
}

// cap truncates column i to n runes, ending cut cells with "…".
func (g *grid) cap(i, n int) {
	cut := func(s string) string {
		s = oneLine(s)
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		return string([]rune(s)[:n-1]) + "…"
	}
	for _, row := range g.rows {
		row[i] = cut(row[i])
	}
	if g.totals != nil {
		g.totals[i] = cut(g.totals[i])
	}
	if utf8.RuneCountInString(g.cols[i].title) > n {
		g.cols[i].title = cut(g.cols[i].title)
	}
}

// fitDrops are the columns fit leaves out when shortening is not enough.
var fitDrops = []string{"Models", "Total tokens", "Last", "Output"}

// drop removes the column titled title; false when there is none.
func (g *grid) drop(title string) bool {
	i := slices.IndexFunc(g.cols, func(c column) bool { return c.title == title })
	if i < 0 {
		return false
	}
	g.cols = slices.Delete(g.cols, i, i+1)
	for j, row := range g.rows {
		g.rows[j] = slices.Delete(row, i, i+1)
	}
	if g.totals != nil {
		g.totals = slices.Delete(g.totals, i, i+1)
	}
	return true
}

// wrapTitle puts the parts of a title longer than limit on lines of
// their own ("Daily usage" / "  time zone …" / "  cost …").
func wrapTitle(t string, limit int) string {
	if limit <= 0 || utf8.RuneCountInString(t) <= limit {
		return t
	}
	head, rest, ok := strings.Cut(t, " — ")
	if !ok {
		return t
	}
	return head + "\n  " + strings.ReplaceAll(rest, "; ", "\n  ")
}

// notesFit is notes for a table of at most limit columns (0: no limit):
// the unpriced usage keeps provider, model, records and total tokens.
func (r *Report) notesFit(st Style, limit int) string {
	full := r.notesStyled(Table, Style{})
	if limit <= 0 || maxLineWidth(full) <= limit {
		return r.notesStyled(Table, st)
	}
	if r.Kind == Tools || len(r.Unpriced) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + apply(st.Unpriced, "Unpriced usage (tokens counted, not in the cost totals):") + "\n")
	g := grid{cols: []column{{"Provider", false}, {"Model", false}, {"Records", true}, {"Total tokens", true}}, style: Style{Header: st.Header, Rule: st.Rule}}
	for _, u := range r.Unpriced {
		g.rows = append(g.rows, []string{orUnknown(u.Provider), modelLabel(u.Model), num(u.Records), num(u.TotalTokens)})
	}
	g.fit(limit)
	g.table(&b)
	return b.String()
}

func maxLineWidth(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}
