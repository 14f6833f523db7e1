package export

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// sink is one output of the export under test: how to ask Run for it and
// how to read its tables back as SQL tables of the same names.
type sink struct {
	name    string
	options func(out string) Options
	open    func(t testing.TB, out string) *sql.DB
}

// sinks are the outputs every conformance test runs against.
var sinks = []sink{
	{
		name:    "duckdb",
		options: func(out string) Options { return Options{DuckDBPath: filepath.Join(out, "export.duckdb")} },
		open: func(t testing.TB, out string) *sql.DB {
			t.Helper()
			db, err := OpenDB(filepath.Join(out, "export.duckdb") + "?access_mode=READ_ONLY")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	},
	{
		name:    "parquet",
		options: func(out string) Options { return Options{ParquetDir: filepath.Join(out, "parquet")} },
		open: func(t testing.TB, out string) *sql.DB {
			t.Helper()
			db, err := OpenDB("")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
			for _, tb := range Tables {
				q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s')", tb.Name,
					filepath.Join(out, "parquet", tb.Name, "*.parquet"))
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("read_parquet %s: %v", tb.Name, err)
				}
			}
			return db
		},
	},
}

func pathRoots(paths ...string) ([]ingest.Root, error) { return ingest.PathRoots(paths) }

// runExport exports roots into out for sink s with a checked Arrow
// allocator, and fails the test when any Arrow memory is left.
func runExport(t testing.TB, s sink, out string, roots []string, tweak func(*Options)) Summary {
	t.Helper()
	rts, err := ingest.PathRoots(roots)
	if err != nil {
		t.Fatal(err)
	}
	opts := s.options(out)
	opts.Roots = rts
	opts.Workers = 2
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts.Allocator = mem
	if tweak != nil {
		tweak(&opts)
	}
	sum, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("export (%s): %v", s.name, err)
	}
	mem.AssertSize(t, 0)
	return sum
}

// sinkOut is where one sink's export of a test is.
type sinkOut struct {
	sink
	out string
	sum Summary
}

// exportSinks exports roots for every sink (runExport, tweak applied to
// each): one run per sink, each into a directory of its own; under -short
// one run that writes both (the DuckDB database, which then also holds
// the state, and the Parquet datasets) into one directory, read back by
// each sink's open as the separate runs are.
func exportSinks(t *testing.T, roots []string, tweak func(*Options)) []sinkOut {
	t.Helper()
	var outs []sinkOut
	if !testing.Short() {
		for _, s := range sinks {
			out := t.TempDir()
			outs = append(outs, sinkOut{s, out, runExport(t, s, out, roots, tweak)})
		}
		return outs
	}
	both := sink{name: "duckdb+parquet", options: func(out string) Options {
		o := sinks[0].options(out)
		o.ParquetDir = sinks[1].options(out).ParquetDir
		return o
	}}
	out := t.TempDir()
	sum := runExport(t, both, out, roots, tweak)
	for _, s := range sinks {
		outs = append(outs, sinkOut{s, out, sum})
	}
	return outs
}

// closeDB closes a database opened by a sink before the next export.
func closeDB(t testing.TB, db *sql.DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// queryOne runs a query returning one row and scans it into dest.
func queryOne(t testing.TB, db *sql.DB, q string, dest ...any) {
	t.Helper()
	if err := db.QueryRow(q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// queryStrings returns every row of q as its columns joined by "|", NULL
// as "∅".
func queryStrings(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
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
			if v == nil {
				parts[i] = "∅"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
