package report

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// TestFilters: --source, --project and --model select records, in usage
// and tools reports alike; a forked tool call is counted once.
func TestFilters(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	db := filepath.Join(t.TempDir(), "r.duckdb")
	cases := []struct {
		name      string
		edit      func(*Options)
		input     int64 // total input of the usage reports
		toolCalls map[string]int64
	}{
		{"none", func(*Options) {}, 9182, map[string]int64{"bash": 2, "read": 2}},
		{"source atomic", func(o *Options) { o.Source = "atomic" }, 1050, map[string]int64{"read": 1}},
		{"source pi", func(o *Options) { o.Source = "pi" }, 1400 + 300, map[string]int64{"bash": 2, "read": 1}},
		{"source custom", func(o *Options) { o.Source = "custom" }, 120 + 3500 + 2812, map[string]int64{}},
		{"project name", func(o *Options) { o.Project = "app" }, 300, map[string]int64{"bash": 2, "read": 1}},
		{"project cwd", func(o *Options) { o.Project = "/w/app-fork" }, 1050, map[string]int64{"read": 1}},
		{"project cwd, trailing slash", func(o *Options) { o.Project = "/w/app-fork/" }, 1050, map[string]int64{"read": 1}},
		{"project name, trailing slash", func(o *Options) { o.Project = "app/" }, 300, map[string]int64{"bash": 2, "read": 1}},
		{"project none", func(o *Options) { o.Project = "nope" }, 0, map[string]int64{}},
		{"model substring, any case", func(o *Options) { o.Model = "GPT" }, 1000, map[string]int64{"read": 1}},
		{"model provider/", func(o *Options) { o.Model = "anthropic/" }, 7320, map[string]int64{"bash": 2, "read": 1}},
		{"model unpriced", func(o *Options) { o.Model = "secret" }, 50, map[string]int64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kinds := []Kind{Daily, Session, Model, Tools}
			rs := reportsOn(t, db, goldenInputs(), kinds, c.edit)
			for i, k := range kinds[:3] {
				if r := rs[i]; r.Totals.Input != c.input {
					t.Errorf("%s: input %d, want %d", k, r.Totals.Input, c.input)
				}
			}
			r := rs[3]
			got := map[string]int64{}
			for _, row := range r.ToolRows {
				got[row.Tool] = row.Calls
			}
			if d := cmp.Diff(c.toolCalls, got); d != "" {
				t.Errorf("tool calls (-want +got):\n%s", d)
			}
		})
	}
}

// TestPricingOverride: a price table of the user's replaces the bundled
// one: records without a recorded cost are priced from it, models it does
// not know are unpriced, and the database is not re-read for it.
func TestPricingOverride(t *testing.T) {
	table, err := pricing.Parse([]byte(`{"source": "test", "retrieved": "2026-01-01", "unit": "USD per million tokens",
		"models": [{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 1, "output": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "r.duckdb")
	dirs := []string{filepath.Join(casesDir, "c05-v1-linear-with-compaction-index"), filepath.Join("testdata", "tools")}
	runOnDB(t, Daily, db, dirs, nil) // build the database with the bundled table
	use := func(mode export.CostMode) func(*Options) {
		return func(o *Options) { o.Prices, o.PricingID, o.CostMode = table, "file:test", mode }
	}
	// auto: recorded costs stay; c05 (no cost) is priced from the file at
	// input 1, output 2, cache read = input; gpt-5 and acme are unpriced.
	r := runOnDB(t, Model, db, dirs, use(export.CostAuto))
	if !r.Repriced || r.Ingest.Read != 0 {
		t.Errorf("Repriced %v, files read %d: want costs recomputed without reading files", r.Repriced, r.Ingest.Read)
	}
	wantCost := (120*1+25*2+10*1)/1e6 + 0.0006 + 0.00108
	if relDiff(r.Totals.Cost, wantCost) > 1e-12 || r.Totals.Unpriced.Records != 2 || r.Totals.CalculatedRecords != 2 {
		t.Errorf("auto with the file: %+v, want cost %v, 2 calculated, 2 unpriced (gpt-5, acme)", r.Totals, wantCost)
	}
	var unpriced []ModelKey
	for _, u := range r.Unpriced {
		unpriced = append(unpriced, u.ModelKey)
	}
	if d := cmp.Diff([]ModelKey{{"openai", "gpt-5"}, {"acme", "secret-model-1"}}, unpriced); d != "" {
		t.Errorf("unpriced models (-want +got):\n%s", d)
	}
	// calculate: every sonnet record from the file.
	r = runOnDB(t, Model, db, dirs, use(export.CostCalculate))
	wantCost = (120*1 + 25*2 + 10*1 + 300*1 + 50*2 + 100*1) / 1e6
	if relDiff(r.Totals.Cost, wantCost) > 1e-12 || r.Totals.CalculatedRecords != 4 || r.Totals.RecordedRecords != 0 {
		t.Errorf("calculate with the file: %+v, want cost %v from 4 calculated records", r.Totals, wantCost)
	}
	// recorded: only recorded costs; the v1 records have none.
	r = runOnDB(t, Model, db, dirs, use(export.CostRecorded))
	if relDiff(r.Totals.Cost, 0.0006+0.00108) > 1e-12 || r.Totals.Unpriced.Records != 4 {
		t.Errorf("recorded: %+v, want $0.00168 and 4 unpriced records", r.Totals)
	}
}
