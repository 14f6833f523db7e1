package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// budgetHome writes records on three days of the ISO week of Wednesday
// 2025-06-04 (2025-W23): Mon 2 ($3), Tue 3 ($1.5), Wed 4 ($2 and an
// unpriced record), and Fri May 30 ($10: the previous week and month).
func budgetHome(t *testing.T) string {
	dir := t.TempDir()
	sessionFile(t, dir, "22222222-0000-4000-8000-000000000001", "2025-05-30T10:00:00.000Z", []brec{
		{at: "2025-05-30T10:00:00.000Z", input: 10, output: 1, cost: 10},
		{at: "2025-06-02T10:00:00.000Z", input: 10, output: 1, cost: 3},
		{at: "2025-06-03T10:00:00.000Z", input: 10, output: 1, cost: 1.5},
		{at: "2025-06-04T09:00:00.000Z", input: 10, output: 1, cost: 2},
		{at: "2025-06-04T09:30:00.000Z", model: "no-such-model-xyz", input: 10, output: 1},
	})
	return dir
}

// TestBudgetMarksPeriods: a daily report with a budget marks the days
// over it, in the table and in JSON.
func TestBudgetMarksPeriods(t *testing.T) {
	dir := budgetHome(t)
	r := runOn(t, Daily, []string{dir}, nil)
	r.Budget = 2.5
	var txt bytes.Buffer
	if err := r.WriteText(&txt, Table, false); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{"Budget $2.50", "OVER 400.0%", "OVER 120.0%", "60.0%", "≥80.0%", "2 days over the budget of $2.50."} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Budget struct {
			Budget  float64 `json:"budget"`
			Periods []struct {
				Period         string  `json:"period"`
				OverBudget     bool    `json:"overBudget"`
				CostIncomplete bool    `json:"costIncomplete"`
				PercentUsed    float64 `json:"percentUsed"`
			} `json:"periods"`
			Over []string `json:"overBudget"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Budget.Budget != 2.5 || len(doc.Budget.Periods) != 4 || strings.Join(doc.Budget.Over, ",") != "2025-05-30,2025-06-02" ||
		!doc.Budget.Periods[3].CostIncomplete || math.Abs(doc.Budget.Periods[3].PercentUsed-80) > 1e-9 {
		t.Errorf("budget JSON %+v", doc.Budget)
	}
	// Monthly: June $6.50 of a $5 budget.
	m := runOn(t, Monthly, []string{dir}, nil)
	m.Budget = 5
	if s, ok := m.RowBudget(m.Rows[1]); !ok || !s.Over || m.Rows[1].Key != "2025-06" {
		t.Errorf("June %+v", s)
	}
	// No budget: no column.
	r.Budget = 0
	txt.Reset()
	if err := r.WriteText(&txt, Table, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "Budget") {
		t.Errorf("budget column without a budget:\n%s", txt.String())
	}
}

// TestCheckBudgets: the current day, ISO week and month at a fixed now;
// a period is over when its priced cost is.
func TestCheckBudgets(t *testing.T) {
	dir := budgetHome(t)
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "b.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	now := utc("2025-06-04T12:00:00Z")
	c, err := CheckBudgets(context.Background(), o, Budgets{Limits: Limits{Daily: 2.5, Weekly: 6, Monthly: 100},
		Projects: map[string]Limits{"proj": {Daily: 1}, "other": {Weekly: 1}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		project, key string
		cost         float64
		over, incomp bool
	}
	wants := []want{
		{"", "2025-06-04", 2, false, true},
		{"", "2025-W23", 6.5, true, true},
		{"", "2025-06", 6.5, false, true},
		{"other", "2025-W23", 0, false, false},
		{"proj", "2025-06-04", 2, true, true},
	}
	if len(c.Periods) != len(wants) {
		t.Fatalf("%d periods: %+v", len(c.Periods), c.Periods)
	}
	for i, w := range wants {
		p := c.Periods[i]
		if p.Project != w.project || p.Key != w.key || math.Abs(p.Cost-w.cost) > 1e-12 || p.Over != w.over || p.Incomplete != w.incomp {
			t.Errorf("period %d: %s %s $%v over=%v incomplete=%v; want %+v", i, p.Project, p.Key, p.Cost, p.Over, p.Incomplete, w)
		}
	}
	if !c.Over() {
		t.Error("Over() = false")
	}
	// In Tokyo (UTC+9) at 2025-06-04 12:00 UTC it is the 4th at 21:00.
	o.Location = mustLoc(t, "Asia/Tokyo")
	c, err = CheckBudgets(context.Background(), o, Budgets{Limits: Limits{Daily: 100}}, utc("2025-06-04T16:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Periods) != 1 || c.Periods[0].Key != "2025-06-05" || c.Periods[0].Usage.Records != 0 || c.Over() {
		t.Errorf("Tokyo: %+v", c.Periods)
	}
	if _, err := CheckBudgets(context.Background(), o, Budgets{}, now); err == nil {
		t.Error("no budget: no error")
	}
}
