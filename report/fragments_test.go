package report

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/queries"
)

// The report's queries are put together from the named fragments of
// queries/report.sql and the rules of queries/rules.sql. Each is tested
// here on its own, over rows written by hand, with the values SPEC.md §4
// gives them; the reports built from them are tested on the cases.

func memDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := export.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCostSourceRules: the cost rule of SPEC.md §4 in each --cost mode.
// auto takes the recorded cost when there is one and it is non-zero, or
// zero on a record without tokens; else the calculated cost; else the
// record is unpriced (NULL: never $0).
func TestCostSourceRules(t *testing.T) {
	rows := []struct {
		name                    string
		rec, calc               sql.NullFloat64
		in, out, cr, cw         int64
		auto, recorded, calcSrc sql.NullString
	}{
		{"both costs", f(0.5), f(0.4), 10, 5, 0, 0, s("recorded"), s("recorded"), s("calculated")},
		{"recorded zero, tokens billed", f(0), f(0.4), 10, 0, 0, 0, s("calculated"), s("recorded"), s("calculated")},
		{"recorded zero, cache read only", f(0), f(0.1), 0, 0, 7, 0, s("calculated"), s("recorded"), s("calculated")},
		{"recorded zero, cache write only", f(0), f(0.1), 0, 0, 0, 3, s("calculated"), s("recorded"), s("calculated")},
		{"recorded zero, no tokens", f(0), f(0), 0, 0, 0, 0, s("recorded"), s("recorded"), s("calculated")},
		{"recorded zero, no price", f(0), sql.NullFloat64{}, 10, 0, 0, 0, sql.NullString{}, s("recorded"), sql.NullString{}},
		{"no recorded cost", sql.NullFloat64{}, f(0.4), 10, 5, 0, 0, s("calculated"), sql.NullString{}, s("calculated")},
		{"neither", sql.NullFloat64{}, sql.NullFloat64{}, 10, 5, 0, 0, sql.NullString{}, sql.NullString{}, sql.NullString{}},
		{"recorded only", f(0.02), sql.NullFloat64{}, 10, 5, 0, 0, s("recorded"), s("recorded"), sql.NullString{}},
	}
	db := memDB(t)
	for _, r := range rows {
		var got [3]sql.NullString
		q := `SELECT ` + queries.Rule("cost_source_auto") + `, ` + queries.Rule("cost_source_recorded") + `, ` +
			queries.Rule("cost_source_calculate") + `
FROM (SELECT CAST(? AS DOUBLE) AS recorded_cost_total, CAST(? AS DOUBLE) AS calculated_cost_total,
             CAST(? AS BIGINT) AS input, CAST(? AS BIGINT) AS output, CAST(? AS BIGINT) AS cache_read, CAST(? AS BIGINT) AS cache_write)`
		if err := db.QueryRow(q, r.rec, r.calc, r.in, r.out, r.cr, r.cw).Scan(&got[0], &got[1], &got[2]); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if want := [3]sql.NullString{r.auto, r.recorded, r.calcSrc}; got != want {
			t.Errorf("%s: auto, recorded, calculate = %v, want %v", r.name, got, want)
		}
	}
	// The report's cost column takes the cost of the source the rule chose.
	for mode, want := range map[export.CostMode]float64{export.CostAuto: 0.5, export.CostRecorded: 0.5, export.CostCalculate: 0.4} {
		cost, _ := costSQL(mode)
		var got float64
		if err := db.QueryRow(`SELECT ` + cost + ` FROM (SELECT 0.5::DOUBLE AS recorded_cost_total, 0.4::DOUBLE AS calculated_cost_total,
  10 AS input, 5 AS output, 0 AS cache_read, 0 AS cache_write)`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("costSQL(%s) = %v, want %v", mode, got, want)
		}
	}
}

// TestUsageAggregatesFragment: usage_aggregates over four records, one of
// them unpriced. The cost is summed as a decimal (0.1 + 0.2 is 0.3, not
// 0.30000000000000004) and the unpriced record's tokens are counted apart.
func TestUsageAggregatesFragment(t *testing.T) {
	db := memDB(t)
	q := `SELECT ` + usageAggregates() + `
FROM (VALUES
  (TIMESTAMPTZ '2026-03-01 10:00:00+00', 100, 10, 1000, 5, 1115, 0.1::DOUBLE, 'recorded'),
  (TIMESTAMPTZ '2026-03-01 09:00:00+00', 200, 20, 0, 0, 220, 0.2::DOUBLE, 'calculated'),
  (TIMESTAMPTZ '2026-03-02 08:00:00+00', 1, 2, 3, 4, 10, NULL, NULL),
  (TIMESTAMPTZ '2026-03-01 11:00:00+00', 0, 0, 0, 0, 0, 0::DOUBLE, 'recorded')
) t(ts, input, output, cache_read, cache_write, total_tokens, cost, src)`
	var (
		first, last                               sql.NullTime
		records, in, out, cr, cw, tot             int64
		costSum                                   string
		recN, calcN, unN, unIn, unOut, unCR, unCW int64
		unTot                                     int64
	)
	if err := db.QueryRow(q).Scan(&first, &last, &records, &in, &out, &cr, &cw, &tot, &costSum,
		&recN, &calcN, &unN, &unIn, &unOut, &unCR, &unCW, &unTot); err != nil {
		t.Fatal(err)
	}
	got := []any{first.Time.UTC().Format("2006-01-02 15"), last.Time.UTC().Format("2006-01-02 15"), records,
		in, out, cr, cw, tot, costSum, recN, calcN, unN, unIn, unOut, unCR, unCW, unTot}
	want := []any{"2026-03-01 09", "2026-03-02 08", int64(4),
		int64(301), int64(32), int64(1003), int64(9), int64(1345), "0.300000000000000",
		int64(2), int64(1), int64(1), int64(1), int64(2), int64(3), int64(4), int64(10)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage_aggregates (-want +got):\n%s", d)
	}
}

// TestReportBaseFragment: report_base selects exactly the counted records
// of each shared case with a "usage" block: its record count and token
// sums are the case's (fork and file copies left out, SPEC.md §4).
func TestReportBaseFragment(t *testing.T) {
	ents, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		dir := filepath.Join(casesDir, e.Name())
		exp := loadCaseUsage(t, dir)
		if exp == nil {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.duckdb")
			runOnDB(t, Daily, path, []string{dir}, nil)
			db, err := export.OpenDB(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var records, in, out, cr, cw int64
			if err := db.QueryRow(`WITH `+baseCTE()+` SELECT count(*), coalesce(sum(input), 0), coalesce(sum(output), 0),
  coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0) FROM base`).Scan(&records, &in, &out, &cr, &cw); err != nil {
				t.Fatal(err)
			}
			check := func(what string, want *int64, got int64) {
				if want != nil && *want != got {
					t.Errorf("%s = %d, want %d", what, got, *want)
				}
			}
			check("counted records", exp.CountedRecords, records)
			check("input", exp.Input, in)
			check("output", exp.Output, out)
			check("cache_read", exp.CacheRead, cr)
			check("cache_write", exp.CacheWrite, cw)
		})
	}
	if n < 5 {
		t.Fatalf("%d cases with a usage block, want at least 5", n)
	}
}

// TestReportFragmentsDocumented: every fragment and rule says what it is.
func TestReportFragmentsDocumented(t *testing.T) {
	all := append(queries.ReportFragments(), queries.Rules()...)
	if len(all) < 5 {
		t.Fatalf("%d fragments and rules, want the 5 the report uses", len(all))
	}
	for _, s := range all {
		if s.Doc == "" {
			t.Errorf("%s:%d %s has no documentation comment", s.File, s.Line, s.Name)
		}
	}
}

func f(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
func s(v string) sql.NullString   { return sql.NullString{String: v, Valid: true} }
