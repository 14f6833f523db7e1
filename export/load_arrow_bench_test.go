//go:build duckdb_arrow

package export

import (
	"context"
	"database/sql/driver"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
)

// The Arrow side of the loading benchmarks (load_bench_test.go): the same
// rows built into Arrow record batches of RowGroupRows rows with the
// Parquet sink's column appenders, registered as a view and inserted with
// one INSERT … SELECT. Building the batches is timed too: the export
// would have to build them.
func benchLoadArrow(b *testing.B, t *Table) {
	rows := benchLoadRows(b, t)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		st := benchLoadTarget(b)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, t.Schema)
		apps := make([]func(driver.Value) int, len(t.Columns))
		for i, c := range t.Columns {
			apps[i] = columnAppender(rb.Field(i), c)
		}
		var recs []arrow.RecordBatch
		for i, r := range rows {
			for j, v := range r {
				apps[j](v)
			}
			if (i+1)%RowGroupRows == 0 || i == len(rows)-1 {
				recs = append(recs, rb.NewRecordBatch())
			}
		}
		rb.Release()
		rdr, err := array.NewRecordReader(t.Schema, recs)
		if err != nil {
			b.Fatal(err)
		}
		ar, err := duckdb.NewArrowFromConn(st.conn)
		if err != nil {
			b.Fatal(err)
		}
		release, err := ar.RegisterView(rdr, "load_src")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.exec(ctx, "INSERT INTO "+t.Name+" SELECT * FROM load_src"); err != nil {
			b.Fatal(err)
		}
		release()
		for _, r := range recs {
			r.Release()
		}
		benchLoadCheck(b, st, t, len(rows))
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkLoadArrowEntries(b *testing.B) { benchLoadArrow(b, EntriesTable) }
func BenchmarkLoadArrowUsage(b *testing.B)   { benchLoadArrow(b, UsageTable) }
