package export

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// Loading benchmarks: the rows of one table of an export of the bench
// corpus (see benchCorpus), appended to a new database in one transaction,
// through the Appender (the export's way) here and through Arrow in
// load_arrow_bench_test.go (build tag duckdb_arrow, which duckdb-go needs
// for its Arrow interface). rows/s is the metric; make bench-load runs both.

var (
	loadOnce sync.Once
	loadRows map[string][][]driver.Value
	loadErr  error
)

// benchLoadRows exports the bench corpus once and returns every row of
// table t, as the appender receives them.
func benchLoadRows(b *testing.B, t *Table) [][]driver.Value {
	b.Helper()
	home, _ := benchCorpus(b)
	loadOnce.Do(func() {
		ctx := context.Background()
		roots, err := ingest.PathRoots([]string{home})
		if err != nil {
			loadErr = err
			return
		}
		db := filepath.Join(b.TempDir(), "src.duckdb")
		if _, loadErr = Run(ctx, Options{Roots: roots, Workers: 2, DuckDBPath: db}); loadErr != nil {
			return
		}
		st, err := openStore(ctx, db, map[string]string{}, 0)
		if err != nil {
			loadErr = err
			return
		}
		defer st.close()
		loadRows = map[string][][]driver.Value{}
		for _, tt := range []*Table{EntriesTable, UsageTable} {
			var rows [][]driver.Value
			if loadErr = st.queryRows(ctx, "SELECT "+tt.ColumnList()+" FROM "+tt.Name, func(vals []driver.Value) error {
				rows = append(rows, slices.Clone(vals))
				return nil
			}); loadErr != nil {
				return
			}
			loadRows[tt.Name] = rows
		}
	})
	if loadErr != nil {
		b.Fatal(loadErr)
	}
	rows := loadRows[t.Name]
	if len(rows) == 0 {
		b.Fatalf("no %s rows in the bench corpus", t.Name)
	}
	return rows
}

// benchLoadTarget opens a new database holding the export's tables, in a
// transaction.
func benchLoadTarget(b *testing.B) *store {
	b.Helper()
	ctx := context.Background()
	st, err := openStore(ctx, filepath.Join(b.TempDir(), "dst.duckdb"), map[string]string{"threads": "2"}, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.createSchema(ctx, ModeFull); err != nil {
		b.Fatal(err)
	}
	if _, err := st.exec(ctx, "BEGIN TRANSACTION"); err != nil {
		b.Fatal(err)
	}
	return st
}

// benchLoadCheck commits, checks the row count and closes the database.
func benchLoadCheck(b *testing.B, st *store, t *Table, want int) {
	b.Helper()
	ctx := context.Background()
	if _, err := st.exec(ctx, "COMMIT"); err != nil {
		b.Fatal(err)
	}
	var n int64
	if err := st.queryRows(ctx, "SELECT count(*) FROM "+t.Name, func(v []driver.Value) error { n = v[0].(int64); return nil }); err != nil {
		b.Fatal(err)
	}
	if n != int64(want) {
		b.Fatalf("%s holds %d rows, want %d", t.Name, n, want)
	}
	if err := st.close(); err != nil {
		b.Fatal(err)
	}
}

func benchLoadAppender(b *testing.B, t *Table) {
	rows := benchLoadRows(b, t)
	flat := make([]driver.Value, 0, len(rows)*len(t.Columns))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	b.ResetTimer()
	for b.Loop() {
		st := benchLoadTarget(b)
		ap, err := st.newAppender(t)
		if err != nil {
			b.Fatal(err)
		}
		if err := ap.append(flat); err != nil {
			b.Fatal(err)
		}
		if err := ap.close(); err != nil {
			b.Fatal(err)
		}
		benchLoadCheck(b, st, t, len(rows))
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkLoadAppenderEntries(b *testing.B) { benchLoadAppender(b, EntriesTable) }
func BenchmarkLoadAppenderUsage(b *testing.B)   { benchLoadAppender(b, UsageTable) }
