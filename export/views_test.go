package export

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/queries"
)

var update = flag.Bool("update", false, "rewrite the golden files of the view tests")

// viewFixture is the small export the view goldens are computed over: the
// fork of c07, the child usage of c13, the billed kinds of c14 (which
// reuses the session id of c07's parent for other entries: a reset
// archive, counted separately), and testdata/export/views/home, a
// hand-written session with tool calls, an image result, an unpriced
// model and a UTC day boundary.
var viewFixture = []string{
	filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home"),
	filepath.Join(casesDir, "c13-prime-child-usage"),
	filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds"),
	filepath.Join("..", "testdata", "export", "views", "home"),
}

// viewQueries override `SELECT * FROM view` where a view's columns are
// too wide for a readable golden file.
var viewQueries = map[string]string{
	"counted_usage": `SELECT session_id, entry_id, kind, provider, model, input, output, cache_read, cache_write,
		total_tokens, cost_total, cost_source FROM counted_usage ORDER BY timestamp, session_id, entry_id`,
}

// TestViewsGolden runs every view of queries/views.sql over the fixture
// export and compares the result with testdata/export/views/<view>.golden.
// The golden files were written with -update and then checked by hand
// against the fixture's numbers (see the comment at the top of each file).
func TestViewsGolden(t *testing.T) {
	out := t.TempDir()
	runExport(t, sinks[0], out, viewFixture, nil)
	db := sinks[0].open(t, out)
	for _, v := range queries.Views() {
		t.Run(v.Name, func(t *testing.T) {
			q := viewQueries[v.Name]
			if q == "" {
				q = "SELECT * FROM " + v.Name
			}
			got := renderQuery(t, db, q)
			path := filepath.Join("..", "testdata", "export", "views", v.Name+".golden")
			if *update {
				// Keep the hand-written header (lines starting with #) of an existing file.
				var header []string
				if old, err := os.ReadFile(path); err == nil {
					for _, l := range strings.Split(string(old), "\n") {
						if strings.HasPrefix(l, "#") {
							header = append(header, l)
						}
					}
				}
				text := got
				if len(header) > 0 {
					text = strings.Join(header, "\n") + "\n" + got
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./export -run TestViewsGolden -update, then check the file by hand)", err)
			}
			var want []string
			for _, l := range strings.Split(string(raw), "\n") {
				if !strings.HasPrefix(l, "#") {
					want = append(want, l)
				}
			}
			if d := cmp.Diff(strings.Join(want, "\n"), got); d != "" {
				t.Errorf("view %s (-golden +got):\n%s", v.Name, d)
			}
		})
	}
}

// renderQuery prints a result as " | "-separated lines: a header, then
// one line per row; floats to 10 significant digits, NULL as NULL.
func renderQuery(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	types, _ := rows.ColumnTypes()
	var b strings.Builder
	b.WriteString(strings.Join(cols, " | ") + "\n")
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
				parts[i] = "NULL"
			case float64:
				parts[i] = fmt.Sprintf("%.10g", x)
			case time.Time:
				if types[i].DatabaseTypeName() == "DATE" {
					parts[i] = x.Format("2006-01-02")
				} else {
					parts[i] = x.UTC().Format("2006-01-02 15:04:05")
				}
			default:
				parts[i] = fmt.Sprint(x)
			}
		}
		b.WriteString(strings.Join(parts, " | ") + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
