package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// caseUsage is the "usage" block of a case's expected.json.
type caseUsage struct {
	CountedRecords *int64   `json:"counted_records"`
	Input          *int64   `json:"input"`
	Output         *int64   `json:"output"`
	CacheRead      *int64   `json:"cache_read"`
	CacheWrite     *int64   `json:"cache_write"`
	CostTotal      *float64 `json:"cost_total"`
	CostSource     string   `json:"cost_source"`
}

func loadCaseUsage(t *testing.T, dir string) *caseUsage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Usage *caseUsage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return exp.Usage
}

// usageKinds are the kinds whose totals cover every counted record.
var usageKinds = []Kind{Daily, Weekly, Monthly, Session, Project, Model, Provider}

// TestCases checks the "usage" block of every shared case that has one
// (c01, c05, c07, c13 and c14 among them) through every usage report: the
// totals of each report are the case's exact totals, and every report
// gives the same totals to the last bit.
func TestCases(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	ents, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, e := range ents {
		dir := filepath.Join(casesDir, e.Name())
		exp := loadCaseUsage(t, dir)
		if exp == nil {
			continue
		}
		checked[e.Name()[:3]] = true
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel() // the cases are independent: one's fsyncs overlap another's work
			db := filepath.Join(t.TempDir(), "r.duckdb")
			reports := reportsOn(t, db, []string{dir}, usageKinds, nil)
			var first *Report
			for i, k := range usageKinds {
				r := reports[i]
				tot := r.Totals
				check := func(what string, want *int64, got int64) {
					if want != nil && *want != got {
						t.Errorf("%s: %s = %d, want %d", k, what, got, *want)
					}
				}
				check("counted records", exp.CountedRecords, tot.Records)
				check("input", exp.Input, tot.Input)
				check("output", exp.Output, tot.Output)
				check("cache_read", exp.CacheRead, tot.CacheRead)
				check("cache_write", exp.CacheWrite, tot.CacheWrite)
				if exp.CostTotal != nil {
					if !tot.Complete() || relDiff(tot.Cost, *exp.CostTotal) > 1e-9 {
						t.Errorf("%s: cost %v (complete %v), want %v", k, tot.Cost, tot.Complete(), *exp.CostTotal)
					}
				}
				if strings.Contains(exp.CostSource, "never recorded") && tot.RecordedRecords != 0 {
					t.Errorf("%s: %d records costed from a recorded cost, want none", k, tot.RecordedRecords)
				}
				if first == nil {
					first = r
				} else if d := cmp.Diff(first.Totals, r.Totals, cmp.AllowUnexported(Usage{}, femto{})); d != "" {
					t.Errorf("%s totals differ from %s totals (-%s +%s):\n%s", k, first.Kind, first.Kind, k, d)
				}
			}
		})
	}
	for _, c := range []string{"c01", "c05", "c07", "c13", "c14"} {
		if !checked[c] {
			t.Errorf("case %s has no usage expectations: the cases directory moved?", c)
		}
	}
}

func soleModel(t *testing.T, r *Report) ModelUsage {
	t.Helper()
	if len(r.Rows) != 1 || len(r.Rows[0].Models) != 1 {
		t.Fatalf("want one row with one model, got %+v", r.Rows)
	}
	return r.Rows[0].Models[0]
}

// TestC05V1Calculated: v1 usage has no recorded cost; auto prices it from
// the bundled table, record by record (computed here from the table).
func TestC05V1Calculated(t *testing.T) {
	dir := filepath.Join(casesDir, "c05-v1-linear-with-compaction-index")
	p, ok := pricing.Default().Lookup("anthropic", "claude-sonnet-4-5")
	if !ok {
		t.Fatal("no bundled price for anthropic/claude-sonnet-4-5")
	}
	want := p.Cost(pricing.Tokens{Input: 50, Output: 10}).Total + p.Cost(pricing.Tokens{Input: 70, Output: 15, CacheRead: 10}).Total
	r := runOn(t, Daily, []string{dir}, nil)
	tot := r.Totals
	if tot.CalculatedRecords != 2 || tot.RecordedRecords != 0 || !tot.Complete() || relDiff(tot.Cost, want) > 1e-12 {
		t.Errorf("totals %+v, want 2 calculated records costing %v", tot, want)
	}
	if len(r.Rows) != 1 || r.Rows[0].Key != "2025-01-02" {
		t.Errorf("rows %+v, want one row for 2025-01-02 (entry timestamps, not the later header)", r.Rows)
	}
	// Recorded mode: no recorded cost, so unpriced — never $0.
	rec := runOn(t, Daily, []string{dir}, func(o *Options) { o.CostMode = export.CostRecorded })
	if rec.Totals.Priced() || rec.Totals.Unpriced.Records != 2 || rec.Totals.Unpriced.Input != 120 {
		t.Errorf("recorded mode totals %+v, want 2 unpriced records", rec.Totals)
	}
	if len(rec.Unpriced) != 1 || rec.Unpriced[0].ModelKey != (ModelKey{"anthropic", "claude-sonnet-4-5"}) {
		t.Errorf("unpriced list %+v, want anthropic/claude-sonnet-4-5", rec.Unpriced)
	}
}

// TestC07ForkCountedOnce: the copied assistant message is counted once, in
// the parent, also when the parent moved (its parentSession path points
// nowhere) or was renamed; the fork's session row holds only its own
// record.
func TestC07ForkCountedOnce(t *testing.T) {
	const parentID, forkID = "5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01", "7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02"
	src := filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home")
	parentFile := ".pi/agent/sessions/--home-dev-proj--/2025-05-01T12-00-00-000Z_" + parentID + ".jsonl"
	layouts := []struct {
		name string
		move func(t *testing.T, home string)
	}{
		{"as is", func(*testing.T, string) {}},
		{"parent moved", func(t *testing.T, home string) {
			moveFile(t, filepath.Join(home, parentFile), filepath.Join(home, ".atomic/agent/sessions/elsewhere/2025-05-01T12-00-00-000Z_"+parentID+".jsonl"))
		}},
		{"parent moved and renamed", func(t *testing.T, home string) {
			moveFile(t, filepath.Join(home, parentFile), filepath.Join(home, "archive/old-session.jsonl"))
		}},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			home := copyTree(t, src)
			l.move(t, home)
			r := runOn(t, Session, []string{home}, nil)
			type sess struct {
				ID      string
				Records int64
				Input   int64
				Cost    float64
			}
			var got []sess
			for _, row := range r.Rows {
				got = append(got, sess{row.Key, row.Records, row.Input, row.Cost})
			}
			want := []sess{{parentID, 1, 1000, 0.02}, {forkID, 1, 400, 0.004}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("sessions (-want +got):\n%s", d)
			}
			if r.Totals.Records != 2 || r.Totals.Input != 1400 || relDiff(r.Totals.Cost, 0.024) > 1e-9 {
				t.Errorf("totals %+v, want 2 records, 1400 input, $0.024", r.Totals)
			}
		})
	}
}

// TestC13ChildUsage: Prime's child usage counts once, on top of the
// parent's own usage, under the parent's model.
func TestC13ChildUsage(t *testing.T) {
	r := runOn(t, Model, []string{filepath.Join(casesDir, "c13-prime-child-usage")}, nil)
	m := soleModel(t, r)
	if m.ModelKey != (ModelKey{"anthropic", "claude-sonnet-4-5"}) || m.Records != 3 || m.Input != 3500 ||
		m.Output != 450 || m.RecordedRecords != 3 || relDiff(m.Cost, 0.01725) > 1e-9 {
		t.Errorf("model usage %+v, want anthropic/claude-sonnet-4-5 3 recorded records 3500/450 $0.01725", m)
	}
}

// TestC14BilledKinds: the tool result's usage and the session summary's
// are billed; the session summary names no model and has no recorded
// cost, so it is unpriced (listed, never $0) and the total says so.
func TestC14BilledKinds(t *testing.T) {
	dir := filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds")
	r := runOn(t, Model, []string{dir}, nil)
	type m struct {
		Key                     ModelKey
		Records, Input, Output  int64
		Cost                    float64
		Recorded, Unpriced      int64
		UnpricedIn, UnpricedOut int64
	}
	var got []m
	for _, row := range r.Rows {
		got = append(got, m{row.ModelKey, row.Records, row.Input, row.Output, row.Cost, row.RecordedRecords,
			row.Unpriced.Records, row.Unpriced.Input, row.Unpriced.Output})
	}
	want := []m{
		{ModelKey{"anthropic", "claude-sonnet-4-5"}, 2, 2000, 150, 0.0033 + 0.00495, 2, 0, 0, 0},
		{ModelKey{}, 1, 812, 21, 0, 0, 1, 812, 21},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return relDiff(a, b) <= 1e-12 })); d != "" {
		t.Errorf("model rows (-want +got):\n%s", d)
	}
	if r.Totals.Complete() || r.Totals.Unpriced.Records != 1 || len(r.Unpriced) != 1 || r.Unpriced[0].ModelKey != (ModelKey{}) {
		t.Errorf("totals %+v, unpriced %+v: want the session summary listed as unpriced", r.Totals, r.Unpriced)
	}
	var b strings.Builder
	if err := r.WriteText(&b, Table, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "$0.0083 + unpriced") || strings.Contains(b.String(), "$0.00 ") {
		t.Errorf("table does not say the total includes unpriced usage, or shows $0.00:\n%s", b.String())
	}
}

// TestC14ExportAndReportAgree: over c14, the views of an export (what
// `sessions-etl query` shows) and the report give the same cost, the same
// unpriced records and the same unpriced list: the session summary has no
// model in both, and is unpriced in both.
func TestC14ExportAndReportAgree(t *testing.T) {
	dir := filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds")
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "export.duckdb")
	if _, err := export.Run(context.Background(), export.Options{Roots: roots, Workers: 2, DuckDBPath: full}); err != nil {
		t.Fatal(err)
	}
	db, err := export.OpenDB(full + "?access_mode=READ_ONLY")
	if err != nil {
		t.Fatal(err)
	}
	var viewCost float64
	var viewRecords, viewUnpriced int64
	if err := db.QueryRow("SELECT sum(cost_total), sum(records), sum(unpriced_records) FROM daily_usage").Scan(&viewCost, &viewRecords, &viewUnpriced); err != nil {
		t.Fatal(err)
	}
	var unpricedRows []string
	rows, err := db.Query("SELECT coalesce(provider, ''), coalesce(model, ''), records, input, output FROM unpriced_models")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p, m string
		var n, in, out int64
		if err := rows.Scan(&p, &m, &n, &in, &out); err != nil {
			t.Fatal(err)
		}
		unpricedRows = append(unpricedRows, fmt.Sprintf("%s/%s %d %d/%d", p, m, n, in, out))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for name, path := range map[string]string{"the export's database": full, "the report's own database": ""} {
		t.Run(name, func(t *testing.T) {
			var r *Report
			if path == "" {
				r = runOn(t, Daily, []string{dir}, nil)
			} else {
				r = runOnDB(t, Daily, path, []string{dir}, func(o *Options) { o.Managed = false })
			}
			if relDiff(r.Totals.Cost, viewCost) > 1e-12 || r.Totals.Records != viewRecords || r.Totals.Unpriced.Records != viewUnpriced {
				t.Errorf("report $%v, %d records, %d unpriced; daily_usage $%v, %d, %d", r.Totals.Cost, r.Totals.Records,
					r.Totals.Unpriced.Records, viewCost, viewRecords, viewUnpriced)
			}
			if relDiff(viewCost, 0.0033+0.00495) > 1e-12 || viewUnpriced != 1 {
				t.Errorf("daily_usage $%v with %d unpriced, want $0.00825 and the session summary unpriced", viewCost, viewUnpriced)
			}
			var got []string
			for _, u := range r.Unpriced {
				got = append(got, fmt.Sprintf("%s/%s %d %d/%d", u.Provider, u.Model, u.Records, u.Input, u.Output))
			}
			if d := cmp.Diff(unpricedRows, got); d != "" {
				t.Errorf("unpriced (-unpriced_models +report):\n%s", d)
			}
		})
	}
}
