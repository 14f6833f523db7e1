//go:build unix

package export

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// denyOpen makes stillReadable fail for path as open fails on a file of
// mode 000 for a user who is not root (tests run as root, who opens any
// file). Undone when the test ends, or by calling the returned function.
func denyOpen(t *testing.T, path string) (undo func()) {
	t.Helper()
	real := stillReadable
	stillReadable = func(p string) error {
		if p == path {
			return &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
		}
		return real(p)
	}
	undo = func() { stillReadable = real }
	t.Cleanup(undo)
	return undo
}

// fileRowsOf counts the usage rows of the file at path and returns its status.
func fileRowsOf(t *testing.T, s sink, out, path string) (status, usage string) {
	t.Helper()
	db := s.open(t, out)
	defer closeDB(t, db)
	st := queryStrings(t, db, "SELECT status FROM files WHERE path = '"+path+"'")
	if len(st) != 1 {
		t.Fatalf("files rows of %s: %v", path, st)
	}
	return st[0], queryStrings(t, db, "SELECT count(*) FROM usage u JOIN files f USING (file_id) WHERE f.path = '"+path+"'")[0]
}

// TestUnchangedFileBecameUnreadable: a file exported before whose size,
// mtime and inode are unchanged but that can no longer be opened (mode
// 000) is rejected on the incremental run as on a fresh one and by
// validate: status unreadable, its rows gone, listed by RejectedFiles.
// Readable again, unchanged, it is read again and fine.
func TestUnchangedFileBecameUnreadable(t *testing.T) {
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			root := t.TempDir()
			c := filepath.Join(root, "c.jsonl")
			copyFile(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds", "session.jsonl"), c)
			copyFile(t, filepath.Join(casesDir, "c02-final-record-without-newline", "session.jsonl"), filepath.Join(root, "a.jsonl"))
			out := t.TempDir()
			if sum := runExport(t, s, out, []string{root}, nil); sum.Rejected != 0 || sum.Read != 2 {
				t.Fatalf("first run: rejected %d, read %d", sum.Rejected, sum.Read)
			}
			okStatus, okUsage := fileRowsOf(t, s, out, c)
			if okUsage == "0" {
				t.Fatalf("c.jsonl has no usage rows")
			}

			undo := denyOpen(t, c)
			sum := runExport(t, s, out, []string{root}, nil)
			want := []RejectedFile{{Path: c, Status: "unreadable", Code: ingest.CodeUnreadable, Message: "open: permission denied"}}
			if d := cmp.Diff(want, sum.RejectedFiles); d != "" || sum.Rejected != 1 || sum.Read != 1 || sum.Unchanged != 1 {
				t.Errorf("unreadable: rejected %d, read %d, unchanged %d; want 1, 1, 1; RejectedFiles (-want +got):\n%s",
					sum.Rejected, sum.Read, sum.Unchanged, d)
			}
			if st, n := fileRowsOf(t, s, out, c); st != "unreadable" || n != "0" {
				t.Errorf("unreadable: status %s with %s usage rows, want unreadable with none", st, n)
			}

			undo()
			sum = runExport(t, s, out, []string{root}, nil)
			if sum.Rejected != 0 || sum.Read != 1 || sum.Unchanged != 1 {
				t.Errorf("readable again: rejected %d %v, read %d, unchanged %d; want 0, 1, 1", sum.Rejected, sum.RejectedFiles, sum.Read, sum.Unchanged)
			}
			if st, n := fileRowsOf(t, s, out, c); st != okStatus || n != okUsage {
				t.Errorf("readable again: status %s with %s usage rows, want %s with %s", st, n, okStatus, okUsage)
			}
		})
	}
}

// TestFilesUnderUnreadableDirectoryKept: the files of the last export under
// a directory that can no longer be read are not seen, not known to be
// gone: their rows are kept (Summary.Kept, not Removed) while the
// directory is rejected (exit 1). Readable again, they are unchanged.
func TestFilesUnderUnreadableDirectoryKept(t *testing.T) {
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			root := t.TempDir()
			copyFile(t, filepath.Join(casesDir, "c02-final-record-without-newline", "session.jsonl"), filepath.Join(root, "a.jsonl"))
			locked := filepath.Join(root, "locked")
			c := filepath.Join(locked, "sub", "c.jsonl")
			copyFile(t, filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds", "session.jsonl"), c)
			out := t.TempDir()
			runExport(t, s, out, []string{root}, nil)
			okStatus, okUsage := fileRowsOf(t, s, out, c)

			unlock := lockDir(t, locked)
			sum := runExport(t, s, out, []string{root}, nil)
			if sum.Kept != 1 || sum.Removed != 0 || sum.Rejected != 1 || sum.RejectedPaths != 1 || sum.Files != 2 {
				t.Errorf("locked: kept %d, removed %d, rejected %d (%d paths), files %d; want 1, 0, 1 (1), 2",
					sum.Kept, sum.Removed, sum.Rejected, sum.RejectedPaths, sum.Files)
			}
			if st, n := fileRowsOf(t, s, out, c); st != okStatus || n != okUsage {
				t.Errorf("locked: c.jsonl status %s with %s usage rows, want its rows kept (%s, %s)", st, n, okStatus, okUsage)
			}

			unlock()
			sum = runExport(t, s, out, []string{root}, nil)
			if sum.Kept != 0 || sum.Removed != 0 || sum.Rejected != 0 || sum.Unchanged != 2 || sum.Read != 0 {
				t.Errorf("readable again: kept %d, removed %d, rejected %d, unchanged %d, read %d; want 0, 0, 0, 2, 0",
					sum.Kept, sum.Removed, sum.Rejected, sum.Unchanged, sum.Read)
			}
			if err := os.RemoveAll(locked); err != nil {
				t.Fatal(err)
			}
			if sum = runExport(t, s, out, []string{root}, nil); sum.Removed != 1 || sum.Kept != 0 || sum.Files != 1 {
				t.Errorf("deleted: removed %d, kept %d, files %d; want 1, 0, 1", sum.Removed, sum.Kept, sum.Files)
			}
		})
	}
}
