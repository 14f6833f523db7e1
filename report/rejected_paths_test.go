//go:build unix

package report

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/validate"
)

// validateUnreadable returns the paths validate gives the status
// unreadable (the ones that make it exit 1 without being files), sorted.
func validateUnreadable(t *testing.T, paths []string) []string {
	t.Helper()
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_, err = validate.Run(context.Background(), validate.Options{Roots: roots, Workers: 2}, func(fr validate.FileResult) error {
		if fr.Status == validate.StatusUnreadable {
			out = append(out, fr.File.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestReportRejectsUnreadablePaths: paths discovery cannot read — a FIFO
// named as a path, a link it cannot stat — are rejected as validate
// rejects them (the same paths), so report's summary counts and names them
// (the command exits 1 on it); the usage of the other files is still
// reported, and a broken link (a warning for validate) is not rejected.
// An unchanged second run still rejects them (the path issues are kept in
// the database); once they are gone, nothing is.
func TestReportRejectsUnreadablePaths(t *testing.T) {
	good := copyTree(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds"))
	dir := copyTree(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds"))
	notDir := filepath.Join(dir, "notdir.jsonl")
	if err := os.Symlink(filepath.Join(dir, "session.jsonl", "sub.jsonl"), notDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing.jsonl"), filepath.Join(dir, "broken.jsonl")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{dir, fifo}
	want := validateUnreadable(t, paths)
	if d := cmp.Diff([]string{notDir, fifo}, want); d != "" {
		t.Fatalf("validate's unreadable paths (-want +got):\n%s", d)
	}
	base := runOn(t, Daily, []string{good}, nil)
	db := filepath.Join(t.TempDir(), "report.duckdb")
	for _, what := range []string{"first run", "unchanged re-run"} {
		r := runOnDB(t, Daily, db, paths, nil)
		sum := r.Ingest
		var got []string
		for _, f := range sum.RejectedFiles {
			if f.Status == string(validate.StatusUnreadable) && f.Code == ingest.CodeUnreadable {
				got = append(got, f.Path)
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: Ingest.RejectedFiles, unreadable (-validate +report):\n%s", what, d)
		}
		if sum.Rejected != 2 || sum.RejectedPaths != 2 || sum.Files != 1 {
			t.Errorf("%s: rejected %d, rejected paths %d, files %d; want 2, 2, 1", what, sum.Rejected, sum.RejectedPaths, sum.Files)
		}
		if what == "unchanged re-run" && sum.Read != 0 {
			t.Errorf("%s: read %d files, want 0", what, sum.Read)
		}
		if r.Totals.Records == 0 || r.Totals != base.Totals {
			t.Errorf("%s: totals %+v, want those of the readable file alone %+v", what, r.Totals, base.Totals)
		}
	}
	// Fixed: the link removed, a session file where the FIFO was.
	if err := os.Remove(notDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(casesDir, "c02-final-record-without-newline", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, fifo, string(raw))
	r := runOnDB(t, Daily, db, paths, nil)
	if sum := r.Ingest; sum.Rejected != 0 || sum.RejectedPaths != 0 || len(sum.RejectedFiles) != 0 || sum.Files != 2 {
		t.Errorf("fixed: rejected %d (%d paths) %v, %d files; want none rejected, 2 files", sum.Rejected, sum.RejectedPaths, sum.RejectedFiles, sum.Files)
	}
}
