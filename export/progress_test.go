package export

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// recProgress records, per phase, the bytes announced (Grow) and done (Add).
type recProgress struct {
	mu          sync.Mutex
	phase       string
	grown, done map[string]int64
}

func (p *recProgress) Phase(name string) { p.mu.Lock(); p.phase = name; p.mu.Unlock() }
func (p *recProgress) Add(n int64)       { p.mu.Lock(); p.done[p.phase] += n; p.mu.Unlock() }
func (p *recProgress) Grow(n int64)      { p.mu.Lock(); p.grown[p.phase] += n; p.mu.Unlock() }

// TestWriteParquetProgress: the write phase of a Parquet export announces a
// total (the session bytes of the files: the tables count as one pass
// over them, so the bar ends at the bytes the reading phase showed) and
// counts up to exactly it, so a terminal shows a bar with % and time left; an unchanged re-run
// writes nothing and announces nothing.
func TestWriteParquetProgress(t *testing.T) {
	home := filepath.Join("..", "testdata", "export", "views", "home")
	roots, err := ingest.PathRoots([]string{home})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for i := range 2 {
		p := &recProgress{grown: map[string]int64{}, done: map[string]int64{}}
		sum, err := Run(context.Background(), Options{Roots: roots, ParquetDir: filepath.Join(out, "parquet"),
			DuckDBPath: filepath.Join(out, "x.duckdb"), Progress: p, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		const w = "writing parquet"
		if i == 0 && (sum.BytesRead == 0 || p.grown[w] != sum.BytesRead) {
			t.Errorf("run %d: announced %d bytes, want the %d bytes read", i, p.grown[w], sum.BytesRead)
		}
		if i == 1 && p.grown[w] != 0 {
			t.Errorf("unchanged re-run announced %d bytes", p.grown[w])
		}
		if p.done[w] != p.grown[w] {
			t.Errorf("run %d: %d bytes done of %d announced", i, p.done[w], p.grown[w])
		}
	}
}
