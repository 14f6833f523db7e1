package export

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/synth"
)

// TestExportFinishesUnderTightMemoryLimit (finding 15): a memory limit
// comes with a way to finish. With DuckDB's limit far below what a step
// needs at once, the export spills or retries and completes with every
// row, instead of failing "Out of Memory".
func TestExportFinishesUnderTightMemoryLimit(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if _, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 150, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	roots := []ingest.Root{{Path: home, Recursive: true}}
	ref, err := Run(context.Background(), Options{Roots: roots, Workers: 2, DuckDBPath: filepath.Join(t.TempDir(), "ref.duckdb")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(context.Background(), Options{Roots: roots, Workers: 2, DuckDBPath: filepath.Join(t.TempDir(), "tight.duckdb"), MemoryLimit: "8MB"})
	if err != nil {
		t.Fatalf("export with an 8 MB limit: %v", err)
	}
	if len(got.Tables) != len(ref.Tables) {
		t.Fatalf("tables %v, want %v", got.Tables, ref.Tables)
	}
	for i := range ref.Tables {
		if got.Tables[i].Rows != ref.Tables[i].Rows {
			t.Errorf("%s: %d rows, want %d", ref.Tables[i].Table, got.Tables[i].Rows, ref.Tables[i].Rows)
		}
	}
}
