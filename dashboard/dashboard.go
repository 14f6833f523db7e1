package dashboard

import (
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/sessions-etl/sessions-etl/report"
)

// Options configure [Build].
type Options struct {
	// Report selects the database, the roots to refresh it from, the zone,
	// the period (Since/Until) and the filters; its Kind is ignored.
	Report report.Options
	// Now stamps the page and decides the active block.
	Now time.Time
	// Top is the number of rows of the project, model, session and tool
	// charts and tables (default 15).
	Top int
	// Models is the number of models the daily chart stacks before
	// "other" (default 7).
	Models int
}

// Data are the reports a dashboard shows, all over one refresh of the
// database.
type Data struct {
	Opts                                                Options
	Daily, Projects, Models, Providers, Sessions, Tools *report.Report
	Blocks                                              *report.BlocksReport
}

// Build refreshes the database once (unless Report.NoRefresh) and runs
// every report the page shows over one open handle (report.RunBatch).
func Build(ctx context.Context, o Options) (*Data, error) {
	if o.Top <= 0 {
		o.Top = 15
	}
	if o.Models <= 0 {
		o.Models = 7
	}
	d := &Data{Opts: o}
	// One refresh, one lock and one open database for every chart.
	dst := []**report.Report{&d.Daily, &d.Projects, &d.Models, &d.Providers, &d.Sessions, &d.Tools}
	rs, b, err := report.RunBatch(ctx, o.Report,
		[]report.Kind{report.Daily, report.Project, report.Model, report.Provider, report.Session, report.Tools},
		&report.BlockOptions{Now: o.Now})
	if err != nil {
		return nil, err
	}
	for i, r := range rs {
		*dst[i] = r
	}
	d.Blocks = b
	return d, nil
}

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Parse(pageTemplate))

// row is a line of a table on the page.
type row struct {
	Cells []string
}

type table struct {
	Head  []string
	Right []bool // right-aligned columns
	Rows  []row
}

type chart struct {
	ID, Title string
	SVG       template.HTML // gonum/plot's output (escaped text)
	Table     *table
	Empty     string // shown instead of the chart when there is no data
	Note      string
}

type view struct {
	Title      string
	Generated  string
	Period     string
	Zone       string
	Question   string
	TotalCost  string
	Totals     []row
	Unpriced   *table
	UnpricedAt string
	Charts     []chart
	Sessions   *table
	Active     string
}

func usd(u report.Usage) string { return report.CostText(u) }

// Write renders the page.
func Write(w io.Writer, d *Data) error {
	v, err := d.view()
	if err != nil {
		return err
	}
	return page.Execute(w, v)
}

func (d *Data) view() (*view, error) {
	r := d.Daily
	v := &view{Title: "Agent usage and cost", Generated: d.Opts.Now.In(r.Location).Format("2006-01-02 15:04 MST"),
		Zone: r.Zone, Question: r.Title(), TotalCost: usd(r.Totals)}
	v.Period = d.period()
	t := r.Totals
	v.Totals = []row{
		{[]string{"Total cost", usd(t)}},
		{[]string{"Billed records", report.Num(t.Records)}},
		{[]string{"Input tokens", report.Num(t.Input)}},
		{[]string{"Output tokens", report.Num(t.Output)}},
		{[]string{"Cache write tokens", report.Num(t.CacheWrite)}},
		{[]string{"Cache read tokens", report.Num(t.CacheRead)}},
		{[]string{"Total tokens", report.Num(t.TotalTokens)}},
		{[]string{"Sessions", report.Num(int64(len(d.Sessions.Rows)))}},
	}
	if len(r.Unpriced) > 0 {
		ut := &table{Head: []string{"Provider", "Model", "Records", "Total tokens"}, Right: []bool{false, false, true, true}}
		for _, u := range r.Unpriced {
			ut.Rows = append(ut.Rows, row{[]string{orDash(u.Provider), report.ModelLabel(report.ModelKey{Model: u.Model}),
				report.Num(u.Records), report.Num(u.TotalTokens)}})
		}
		v.Unpriced = ut
		v.UnpricedAt = fmt.Sprintf("%s records (%s tokens) have no recorded cost and no price: their tokens are counted, their cost is not in the totals (never shown as $0).",
			report.Num(t.Unpriced.Records), report.Num(t.Unpriced.TotalTokens))
	}
	var charts []chart
	for _, mk := range []func() (chart, error){d.dailyChart, d.projectChart, d.modelChart, d.providerChart, d.blocksChart, d.toolsChart} {
		c, err := mk()
		if err != nil {
			return nil, err
		}
		charts = append(charts, c)
	}
	v.Charts = charts
	v.Sessions = d.sessionTable()
	if a := d.Blocks.ActiveBlock(); a != nil {
		left := a.End.Sub(d.Blocks.Now).Round(time.Minute)
		v.Active = fmt.Sprintf("Active block since %s: %s, %dh%02dm left.", a.Start.In(r.Location).Format("2006-01-02 15:04"),
			usd(a.Usage), int64(left/time.Hour), int64(left%time.Hour/time.Minute))
		if a.BurnRate != nil && a.Projection != nil {
			v.Active += fmt.Sprintf(" Burn rate %s/hour; projected %s at its end.", report.Money(a.BurnRate.CostPerHour), report.Money(a.Projection.TotalCost))
		}
	}
	return v, nil
}

func orDash(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// period is the days the page covers: --since/--until, else the first and
// last day with usage.
func (d *Data) period() string {
	r := d.Daily
	from, to := "", ""
	if !r.Since.IsZero() {
		from = r.Since.Format(time.DateOnly)
	}
	if !r.Until.IsZero() {
		to = r.Until.Format(time.DateOnly)
	}
	var days []string
	for _, row := range r.Rows {
		if row.Key != "" {
			days = append(days, row.Key)
		}
	}
	if from == "" && len(days) > 0 {
		from = days[0]
	}
	if to == "" && len(days) > 0 {
		to = days[len(days)-1]
	}
	if from == "" && to == "" {
		return "no usage"
	}
	return from + " to " + to
}

const chartW = vg.Length(720)

// dailyChart stacks each day's cost by model: the d.Opts.Models most
// expensive models over the period, the rest as "other". Days without
// usage between the first and the last are shown empty.
func (d *Data) dailyChart() (chart, error) {
	c := chart{ID: "daily", Title: "Daily cost by model"}
	rows := []report.Row{}
	for _, r := range d.Daily.Rows {
		if r.Key != "" {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		c.Empty = "No usage with a timestamp in this period."
		return c, nil
	}
	first, _ := time.Parse(time.DateOnly, rows[0].Key)
	last, _ := time.Parse(time.DateOnly, rows[len(rows)-1].Key)
	var labels []string
	index := map[string]int{}
	for day := first; !day.After(last) && len(labels) < 3700; day = day.AddDate(0, 0, 1) {
		index[day.Format(time.DateOnly)] = len(labels)
		labels = append(labels, day.Format(time.DateOnly))
	}
	byModel := map[report.ModelKey]float64{}
	for _, r := range rows {
		for _, m := range r.Models {
			byModel[m.ModelKey] += m.Cost
		}
	}
	keys := make([]report.ModelKey, 0, len(byModel))
	for k := range byModel {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if byModel[keys[i]] != byModel[keys[j]] {
			return byModel[keys[i]] > byModel[keys[j]]
		}
		return report.ModelLabel(keys[i]) < report.ModelLabel(keys[j])
	})
	top := map[report.ModelKey]int{}
	var ss []series
	for i, k := range keys {
		if i >= d.Opts.Models || byModel[k] == 0 {
			break
		}
		top[k] = len(ss)
		ss = append(ss, series{name: shorten(report.ModelLabel(k), 40), values: make([]float64, len(labels)), color: colorAt(i)})
	}
	other := -1
	for _, r := range rows {
		i, ok := index[r.Key]
		if !ok {
			continue
		}
		for _, m := range r.Models {
			s, ok := top[m.ModelKey]
			if !ok {
				if other < 0 {
					other = len(ss)
					ss = append(ss, series{name: "other models", values: make([]float64, len(labels)), color: otherColor})
				}
				s = other
			}
			ss[s].values[i] += m.Cost
		}
	}
	if len(ss) == 0 {
		c.Empty = "No priced usage in this period (see the unpriced usage above)."
		return c, nil
	}
	svg, err := stackedBars(c.Title, labels, ss, chartW, 320)
	if err != nil {
		return c, err
	}
	c.SVG = template.HTML(svg)
	t := &table{Head: []string{"Date", "Records", "Total tokens", "Cost"}, Right: []bool{false, true, true, true}}
	if len(rows) > 31 {
		c.Note = fmt.Sprintf("The table lists the last 31 of %d days with usage.", len(rows))
		rows = rows[len(rows)-31:]
	}
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		t.Rows = append(t.Rows, row{[]string{r.Key, report.Num(r.Records), report.Num(r.TotalTokens), usd(r.Usage)}})
	}
	c.Table = t
	return c, nil
}

// barsOf is a horizontal bar chart of the first Top rows by cost and the
// table of all of them (up to Top).
func (d *Data) barsOf(id, title, keyHead string, rows []report.Row, key func(report.Row) string, extra func(report.Row) []string, extraHead []string) (chart, error) {
	c := chart{ID: id, Title: title}
	if len(rows) == 0 {
		c.Empty = "No usage in this period."
		return c, nil
	}
	rows = append([]report.Row(nil), rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Cost > rows[j].Cost })
	if len(rows) > d.Opts.Top {
		c.Note = fmt.Sprintf("The %d most expensive of %d.", d.Opts.Top, len(rows))
		rows = rows[:d.Opts.Top]
	}
	labels := make([]string, len(rows))
	values := make([]float64, len(rows))
	for i, r := range rows {
		labels[i], values[i] = key(r), r.Cost
	}
	svg, err := hbars(title, "cost (USD)", labels, values, true, chartW)
	if err != nil {
		return c, err
	}
	c.SVG = template.HTML(svg)
	t := &table{Head: append(append([]string{keyHead}, extraHead...), "Records", "Total tokens", "Cost")}
	t.Right = []bool{false}
	for range extraHead {
		t.Right = append(t.Right, true)
	}
	t.Right = append(t.Right, true, true, true)
	for _, r := range rows {
		cells := append([]string{key(r)}, extra(r)...)
		t.Rows = append(t.Rows, row{append(cells, report.Num(r.Records), report.Num(r.TotalTokens), usd(r.Usage))})
	}
	c.Table = t
	return c, nil
}

func none(report.Row) []string { return nil }

func (d *Data) projectChart() (chart, error) {
	return d.barsOf("projects", "Cost by project", "Project", d.Projects.Rows,
		func(r report.Row) string {
			if r.Key == "" {
				return "(none)"
			}
			return r.Key
		},
		func(r report.Row) []string { return []string{report.Num(int64(r.Sessions))} }, []string{"Sessions"})
}

func (d *Data) modelChart() (chart, error) {
	return d.barsOf("models", "Cost by model", "Model", d.Models.Rows,
		func(r report.Row) string { return report.ModelLabel(r.ModelKey) }, none, nil)
}

func (d *Data) providerChart() (chart, error) {
	return d.barsOf("providers", "Cost by provider", "Provider", d.Providers.Rows,
		func(r report.Row) string { return orDash(r.Key) }, none, nil)
}

// blocksChart shows the cost of the last 48 billing blocks.
func (d *Data) blocksChart() (chart, error) {
	c := chart{ID: "blocks", Title: "Cost per 5-hour billing block"}
	var bs []report.Block
	for _, b := range d.Blocks.Blocks {
		if !b.Gap {
			bs = append(bs, b)
		}
	}
	if len(bs) == 0 {
		c.Empty = "No billing blocks in this period."
		return c, nil
	}
	if len(bs) > 48 {
		c.Note = fmt.Sprintf("The last 48 of %d blocks.", len(bs))
		bs = bs[len(bs)-48:]
	}
	loc := d.Daily.Location
	labels := make([]string, len(bs))
	vals := make([]float64, len(bs))
	for i, b := range bs {
		labels[i] = b.Start.In(loc).Format("01-02 15:04")
		vals[i] = b.Cost
	}
	svg, err := stackedBars(c.Title, labels, []series{{name: "block cost", values: vals, color: colorAt(2)}}, chartW, 280)
	if err != nil {
		return c, err
	}
	c.SVG = template.HTML(svg)
	t := &table{Head: []string{"Block start", "Last activity", "Records", "Total tokens", "Cost", "Models"},
		Right: []bool{false, false, true, true, true, false}}
	for i := len(bs) - 1; i >= 0 && i >= len(bs)-12; i-- {
		b := bs[i]
		start := b.Start.In(loc).Format("2006-01-02 15:04")
		if b.Active {
			start += " (active)"
		}
		var names []string
		for _, m := range b.Models {
			names = append(names, report.ModelLabel(report.ModelKey{Model: m.Model}))
		}
		t.Rows = append(t.Rows, row{[]string{start, b.Last.In(loc).Format("2006-01-02 15:04"), report.Num(b.Records),
			report.Num(b.TotalTokens), usd(b.Usage), joinUnique(names)}})
	}
	c.Table = t
	return c, nil
}

func joinUnique(ss []string) string {
	seen := map[string]bool{}
	out := ""
	for _, s := range ss {
		if seen[s] {
			continue
		}
		seen[s] = true
		if out != "" {
			out += ", "
		}
		out += s
	}
	return out
}

// toolsChart shows calls per tool and a table with the error rates.
func (d *Data) toolsChart() (chart, error) {
	c := chart{ID: "tools", Title: "Tool calls"}
	rows := d.Tools.ToolRows
	if len(rows) == 0 {
		c.Empty = "No tool calls in this period."
		return c, nil
	}
	if len(rows) > d.Opts.Top {
		c.Note = fmt.Sprintf("The %d most called of %d tools.", d.Opts.Top, len(rows))
		rows = rows[:d.Opts.Top]
	}
	labels := make([]string, len(rows))
	vals := make([]float64, len(rows))
	for i, t := range rows {
		labels[i], vals[i] = orDash(t.Tool), float64(t.Calls)
	}
	svg, err := hbars("Tool calls", "calls", labels, vals, false, chartW)
	if err != nil {
		return c, err
	}
	c.SVG = template.HTML(svg)
	t := &table{Head: []string{"Tool", "Calls", "Results", "Errors", "Error rate"}, Right: []bool{false, true, true, true, true}}
	for _, tr := range rows {
		rate := "—"
		if tr.Results > 0 {
			rate = strconv.FormatFloat(100*tr.ErrorRate(), 'f', 1, 64) + "%"
		}
		t.Rows = append(t.Rows, row{[]string{orDash(tr.Tool), report.Num(tr.Calls), report.Num(tr.Results), report.Num(tr.Errors), rate}})
	}
	c.Table = t
	return c, nil
}

// sessionTable lists the most expensive sessions.
func (d *Data) sessionTable() *table {
	// The session report's rows are in tree order: each parent followed
	// by its subagents (Depth > 0, SPEC.md §7.3). The top sessions are the
	// top-level rows by their cost with subagents; each is shown with its
	// subagents under it, as the report has them.
	type group struct {
		rows []report.Row
		cost float64
	}
	var groups []group
	for _, r := range d.Sessions.Rows {
		if r.Depth > 0 && len(groups) > 0 {
			g := &groups[len(groups)-1]
			g.rows = append(g.rows, r)
			continue
		}
		cost := r.Cost
		if r.WithSubagents != nil {
			cost = r.WithSubagents.Cost
		}
		groups = append(groups, group{rows: []report.Row{r}, cost: cost})
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].cost > groups[j].cost })
	if len(groups) > d.Opts.Top {
		groups = groups[:d.Opts.Top]
	}
	t := &table{Head: []string{"Session", "Name", "Project", "Source", "Last activity", "Records", "Cost", "With subagents"},
		Right: []bool{false, false, false, false, false, true, true, true}}
	for _, g := range groups {
		for _, r := range g.rows {
			s := r.Session
			if s == nil {
				s = &report.SessionInfo{}
			}
			last := ""
			if !r.Last.IsZero() {
				last = r.Last.In(d.Daily.Location).Format("2006-01-02 15:04")
			}
			key := shorten(r.Key, 13)
			if r.Depth > 0 {
				key = strings.Repeat("\u00a0\u00a0", r.Depth) + "↳ " + key
			}
			with := ""
			if r.WithSubagents != nil {
				with = usd(*r.WithSubagents)
			}
			t.Rows = append(t.Rows, row{[]string{key, shorten(s.Name, 40), s.Project, s.Source, last, report.Num(r.Records), usd(r.Usage), with}})
		}
	}
	return t
}
