package export

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/synth"
)

// Benchmarks of the export on a generated home. The home's size is
// SESSIONS_ETL_BENCH_SIZE bytes (default 64 MiB); SESSIONS_ETL_BENCH_HOME
// reuses an existing home instead. MB/s is over the home's session bytes.
// make bench measures the same on ~1 GB as separate processes, with peak
// RSS and DuckDB's own read_json pass side by side (internal/benchrun).

var (
	benchOnce sync.Once
	benchHome string
	benchSize int64
	benchErr  error
)

func benchCorpus(b *testing.B) (string, int64) {
	b.Helper()
	benchOnce.Do(func() {
		if h := os.Getenv("SESSIONS_ETL_BENCH_HOME"); h != "" {
			benchHome = h
		} else {
			size := int64(64 << 20)
			if s := os.Getenv("SESSIONS_ETL_BENCH_SIZE"); s != "" {
				size, _ = strconv.ParseInt(s, 10, 64)
			}
			dir, err := os.MkdirTemp("", "sessions-etl-bench-")
			if err != nil {
				benchErr = err
				return
			}
			benchHome = filepath.Join(dir, "home")
			if _, benchErr = synth.Generate(context.Background(), synth.Options{Out: benchHome, Sessions: max(50, int(size>>19)), Seed: 1, Size: size}); benchErr != nil {
				return
			}
		}
		benchErr = filepath.WalkDir(benchHome, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && filepath.Ext(p) == ".jsonl" {
				fi, ierr := d.Info()
				if ierr == nil {
					benchSize += fi.Size()
				}
			}
			return err
		})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchHome, benchSize
}

func benchExport(b *testing.B, duck, pq, rerun bool) {
	home, size := benchCorpus(b)
	rts, err := ingest.PathRoots([]string{home})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		out := b.TempDir()
		opts := Options{Roots: rts, Workers: runtime.NumCPU()}
		if duck {
			opts.DuckDBPath = filepath.Join(out, "export.duckdb")
		}
		if pq {
			opts.ParquetDir = filepath.Join(out, "parquet")
		}
		if rerun {
			if _, err := Run(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, err := Run(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExportBoth(b *testing.B)           { benchExport(b, true, true, false) }
func BenchmarkExportDuckDB(b *testing.B)         { benchExport(b, true, false, false) }
func BenchmarkExportParquet(b *testing.B)        { benchExport(b, false, true, false) }
func BenchmarkExportRerunUnchanged(b *testing.B) { benchExport(b, true, true, true) }
