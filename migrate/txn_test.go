package migrate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// TestTimesSetBeforeRename (finding 3): the migrated file has its original
// mtime the instant the rename publishes it, so a crash right after the
// rename can never leave it with mtime = now (which would reorder the
// agent's "most recent" list for good: the next run sees it current). The
// seam stats the target right after the real rename, where a kill -9 would
// stop the process.
func TestTimesSetBeforeRename(t *testing.T) {
	root := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
	p := filepath.Join(root, "session.jsonl")
	old := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	saved := fstx.Faults.Rename
	defer func() { fstx.Faults.Rename = saved }()
	var atRename []time.Time
	fstx.Faults.Rename = func(from, to string) error {
		if err := saved(from, to); err != nil {
			return err
		}
		fi, err := os.Stat(to)
		if err != nil {
			return err
		}
		atRename = append(atRename, fi.ModTime())
		return nil
	}
	out := runMigrate(t, root, nil)
	if r := out.results["session.jsonl"]; r.Result != ResultUpgraded {
		t.Fatalf("%+v", r)
	}
	if len(atRename) != 1 || !atRename[0].Equal(old) {
		t.Errorf("mtime right after the rename: %v, want %v", atRename, old)
	}
}

// TestFailedTransactionLeavesNoBackup (finding 7): a transaction that fails
// after its backup was written (here the rename fails with ENOSPC) removes
// that backup: the run directory holds only what its journal lists (on a
// full disk, stray backups eat the space that is already short).
func TestFailedTransactionLeavesNoBackup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		install func() func()
	}{
		{"rename", func() func() {
			saved := fstx.Faults.Rename
			fstx.Faults.Rename = func(a, b string) error { return &os.LinkError{Op: "rename", Old: a, New: b, Err: errNoSpace} }
			return func() { fstx.Faults.Rename = saved }
		}},
		{"fsync of the temporary file", func() func() {
			saved := fstx.Faults.Sync
			fstx.Faults.Sync = func(f *os.File) error {
				if filepath.Ext(f.Name()) == ".tmp" {
					return errNoSpace
				}
				return saved(f)
			}
			return func() { fstx.Faults.Sync = saved }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
			runs := filepath.Join(t.TempDir(), "runs")
			restore := tc.install()
			out := runMigrate(t, root, func(o *Options) { o.RunsDir = runs })
			restore()
			if r := out.results["session.jsonl"]; r.Result != ResultFailed {
				t.Fatalf("%+v, want failed", r)
			}
			var left []string
			filepath.WalkDir(runs, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && filepath.Base(filepath.Dir(p)) == "backup" {
					left = append(left, p)
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("backups left by a failed transaction: %v", left)
			}
		})
	}
}
