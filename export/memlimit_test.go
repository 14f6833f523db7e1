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

// TestUsageDenseExportNeedsNoRetry (finding 15): the first export of a
// usage-dense home finishes under DuckDB's memory limit at the first try
// (MemoryRetries 0). A retry is a way to finish, not the plan: the run it
// repeats is wasted time and runs at a higher limit, which is where a
// 1 GB usage-dense home's 510 MiB peak came from (the step that ran out
// was derive_fork_copies, inside the loading transaction). fork_copy_of
// and counted are those of an export without a tight limit.
func TestUsageDenseExportNeedsNoRetry(t *testing.T) {
	sessions := usageDenseSessions
	if testing.Short() {
		// The inner loop: a home too small to need the fix, with the same
		// assertions (one run, the same derived columns).
		sessions = 300
	}
	home := filepath.Join(t.TempDir(), "home")
	if _, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: sessions, Seed: 1, Profile: synth.ProfileUsageDense}); err != nil {
		t.Fatal(err)
	}
	roots := []ingest.Root{{Path: home, Recursive: true}}
	refDB, tightDB := filepath.Join(t.TempDir(), "ref.duckdb"), filepath.Join(t.TempDir(), "tight.duckdb")
	if _, err := Run(context.Background(), Options{Roots: roots, Workers: 2, DuckDBPath: refDB, MemoryLimit: "1GB"}); err != nil {
		t.Fatal(err)
	}
	got, err := Run(context.Background(), Options{Roots: roots, Workers: 2, DuckDBPath: tightDB, MemoryLimit: usageDenseLimit})
	if err != nil {
		t.Fatalf("export with a %s limit: %v", usageDenseLimit, err)
	}
	if got.MemoryRetries != 0 {
		t.Errorf("the export ran %d more times, finishing at a %s limit; want one run at %s", got.MemoryRetries, got.MemoryLimit, usageDenseLimit)
	}
	const q = `SELECT count(fork_copy_of), hash(string_agg(coalesce(fork_copy_of, '-'), ',' ORDER BY f.path, e.entry_index)),
	  (SELECT hash(string_agg(counted::VARCHAR || coalesce(duplicate_of_session_id, '-'), ',' ORDER BY f.path, u.entry_index)) FROM usage u JOIN files f USING (file_id))
	  FROM entries e JOIN files f USING (file_id)`
	var res [2][3]any
	for i, path := range []string{refDB, tightDB} {
		db, err := OpenDB(path + "?access_mode=READ_ONLY")
		if err != nil {
			t.Fatal(err)
		}
		queryOne(t, db, q, &res[i][0], &res[i][1], &res[i][2])
		closeDB(t, db)
	}
	if res[0] != res[1] {
		t.Errorf("fork copies, their hash and counted's hash: %v under %s, %v without a tight limit", res[1], usageDenseLimit, res[0])
	}
	if n, _ := res[0][0].(int64); n == 0 {
		t.Errorf("the usage-dense home has no fork copies: the test needs some")
	}
}

// The home and limit of TestUsageDenseExportNeedsNoRetry: the export
// before the fix ran out of memory in derive_fork_copies there and ran
// again. (At 40 MB the next step to run out is derive_rollups.)
const (
	usageDenseSessions = 2000
	usageDenseLimit    = "48MB"
)
