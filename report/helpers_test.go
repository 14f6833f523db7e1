package report

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

const casesDir = "../testdata/cases"

// runOn runs a report over paths with its own database in a temporary
// directory; edit adjusts the options.
func runOn(t *testing.T, kind Kind, paths []string, edit func(*Options)) *Report {
	t.Helper()
	return runOnDB(t, kind, filepath.Join(t.TempDir(), "report.duckdb"), paths, edit)
}

func runOnDB(t *testing.T, kind Kind, db string, paths []string, edit func(*Options)) *Report {
	t.Helper()
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Kind: kind, Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC}
	if edit != nil {
		edit(&o)
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("report %s over %v: %v", kind, paths, err)
	}
	return r
}

// reportsOn are the reports of kinds over paths with the database db:
// each a Run of its own (the first refreshes the database, the others find
// it current), or under -short one RunBatch (one refresh, one open
// database), which gives what Run gives (TestRunBatchSameAsRun).
func reportsOn(t *testing.T, db string, paths []string, kinds []Kind, edit func(*Options)) []*Report {
	t.Helper()
	if !testing.Short() {
		var out []*Report
		for _, k := range kinds {
			out = append(out, runOnDB(t, k, db, paths, edit))
		}
		return out
	}
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC}
	if edit != nil {
		edit(&o)
	}
	rs, _, err := RunBatch(context.Background(), o, kinds, nil)
	if err != nil {
		t.Fatalf("reports %v over %v: %v", kinds, paths, err)
	}
	if len(rs) != len(kinds) {
		t.Fatalf("%d reports for %d kinds", len(rs), len(kinds))
	}
	for i, r := range rs {
		if r.Kind != kinds[i] {
			t.Fatalf("report %d is %s, want %s", i, r.Kind, kinds[i])
		}
	}
	return rs
}

// relDiff is |a-b| relative to the larger magnitude.
func relDiff(a, b float64) float64 {
	d := math.Abs(a - b)
	if d == 0 {
		return 0
	}
	return d / math.Max(math.Abs(a), math.Abs(b))
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func moveFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files under src into a new temporary
// directory and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
