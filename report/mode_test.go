package report

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestFullExportAnswersAlike: a database written by `export` (every table)
// and given with --db answers every report, tools included, exactly as
// the report's own usage-mode database does, and keeps its mode and
// content.
func TestFullExportAnswersAlike(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	roots, err := ingest.PathRoots(goldenInputs())
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "export.duckdb")
	if _, err := export.Run(context.Background(), export.Options{Roots: roots, Workers: 2, DuckDBPath: full}); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "report.duckdb")
	la := mustLoc(t, "America/Los_Angeles")
	for _, k := range Kinds {
		want := runOnDB(t, k, own, goldenInputs(), func(o *Options) { o.Location = la })
		got, err := Run(context.Background(), Options{Kind: k, Roots: roots, DBPath: full, Workers: 2, Location: la})
		if err != nil {
			t.Fatalf("%s on the full export: %v", k, err)
		}
		if got.Ingest.Mode != export.ModeFull || got.Ingest.Read != 0 {
			t.Errorf("%s: the full export was ingested in mode %q, %d files read; want it kept as it is", k, got.Ingest.Mode, got.Ingest.Read)
		}
		if want.Ingest.Mode != export.ModeUsage {
			t.Errorf("%s: the report's own database is in mode %q", k, want.Ingest.Mode)
		}
		got.Ingest, want.Ingest = nil, nil
		if got.Pricing != want.Pricing {
			t.Errorf("%s: priced with another table", k)
		}
		got.Pricing, want.Pricing = nil, nil
		if d := cmp.Diff(want, got, cmp.AllowUnexported(Usage{}, femto{}), cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() })); d != "" {
			t.Errorf("%s report differs (-usage mode +full export):\n%s", k, d)
		}
		if k == Tools && len(got.ToolRows) == 0 {
			t.Error("no tool rows: the fixture proves nothing")
		}
	}
}
