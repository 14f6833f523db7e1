package report

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestRunBatchSameAsRun: every report of a batch (one refresh, one open
// database) is the report Run gives alone, and its blocks those of
// RunBlocks; the first carries the ingest.
func TestRunBatchSameAsRun(t *testing.T) {
	paths := []string{filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once"), filepath.Join(casesDir, "c24-subagent-rollup"),
		filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds"), filepath.Join(casesDir, "c22-damaged-files-used"),
		filepath.Join("testdata", "tools")} // a fork that copies tool calls
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "batch.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	kinds := []Kind{Daily, Project, Model, Provider, Session, Tools, Weekly}
	now := time.Date(2025, 5, 2, 9, 0, 0, 0, time.UTC)
	rs, br, err := RunBatch(context.Background(), o, kinds, &BlockOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(kinds) || br == nil {
		t.Fatalf("%d reports, blocks %v", len(rs), br)
	}
	if rs[0].Ingest == nil || rs[0].Ingest.Files == 0 {
		t.Errorf("the first report has no ingest: %+v", rs[0].Ingest)
	}
	alone := o
	alone.NoRefresh = true
	for i, k := range kinds {
		alone.Kind = k
		want, err := Run(context.Background(), alone)
		if err != nil {
			t.Fatal(err)
		}
		got := rs[i]
		if got.Kind != k || !reflect.DeepEqual(got.Rows, want.Rows) || !reflect.DeepEqual(got.Totals, want.Totals) ||
			!reflect.DeepEqual(got.ToolRows, want.ToolRows) || !reflect.DeepEqual(got.Files, want.Files) || got.Repriced != want.Repriced {
			t.Errorf("%s: batch %+v\nalone %+v", k, got, want)
		}
		if k == Daily && len(got.Rows) == 0 {
			t.Errorf("daily: no rows")
		}
		if k == Tools && len(got.ToolRows) == 0 {
			t.Errorf("tools: no rows")
		}
	}
	wantB, err := RunBlocks(context.Background(), alone, BlockOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(br.Blocks, wantB.Blocks) || !reflect.DeepEqual(br.Totals, wantB.Totals) || br.Kind != "blocks" || len(br.Blocks) == 0 {
		t.Errorf("blocks: batch %+v\nalone %+v", br.Blocks, wantB.Blocks)
	}
}
