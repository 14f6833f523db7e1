package testkit

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCopyTree: files keep their bytes, permission bits and mtimes;
// directories are made; non-regular files are skipped.
func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	mtime := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	WriteFile(t, filepath.Join(src, "a", "b", "s.jsonl"), "one\n")
	if err := os.Chmod(filepath.Join(src, "a", "b", "s.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(src, "a", "b", "s.jsonl"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", filepath.Join(src, "a", "link")); err != nil {
		t.Fatal(err)
	}
	dst := TempCopy(t, src)
	p := filepath.Join(dst, "a", "b", "s.jsonl")
	raw, err := os.ReadFile(p)
	if err != nil || string(raw) != "one\n" {
		t.Fatalf("copy: %q %v", raw, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(mtime) {
		t.Errorf("copy: mode %v mtime %v, want 0600 %v", fi.Mode().Perm(), fi.ModTime(), mtime)
	}
	if _, err := os.Lstat(filepath.Join(dst, "a", "link")); !os.IsNotExist(err) {
		t.Errorf("symbolic link copied: %v", err)
	}
}

// TestSeed: the seed is -seed when given, else drawn from the clock and
// nonzero (0 would mean "not given").
func TestSeed(t *testing.T) {
	got := Seed(t)
	if SeedGiven() && got != *seedFlag || got == 0 {
		t.Errorf("seed %d (flag %d)", got, *seedFlag)
	}
}

// TestSeeds: a flag's list when given, else the fixed seeds and one more.
func TestSeeds(t *testing.T) {
	if got := Seeds(t, "x-seeds", " 3, 4 ,5"); len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Errorf("list: %v", got)
	}
	if got := Seeds(t, "x-seeds", "", 1, 2); len(got) != 3 || got[0] != 1 || got[1] != 2 {
		t.Errorf("default: %v", got)
	}
}

// TestCLIDir: one directory per module and tag set, the same on every call.
func TestCLIDir(t *testing.T) {
	a, err := cliDir(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cliDir(nil)
	c, _ := cliDir([]string{"faultseam"})
	if a != b || a == c || filepath.Dir(a) != filepath.Clean(os.TempDir()) {
		t.Errorf("cliDir: %s, %s; with a tag %s", a, b, c)
	}
}
