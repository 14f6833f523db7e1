package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/synth"
)

var (
	synthOnce sync.Once
	synthHome string
	synthMan  *synth.Manifest
	synthErr  error
)

// synthFixture generates (once per test binary) a home with the generator
// and its manifest, the oracle of the report totals. The manifest counts
// the records of BOM files, which SPEC.md §1.5 has export and report read
// with the BOM dropped.
func synthFixture(t *testing.T) (string, *synth.Manifest) {
	t.Helper()
	synthOnce.Do(func() {
		dir, err := os.MkdirTemp("", "report-synth-")
		if err != nil {
			synthErr = err
			return
		}
		synthHome = filepath.Join(dir, "home")
		sessions := 120
		if testing.Short() {
			sessions = 40 // the inner loop: the same kinds of sessions, fewer of each
		}
		synthMan, synthErr = synth.Generate(context.Background(), synth.Options{Out: synthHome, Sessions: sessions, Seed: 5})
	})
	if synthErr != nil {
		t.Fatal(synthErr)
	}
	return synthHome, synthMan
}

func TestMain(m *testing.M) {
	code := m.Run()
	if synthHome != "" {
		if os.Getenv("KEEP") == "" {
			_ = os.RemoveAll(filepath.Dir(synthHome))
		}
	}
	os.Exit(code)
}

// manifestKey maps a manifest by_model key to the report's model key:
// "unknown/unknown" (session_summary) has neither provider nor model.
func manifestKey(k string) ModelKey {
	if k == "unknown/unknown" {
		return ModelKey{}
	}
	p, m, _ := strings.Cut(k, "/")
	return ModelKey{p, m}
}

// expectedModel is what the report must say of one manifest model,
// computed from the manifest and the price table only: recorded costs as
// the generator wrote them, plus the uncosted tokens priced at the table's
// base rates (no record's prompt reaches a long-context tier, so the sum
// of the records' costs is the sums' cost at base rates; Price.Cost on the
// sums would wrongly pick a tier); uncosted tokens of a model without a
// price (or without a model) are unpriced.
type expectedModel struct {
	tokens   Tokens
	cost     float64
	unpriced Tokens
}

func expectModel(k ModelKey, mu *synth.ModelUsage) expectedModel {
	e := expectedModel{tokens: fromSynth(mu.Tokens), cost: mu.CostRecorded}
	un := fromSynth(mu.Uncosted)
	if p, ok := pricing.Default().Lookup(k.Provider, k.Model); ok && k.Model != "" {
		r := p.Rates
		e.cost += (float64(un.Input)*r.Input + float64(un.Output)*r.Output + float64(un.CacheRead)*r.CacheRead +
			float64(un.CacheWrite)*r.CacheWrite) / 1e6
	} else {
		e.unpriced = un
	}
	return e
}

func fromSynth(t synth.Tokens) Tokens {
	return Tokens{Records: t.Records, Input: t.Input, Output: t.Output, CacheRead: t.CacheRead,
		CacheWrite: t.CacheWrite, TotalTokens: t.TotalTokens}
}

// TestSynthTotals: on a generated home, the totals of every report equal
// the manifest's fork-deduplicated totals (tokens exactly, cost within
// 1e-9 relative), and so does each model of the model report.
func TestSynthTotals(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, m := synthFixture(t)
	var want expectedModel
	wantModels := map[ModelKey]expectedModel{}
	for k, mu := range m.Usage.ByModel {
		key := manifestKey(k)
		e := expectModel(key, mu)
		wantModels[key] = e
		want.tokens.add(e.tokens)
		want.cost += e.cost
		want.unpriced.add(e.unpriced)
	}
	if want.tokens != fromSynth(m.Usage.Tokens) {
		t.Fatalf("manifest by_model sums %+v differ from its totals %+v", want.tokens, m.Usage.Tokens)
	}
	if want.unpriced.Records == 0 || m.Usage.Copies == 0 {
		t.Fatalf("the generated home has no unpriced usage (%d) or no fork copies (%d): the test proves less than it says", want.unpriced.Records, m.Usage.Copies)
	}
	db := filepath.Join(t.TempDir(), "r.duckdb")
	for i, r := range reportsOn(t, db, []string{home}, usageKinds, nil) {
		k := usageKinds[i]
		if r.Totals.Tokens != want.tokens {
			t.Errorf("%s: tokens %+v, manifest %+v", k, r.Totals.Tokens, want.tokens)
		}
		if relDiff(r.Totals.Cost, want.cost) > 1e-9 {
			t.Errorf("%s: cost %.9f, manifest %.9f", k, r.Totals.Cost, want.cost)
		}
		if r.Totals.Unpriced != want.unpriced {
			t.Errorf("%s: unpriced %+v, manifest %+v", k, r.Totals.Unpriced, want.unpriced)
		}
		if k != Model {
			continue
		}
		if len(r.Rows) != len(wantModels) {
			t.Errorf("model report has %d rows, manifest %d models", len(r.Rows), len(wantModels))
		}
		for _, row := range r.Rows {
			e, ok := wantModels[row.ModelKey]
			if !ok {
				t.Errorf("model %s not in the manifest", row.ModelKey)
				continue
			}
			if row.Tokens != e.tokens || row.Unpriced != e.unpriced || relDiff(row.Cost, e.cost) > 1e-9 {
				t.Errorf("model %s: %+v cost %.9f unpriced %+v; manifest %+v cost %.9f unpriced %+v",
					row.ModelKey, row.Tokens, row.Cost, row.Unpriced, e.tokens, e.cost, e.unpriced)
			}
		}
	}
}

// TestSynthDaily: daily totals in UTC, America/Los_Angeles and Asia/Tokyo
// equal the manifest's, day by day.
func TestSynthDaily(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, m := synthFixture(t)
	db := filepath.Join(t.TempDir(), "r.duckdb")
	for _, zone := range synth.DailyZones {
		t.Run(zone, func(t *testing.T) {
			want := map[string]Tokens{}
			for day, tok := range m.Usage.Daily[zone] {
				want[day] = fromSynth(*tok)
			}
			r := runOnDB(t, Daily, db, []string{home}, func(o *Options) { o.Location = mustLoc(t, zone) })
			got := map[string]Tokens{}
			for _, row := range r.Rows {
				got[row.Key] = row.Tokens
			}
			for day, w := range want {
				if got[day] != w {
					t.Errorf("%s: %+v, manifest %+v", day, got[day], w)
				}
			}
			for day := range got {
				if _, ok := want[day]; !ok {
					t.Errorf("%s: %+v, not in the manifest", day, got[day])
				}
			}
		})
	}
}

// TestSynthRepricedAgrees: pricing every record again in Go (what a
// --pricing table the database was not built with does) gives the same
// report as the SQL over the database's cost columns, in every cost mode:
// same rows, tokens exactly, costs within 1e-12 relative.
func TestSynthRepricedAgrees(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := synthFixture(t)
	db := filepath.Join(t.TempDir(), "r.duckdb")
	type line struct {
		Key            string
		Model          ModelKey
		Tokens         Tokens
		Recorded, Calc int64
		Unpriced       Tokens
		Cost           float64
	}
	flatten := func(r *Report) []line {
		var out []line
		for _, row := range r.Rows {
			for _, m := range row.Models {
				out = append(out, line{row.Key, m.ModelKey, m.Tokens, m.RecordedRecords, m.CalculatedRecords, m.Unpriced, m.Cost})
			}
		}
		return out
	}
	costEq := cmp.Comparer(func(a, b float64) bool { return relDiff(a, b) <= 1e-12 })
	for _, mode := range []export.CostMode{export.CostAuto, export.CostRecorded, export.CostCalculate} {
		loc := mustLoc(t, "America/Los_Angeles")
		sqlWays := reportsOn(t, db, []string{home}, usageKinds, func(o *Options) { o.CostMode, o.Location = mode, loc })
		goWays := reportsOn(t, db, []string{home}, usageKinds, func(o *Options) {
			o.CostMode, o.Location, o.PricingID = mode, loc, "test:same-table-other-id"
		})
		for i, k := range usageKinds {
			sqlWay, goWay := sqlWays[i], goWays[i]
			if sqlWay.Repriced || !goWay.Repriced {
				t.Fatalf("Repriced: sql %v, go %v", sqlWay.Repriced, goWay.Repriced)
			}
			if d := cmp.Diff(flatten(sqlWay), flatten(goWay), costEq); d != "" {
				t.Errorf("%s %s: rows differ (-sql +go):\n%s", mode, k, d)
			}
			if d := cmp.Diff(sqlWay.Unpriced, goWay.Unpriced); d != "" {
				t.Errorf("%s %s: unpriced differ (-sql +go):\n%s", mode, k, d)
			}
		}
	}
}
