package report

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestCacheWithoutToolUses: the report's own cache is made without
// tool_uses by a report that does not read them (export.Options.SkipToolUses),
// with the same daily report; the first tools report over it rebuilds it
// and answers as over a fresh cache; a daily report after that keeps the
// tool rows (no rebuild) and still answers the same; a batch with the
// tools report reads them on a new cache.
func TestCacheWithoutToolUses(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	paths := []string{filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once"), filepath.Join(casesDir, "c22-damaged-files-used"),
		filepath.Join("testdata", "tools")}
	opt := cmp.Options{cmp.AllowUnexported(Usage{}, femto{}), cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() })}
	db := filepath.Join(t.TempDir(), "report.duckdb")
	daily := runOnDB(t, Daily, db, paths, nil)
	if daily.Ingest.Rebuilt != "new database" {
		t.Errorf("first daily report: rebuilt %q", daily.Ingest.Rebuilt)
	}
	wantTools := runOn(t, Tools, paths, nil)
	if len(wantTools.ToolRows) == 0 {
		t.Fatal("no tool rows: the fixture proves nothing")
	}
	tools := runOnDB(t, Tools, db, paths, nil)
	if tools.Ingest.Rebuilt != "tool_uses" {
		t.Errorf("tools report over a cache without tool_uses: rebuilt %q, want tool_uses", tools.Ingest.Rebuilt)
	}
	tools.Ingest, wantTools.Ingest, tools.Pricing, wantTools.Pricing = nil, nil, nil, nil
	if d := cmp.Diff(wantTools, tools, opt); d != "" {
		t.Errorf("tools report after the rebuild (-fresh cache +rebuilt):\n%s", d)
	}
	again := runOnDB(t, Daily, db, paths, nil)
	if again.Ingest.Rebuilt != "" || again.Ingest.Read != 0 {
		t.Errorf("daily report over a cache with tool_uses: rebuilt %q, read %d; want none, 0", again.Ingest.Rebuilt, again.Ingest.Read)
	}
	if tools := runOnDB(t, Tools, db, paths, nil); tools.Ingest.Rebuilt != "" || len(tools.ToolRows) != len(wantTools.ToolRows) {
		t.Errorf("tools report after a daily one: rebuilt %q, %d tool rows; want none, %d", tools.Ingest.Rebuilt, len(tools.ToolRows), len(wantTools.ToolRows))
	}
	again.Ingest, daily.Ingest, again.Pricing, daily.Pricing = nil, nil, nil, nil
	if d := cmp.Diff(daily, again, opt); d != "" {
		t.Errorf("daily report (-without tool_uses +with):\n%s", d)
	}

	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "batch.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	rs, _, err := RunBatch(context.Background(), o, []Kind{Daily, Tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs[1].Ingest, rs[1].Pricing = nil, nil
	if d := cmp.Diff(wantTools, rs[1], opt); d != "" {
		t.Errorf("tools report of a batch on a new cache (-alone +batch):\n%s", d)
	}
}
