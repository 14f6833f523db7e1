package report

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/queries"
)

// TestCostRuleEncodingsAgree: SPEC.md §4's cost rule is written once in
// Go, at extraction (export's costOf), and once in SQL (queries/rules.sql),
// which two queries apply: the export when the --cost mode of a database
// changes (queries/export.sql apply_cost_mode) and the report's query
// (costSQL). The three give every usage row the same cost source and cost,
// in every mode, on every shared case and on a generated home (-short: the
// cases only).
func TestCostRuleEncodingsAgree(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	var roots []string
	ents, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			roots = append(roots, filepath.Join(casesDir, e.Name()))
		}
	}
	if !testing.Short() {
		home, _ := synthFixture(t)
		roots = append(roots, home)
	}
	rts, err := ingest.PathRoots(roots)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key = `SELECT file_id, entry_index, coalesce(rollup_part, -1) AS part, `
	for _, mode := range []export.CostMode{export.CostAuto, export.CostRecorded, export.CostCalculate} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.duckdb")
			if _, err := export.Run(ctx, export.Options{Roots: rts, DuckDBPath: path, CostMode: mode, Workers: 2}); err != nil {
				t.Fatal(err)
			}
			db, err := export.OpenDB(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rows := func(q string, args ...any) []string {
				t.Helper()
				r, err := db.QueryContext(ctx, q+" ORDER BY ALL", args...)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer r.Close()
				var out []string
				for r.Next() {
					var f, e, p int64
					var src string
					var cost sql.NullFloat64
					if err := r.Scan(&f, &e, &p, &src, &cost); err != nil {
						t.Fatal(err)
					}
					c := "NULL"
					if cost.Valid {
						c = strconv.FormatFloat(cost.Float64, 'g', 12, 64)
					}
					out = append(out, fmt.Sprintf("%d/%d/%d %s %s", f, e, p, src, c))
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				return out
			}
			// Go, as extracted (rest rows of roll-ups read in part are
			// costed by the SQL after deriving: they are compared below).
			goRows := rows(key + `cost_source, cost_total FROM usage`)
			if len(goRows) < 90 {
				t.Fatalf("only %d usage rows: the fixture is not what this test needs", len(goRows))
			}
			// The report's encoding over the same rows.
			cost, src := costSQL(mode)
			reportRows := rows(key + `coalesce(` + src + `, 'unpriced'), CASE WHEN ` + src + ` IS NULL THEN NULL ELSE ` + cost + ` END FROM (
				SELECT *, recorded_cost_total AS rec,
				       CASE WHEN kind = 'session_summary' THEN NULL ELSE calculated_cost_total END AS calc
				FROM usage)`)
			// The SQL of a --cost change, re-costing every row.
			if _, err := db.ExecContext(ctx, queries.Export("apply_cost_mode"), string(mode), true); err != nil {
				t.Fatal(err)
			}
			sqlRows := rows(key + `cost_source, cost_total FROM usage`)
			if d := cmp.Diff(goRows, sqlRows); d != "" {
				t.Errorf("Go (extract) and SQL (apply_cost_mode) disagree (-go +sql):\n%s", d)
			}
			if d := cmp.Diff(goRows, reportRows); d != "" {
				t.Errorf("Go (extract) and the report's costSQL disagree (-go +report):\n%s", d)
			}
		})
	}
}
