//go:build unix

package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// lockDir makes discover behave as if dir could not be opened (mode 000
// for a user who is not root): the error path issue discovery reports for
// it, and none of its files. Tests run as root, for whom chmod 000 changes
// nothing. Undone when the test ends, or by calling the returned function.
func lockDir(t *testing.T, dir string) (unlock func()) {
	t.Helper()
	real := discover
	discover = func(ctx context.Context, roots []ingest.Root, fn func(ingest.File) error, issue func(ingest.PathIssue)) error {
		issue(ingest.PathIssue{Path: dir, Source: ingest.SourceCustom, Issue: ingest.Issue{Severity: ingest.SeverityError,
			Code: ingest.CodeUnreadable, Message: "open: permission denied"}})
		return real(ctx, roots, func(f ingest.File) error {
			if strings.HasPrefix(f.Path, dir+string(filepath.Separator)) {
				return nil
			}
			return fn(f)
		}, issue)
	}
	unlock = func() { discover = real }
	t.Cleanup(unlock)
	return unlock
}

// TestUnreadableDirectoryRejected: a directory that cannot be read is a
// rejected path, as validate says (error unreadable, exit 1): it counts in
// Summary.Rejected and RejectedPaths, is named in RejectedFiles and the
// rejected_files view, and gets no files row (files holds the files read).
// It stays rejected on an incremental run that changes nothing, and goes
// away once the directory can be read again.
func TestUnreadableDirectoryRejected(t *testing.T) {
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			root := t.TempDir()
			copyFile(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds", "session.jsonl"), filepath.Join(root, "c.jsonl"))
			locked := filepath.Join(root, "locked")
			copyFile(t, filepath.Join(casesDir, "c02-final-record-without-newline", "session.jsonl"), filepath.Join(locked, "a.jsonl"))
			unlock := lockDir(t, locked)
			out := t.TempDir()
			wantRejected := []RejectedFile{{Path: locked, Status: "unreadable", Code: ingest.CodeUnreadable, Message: "open: permission denied"}}
			for run, what := range []string{"first run", "unchanged re-run"} {
				sum := runExport(t, s, out, []string{root}, nil)
				if sum.Rejected != 1 || sum.RejectedPaths != 1 || sum.Files != 1 || sum.PathIssues != 1 {
					t.Errorf("%s: rejected %d, rejected paths %d, files %d, path issues %d; want 1, 1, 1, 1",
						what, sum.Rejected, sum.RejectedPaths, sum.Files, sum.PathIssues)
				}
				if run == 1 && sum.Read != 0 {
					t.Errorf("%s: %d files read, want 0", what, sum.Read)
				}
				if d := cmp.Diff(wantRejected, sum.RejectedFiles); d != "" {
					t.Errorf("%s: Summary.RejectedFiles (-want +got):\n%s", what, d)
				}
				db := s.open(t, out)
				got := queryStrings(t, db, "SELECT file_id IS NULL, path, severity, code FROM ingest_issues WHERE path = '"+locked+"'")
				if d := cmp.Diff([]string{"true|" + locked + "|error|unreadable"}, got); d != "" {
					t.Errorf("%s: ingest_issues (-want +got):\n%s", what, d)
				}
				if got := queryStrings(t, db, "SELECT path FROM files"); len(got) != 1 || got[0] != filepath.Join(root, "c.jsonl") {
					t.Errorf("%s: files %v, want only c.jsonl (no row for the directory)", what, got)
				}
				if s.name == "duckdb" {
					got = queryStrings(t, db, "SELECT path, status, line_no, code, message FROM rejected_files")
					if d := cmp.Diff([]string{locked + "|unreadable|∅|unreadable|open: permission denied"}, got); d != "" {
						t.Errorf("%s: rejected_files (-want +got):\n%s", what, d)
					}
				}
				closeDB(t, db)
			}
			unlock()
			sum := runExport(t, s, out, []string{root}, nil)
			if sum.Rejected != 0 || sum.RejectedPaths != 0 || len(sum.RejectedFiles) != 0 || sum.Read != 1 || sum.Files != 2 {
				t.Errorf("readable again: rejected %d (%d paths) %v, read %d of %d files; want none rejected, a.jsonl read",
					sum.Rejected, sum.RejectedPaths, sum.RejectedFiles, sum.Read, sum.Files)
			}
			if s.name == "duckdb" {
				db := s.open(t, out)
				if got := queryStrings(t, db, "SELECT path FROM rejected_files"); len(got) != 0 {
					t.Errorf("readable again: rejected_files %v", got)
				}
				closeDB(t, db)
			}
		})
	}
}

// TestNonRegularPathsRejected: a FIFO or a device named as a path, and a
// link discovery cannot stat (its target's directory is a file), are
// errors for validate and so rejected paths here, with no files rows; a
// link to a missing file is a warning for validate (broken_link) and is
// not rejected.
func TestNonRegularPathsRejected(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds", "session.jsonl"), filepath.Join(dir, "c.jsonl"))
	if err := os.Symlink(filepath.Join(dir, "c.jsonl", "sub.jsonl"), filepath.Join(dir, "notdir.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing.jsonl"), filepath.Join(dir, "broken.jsonl")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			out := t.TempDir()
			sum := runExport(t, s, out, []string{dir, fifo, "/dev/null"}, nil)
			var got []string
			for _, f := range sum.RejectedFiles {
				got = append(got, f.Path+"|"+f.Status+"|"+f.Code)
			}
			want := []string{"/dev/null|unreadable|unreadable", filepath.Join(dir, "notdir.jsonl") + "|unreadable|unreadable", fifo + "|unreadable|unreadable"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Summary.RejectedFiles (-want +got):\n%s", d)
			}
			if sum.Rejected != 3 || sum.RejectedPaths != 3 || sum.Files != 1 || sum.PathIssues != 4 {
				t.Errorf("rejected %d, rejected paths %d, files %d, path issues %d; want 3, 3, 1, 4 (the broken link a warning)",
					sum.Rejected, sum.RejectedPaths, sum.Files, sum.PathIssues)
			}
			db := s.open(t, out)
			if got := queryStrings(t, db, "SELECT count(*) FROM files"); got[0] != "1" {
				t.Errorf("files rows %v, want 1", got)
			}
			if s.name == "duckdb" {
				got := queryStrings(t, db, "SELECT path, status, code FROM rejected_files")
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("rejected_files (-want +got):\n%s", d)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
