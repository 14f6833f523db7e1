package report

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestRunBatchSameAsRun: every report of a batch (one refresh, one open
// database) is the report Run gives alone, and its blocks those of
// RunBlocks; the first carries the ingest.
func TestRunBatchSameAsRun(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
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

// TestOlderSchemaNoRefresh: a report database written with another schema
// version (a cache of an older sessions-etl, whose tool_uses has no
// fork_copy) is not answered from with NoRefresh — an error says to refresh —
// and a refresh rebuilds it and answers as a new database does.
func TestOlderSchemaNoRefresh(t *testing.T) {
	roots, err := ingest.PathRoots([]string{filepath.Join("testdata", "tools")})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "old.duckdb"), Managed: true, Workers: 2, Location: time.UTC, Kind: Tools}
	want, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	db, err := export.OpenDB(o.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE " + metaTable + " SET value = '1007' WHERE key = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE tool_uses DROP COLUMN fork_copy"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	stale := o
	stale.NoRefresh = true
	for _, k := range []Kind{Tools, Daily} {
		stale.Kind = k
		if _, err := Run(context.Background(), stale); err == nil || !strings.Contains(err.Error(), "schema version 1007") || !strings.Contains(err.Error(), "without --no-refresh") {
			t.Errorf("%s, NoRefresh on schema 1007: err = %v; want the version and the way out", k, err)
		}
	}
	if _, _, err := RunBatch(context.Background(), stale, []Kind{Tools}, nil); err == nil || !strings.Contains(err.Error(), "schema version 1007") {
		t.Errorf("RunBatch, NoRefresh on schema 1007: err = %v", err)
	}
	if _, err := RunBlocks(context.Background(), stale, BlockOptions{Now: time.Date(2025, 5, 2, 9, 0, 0, 0, time.UTC)}); err == nil || !strings.Contains(err.Error(), "schema version 1007") {
		t.Errorf("RunBlocks, NoRefresh on schema 1007: err = %v", err)
	}
	got, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got.Ingest == nil || got.Ingest.Rebuilt == "" || !reflect.DeepEqual(got.ToolRows, want.ToolRows) || len(got.ToolRows) == 0 {
		t.Errorf("refresh of the old database: rebuilt %q, tools %+v; want rebuilt and %+v", got.Ingest.Rebuilt, got.ToolRows, want.ToolRows)
	}
}
