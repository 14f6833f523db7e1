package report

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Budgets (SPEC.md §7.8): spend limits in USD per day, ISO week and
// month, overall and per project. A zero limit is no limit. They come from
// flags (and, once merged, the config file's budgets section); this
// package takes them as a plain value.

// Limits are the USD limits of one scope; 0 means none.
type Limits struct {
	Daily, Weekly, Monthly float64
}

// Any reports whether some limit is set.
func (l Limits) Any() bool { return l.Daily > 0 || l.Weekly > 0 || l.Monthly > 0 }

// For returns the limit of a report kind (0 for kinds without periods).
func (l Limits) For(k Kind) float64 {
	switch k {
	case Daily:
		return l.Daily
	case Weekly:
		return l.Weekly
	case Monthly:
		return l.Monthly
	}
	return 0
}

// Budgets are the overall limits and those of single projects (keyed by
// what --project accepts: a project label or a cwd).
type Budgets struct {
	Limits
	Projects map[string]Limits
}

// Any reports whether any limit is set.
func (b Budgets) Any() bool {
	if b.Limits.Any() {
		return true
	}
	for _, l := range b.Projects {
		if l.Any() {
			return true
		}
	}
	return false
}

// LimitFor is the limit of a report of kind k filtered to project ("" for
// none): the project's own limit when it has one, else the overall limit.
func (b Budgets) LimitFor(k Kind, project string) float64 {
	if project != "" {
		if l, ok := b.Projects[project]; ok && l.For(k) > 0 {
			return l.For(k)
		}
	}
	return b.Limits.For(k)
}

// ParseProjectBudget reads "NAME:daily=5,weekly=20,monthly=80" (any of the
// three, at least one).
func ParseProjectBudget(s string) (string, Limits, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return "", Limits{}, fmt.Errorf("project budget %q: want NAME:daily=USD[,weekly=USD][,monthly=USD]", s)
	}
	name, spec := s[:i], s[i+1:]
	var l Limits
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return "", Limits{}, fmt.Errorf("project budget %q: %q is not period=USD", s, part)
		}
		usd, err := ParseUSD(v)
		if err != nil {
			return "", Limits{}, fmt.Errorf("project budget %q: %v", s, err)
		}
		switch strings.ToLower(k) {
		case "daily", "day":
			l.Daily = usd
		case "weekly", "week":
			l.Weekly = usd
		case "monthly", "month":
			l.Monthly = usd
		default:
			return "", Limits{}, fmt.Errorf("project budget %q: unknown period %q (want daily, weekly or monthly)", s, k)
		}
	}
	return name, l, nil
}

// ParseUSD reads a positive amount of dollars ("25", "$12.50").
func ParseUSD(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("budget %q: want a positive amount of US dollars", s)
	}
	return v, nil
}

// BudgetShare is a row's cost against its period's limit.
type BudgetShare struct {
	Limit float64
	Cost  float64 // the priced part
	Share float64 // Cost / Limit
	Over  bool    // Cost > Limit
	// Incomplete says some of the period's usage has no price: the real
	// cost is higher than Cost.
	Incomplete bool
}

func shareOf(u Usage, limit float64) BudgetShare {
	return BudgetShare{Limit: limit, Cost: u.Cost, Share: u.Cost / limit, Over: u.Cost > limit, Incomplete: !u.Complete()}
}

// RowBudget is the budget share of a row of a daily, weekly or monthly
// report with r.Budget set (ok false otherwise, and for the row of
// records without a timestamp).
func (r *Report) RowBudget(row Row) (BudgetShare, bool) {
	if r.Budget <= 0 || !r.Kind.timeKind() || row.Key == "" {
		return BudgetShare{}, false
	}
	return shareOf(row.Usage, r.Budget), true
}

// budgetCell is the table cell of a budget share: "42%" or "OVER 130%",
// "≥" when part of the usage is unpriced.
func budgetCell(s BudgetShare) string {
	c := percent(s.Share)
	if s.Incomplete {
		c = "≥" + c
	}
	if s.Over {
		c = "OVER " + c
	}
	return c
}

// addBudgetColumn appends the budget column to a daily, weekly or monthly
// grid (g.rows holds r.Rows in order, with breakdown lines marked in
// g.sub).
func (r *Report) addBudgetColumn(g *grid) {
	if r.Budget <= 0 || !r.Kind.timeKind() {
		return
	}
	g.cols = append(g.cols, column{"Budget " + money(r.Budget), true})
	i := 0
	for j := range g.rows {
		cell := ""
		if j >= len(g.sub) || !g.sub[j] {
			if i < len(r.Rows) {
				if s, ok := r.RowBudget(r.Rows[i]); ok {
					cell = budgetCell(s)
				}
			}
			i++
		}
		g.rows[j] = append(g.rows[j], cell)
	}
	if g.totals != nil {
		g.totals = append(g.totals, "")
	}
}

// overBudgetNote is the line under a table with periods over budget.
func (r *Report) overBudgetNote() string {
	if r.Budget <= 0 || !r.Kind.timeKind() {
		return ""
	}
	n := 0
	for _, row := range r.Rows {
		if s, ok := r.RowBudget(row); ok && s.Over {
			n++
		}
	}
	what := map[Kind]string{Daily: "day", Weekly: "week", Monthly: "month"}[r.Kind]
	if n == 0 {
		return fmt.Sprintf("\nNo %s over the budget of %s.\n", what, money(r.Budget))
	}
	if n > 1 {
		what += "s"
	}
	return fmt.Sprintf("\n%d %s over the budget of %s.\n", n, what, money(r.Budget))
}

type jsonBudgetPeriod struct {
	Period         string  `json:"period"`
	Cost           float64 `json:"cost"`
	Budget         float64 `json:"budget"`
	PercentUsed    float64 `json:"percentUsed"`
	OverBudget     bool    `json:"overBudget"`
	CostIncomplete bool    `json:"costIncomplete"`
}

type jsonBudget struct {
	Budget  float64            `json:"budget"`
	Periods []jsonBudgetPeriod `json:"periods"`
	Over    []string           `json:"overBudget"`
}

// budgetJSON is the "budget" member of a daily, weekly or monthly report's
// JSON (nil without a budget): every period against the limit, and the
// periods over it.
func (r *Report) budgetJSON() *jsonBudget {
	if r.Budget <= 0 || !r.Kind.timeKind() {
		return nil
	}
	j := &jsonBudget{Budget: r.Budget, Periods: []jsonBudgetPeriod{}, Over: []string{}}
	for _, row := range r.Rows {
		s, ok := r.RowBudget(row)
		if !ok {
			continue
		}
		j.Periods = append(j.Periods, jsonBudgetPeriod{Period: row.Key, Cost: s.Cost, Budget: s.Limit, PercentUsed: 100 * s.Share,
			OverBudget: s.Over, CostIncomplete: s.Incomplete})
		if s.Over {
			j.Over = append(j.Over, row.Key)
		}
	}
	return j
}

// PeriodCheck is one current period against its budget.
type PeriodCheck struct {
	Project string // "" for the overall budget
	Period  Kind   // Daily, Weekly or Monthly
	// Key names the period: the day, the ISO week (2026-W49) or the month.
	Key        string
	Start, End time.Time // [Start, End) in the report's zone
	Usage      Usage
	BudgetShare
}

// BudgetCheck is the answer of [CheckBudgets].
type BudgetCheck struct {
	Report  // the question (zone, cost mode, filters) and the ingest
	Now     time.Time
	Periods []PeriodCheck
}

// Over reports whether some current period is over its budget.
func (c *BudgetCheck) Over() bool {
	for _, p := range c.Periods {
		if p.Over {
			return true
		}
	}
	return false
}

// CheckBudgets refreshes the database (unless NoRefresh) and compares the
// current day, ISO week and month (in opts.Location, at now) with the
// budgets: overall (with opts' filters) and per project.
func CheckBudgets(ctx context.Context, opts Options, b Budgets, now time.Time) (*BudgetCheck, error) {
	if !b.Any() {
		return nil, fmt.Errorf("no budget to check")
	}
	o := opts
	o.Kind = Daily
	if err := o.check(); err != nil {
		return nil, err
	}
	loc := o.Location
	y, m, d := now.In(loc).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	o.Since, o.Until = monday, today
	if first.Before(monday) {
		o.Since = first
	}
	c := &BudgetCheck{Now: now}
	check := func(project string, l Limits) error {
		oo := o
		if project != "" {
			oo.Project = project
		}
		r, err := Run(ctx, oo)
		if err != nil {
			return err
		}
		if c.Kind == "" {
			c.Report = *r
			c.Rows, c.Totals, c.Unpriced = nil, Usage{}, nil
			c.Kind, c.Since, c.Until = "budget", time.Time{}, time.Time{}
			o.NoRefresh = true // one ingest for every check
		}
		sum := func(from time.Time) Usage {
			var u Usage
			for _, row := range r.Rows {
				if row.Key == "" {
					continue
				}
				day, err := time.Parse(time.DateOnly, row.Key)
				if err == nil && !day.Before(from) && !day.After(today) {
					u.add(row.Usage)
				}
			}
			return u
		}
		iy, iw := today.ISOWeek()
		periods := []struct {
			k          Kind
			key        string
			from, next time.Time
			limit      float64
		}{
			{Daily, today.Format(time.DateOnly), today, today.AddDate(0, 0, 1), l.Daily},
			{Weekly, fmt.Sprintf("%04d-W%02d", iy, iw), monday, monday.AddDate(0, 0, 7), l.Weekly},
			{Monthly, today.Format("2006-01"), first, first.AddDate(0, 1, 0), l.Monthly},
		}
		for _, p := range periods {
			if p.limit <= 0 {
				continue
			}
			u := sum(p.from)
			start := time.Date(p.from.Year(), p.from.Month(), p.from.Day(), 0, 0, 0, 0, loc)
			end := time.Date(p.next.Year(), p.next.Month(), p.next.Day(), 0, 0, 0, 0, loc)
			c.Periods = append(c.Periods, PeriodCheck{Project: project, Period: p.k, Key: p.key, Start: start, End: end,
				Usage: u, BudgetShare: shareOf(u, p.limit)})
		}
		return nil
	}
	if b.Limits.Any() {
		if err := check("", b.Limits); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(b.Projects))
	for n := range b.Projects {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if b.Projects[n].Any() {
			if err := check(n, b.Projects[n]); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// WriteText prints each current period against its budget, one line each.
func (c *BudgetCheck) WriteText(w interface{ Write([]byte) (int, error) }) error {
	var s strings.Builder
	fmt.Fprintf(&s, "Budgets at %s (%s; cost %s)\n\n", c.Now.In(c.Location).Format("2006-01-02 15:04"), c.Zone, c.CostMode)
	g := grid{cols: []column{{"Scope", false}, {"Period", false}, {"Cost", true}, {"Budget", true}, {"Used", true}, {"Status", false}}}
	for _, p := range c.Periods {
		scope := "all"
		if p.Project != "" {
			scope = "project " + p.Project
		}
		status := "ok"
		if p.Over {
			status = "OVER by " + money(p.Cost-p.Limit)
		}
		if p.Incomplete {
			status += " (some usage unpriced: cost is at least this)"
		}
		g.rows = append(g.rows, []string{scope, p.Key, costText(p.Usage), money(p.Limit), percent(p.Share), status})
	}
	g.table(&s)
	_, err := w.Write([]byte(s.String()))
	return err
}

type jsonPeriodCheck struct {
	Project        *string `json:"project"`
	Period         string  `json:"period"`
	Key            string  `json:"key"`
	Start          string  `json:"start"`
	End            string  `json:"end"`
	Cost           float64 `json:"cost"`
	Budget         float64 `json:"budget"`
	PercentUsed    float64 `json:"percentUsed"`
	OverBudget     bool    `json:"overBudget"`
	CostIncomplete bool    `json:"costIncomplete"`
	Records        int64   `json:"records"`
	UnpricedTokens int64   `json:"unpricedTokens"`
}

// WriteJSON writes the check as one JSON document.
func (c *BudgetCheck) WriteJSON(w interface{ Write([]byte) (int, error) }) error {
	ps := []jsonPeriodCheck{}
	for _, p := range c.Periods {
		ps = append(ps, jsonPeriodCheck{Project: optString(p.Project), Period: string(p.Period), Key: p.Key,
			Start: p.Start.Format(time.RFC3339), End: p.End.Format(time.RFC3339), Cost: p.Cost, Budget: p.Limit,
			PercentUsed: 100 * p.Share, OverBudget: p.Over, CostIncomplete: p.Incomplete, Records: p.Usage.Records,
			UnpricedTokens: p.Usage.Unpriced.TotalTokens})
	}
	meta := c.meta()
	return encodeJSON(w, map[string]any{"periods": ps, "overBudget": c.Over(), "now": *isoMillis(c.Now), "report": meta})
}
