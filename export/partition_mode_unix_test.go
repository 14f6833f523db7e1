//go:build unix

package export

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// checkModes fails for each directory or file under root (the root's lock
// and staging directories aside) whose mode is not dir or file.
func checkModes(t *testing.T, root string, dir, file fs.FileMode) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == LocksDir || rel == StagingDir || strings.HasPrefix(rel, LocksDir+"/") || strings.HasPrefix(rel, StagingDir+"/") || rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := file
		if d.IsDir() {
			want = dir
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v; want %v", rel, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d paths under %s", n, root)
	}
}

// TestSharedRootModes: under umask 022 a shared root's directories are
// 0755 and its files 0644 (readable by a service account); --private makes
// them 0700 and 0600. An unpartitioned export's datasets too.
func TestSharedRootModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	home := machineHome(t, 1)

	root := t.TempDir()
	if err := exportMachine(t, root, t.TempDir(), "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	checkModes(t, root, 0o755, 0o644)

	flat := t.TempDir()
	rts, _ := pathRoots(home)
	if _, err := Run(t.Context(), Options{Roots: rts, ParquetDir: flat, DuckDBPath: filepath.Join(t.TempDir(), "x.duckdb")}); err != nil {
		t.Fatal(err)
	}
	checkModes(t, flat, 0o755, 0o644)

	private := t.TempDir()
	if err := exportMachine(t, private, t.TempDir(), "a", PartitionMonth, home, func(o *Options) { o.Private = true }); err != nil {
		t.Fatal(err)
	}
	checkModes(t, private, 0o700, 0o600)
}
