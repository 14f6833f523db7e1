package report

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestFingerprintChanges: every change to what the roots hold changes the
// fingerprint (the answer cache must never answer for other files), and
// changes discovery would not look at leave it alone.
func TestFingerprintChanges(t *testing.T) {
	type tc struct {
		name   string
		change func(t *testing.T, dir string)
		same   bool // the fingerprint must stay the same
		ctime  bool // seen through the change time only (Linux)
	}
	sameSizeKeepMtime := func(t *testing.T, p string, content string) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	cases := []tc{
		{name: "nothing", same: true, change: func(*testing.T, string) {}},
		{name: "append", change: func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "a", "one.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteString("x\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "add a file in a nested directory", change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a", "b", "new.jsonl"), "{}\n")
		}},
		{name: "remove a file", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "a", "b", "two.jsonl")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "rename a file", change: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "a", "one.jsonl"), filepath.Join(dir, "a", "uno.jsonl")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "chmod", change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "a", "one.jsonl"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "empty directory added", change: func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "same-size rewrite with the old mtime restored", ctime: true, change: func(t *testing.T, dir string) {
			sameSizeKeepMtime(t, filepath.Join(dir, "a", "one.jsonl"), "{\"type\":\"sessioN\"}\n")
		}},
		{name: "atomic replace, same size and mtime", change: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "a", "b", "two.jsonl")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(dir, "a", "b", ".tmp")
			writeFile(t, tmp, "{\"type\":\"sessioN\"}\n")
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "inside the skipped directory", same: true, change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "state", "run", "backup.jsonl"), "{}\n")
		}},
	}
	for _, c := range cases {
		if c.ctime && runtime.GOOS != "linux" {
			// The portable walk has no change time or inode: this change
			// is not seen there (and is not tested).
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "a", "one.jsonl"), "{\"type\":\"session\"}\n")
			writeFile(t, filepath.Join(dir, "a", "b", "two.jsonl"), "{\"type\":\"session\"}\n")
			writeFile(t, filepath.Join(dir, "state", "run", "x"), "")
			roots := []ingest.Root{{Path: dir, Recursive: true, Skip: []string{filepath.Join(dir, "state")}}}
			before, err := fingerprint(roots)
			if err != nil {
				t.Fatal(err)
			}
			c.change(t, dir)
			after, err := fingerprint(roots)
			if err != nil {
				t.Fatal(err)
			}
			if (before == after) != c.same {
				t.Errorf("same fingerprint = %v, want %v", before == after, c.same)
			}
		})
	}
}

// TestFingerprintNonRecursive: below a root that is not recursive only the
// directory's own entries count (discovery does not descend); a new
// subdirectory still changes the directory.
func TestFingerprintNonRecursive(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "top.jsonl"), "{}\n")
	writeFile(t, filepath.Join(dir, "sub", "deep.jsonl"), "{}\n")
	roots := []ingest.Root{{Path: dir}}
	before, err := fingerprint(roots)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "deep.jsonl"), "{}\n{}\n")
	if after, err := fingerprint(roots); err != nil || after != before {
		t.Errorf("a file below a non-recursive root changed the fingerprint (%v)", err)
	}
	writeFile(t, filepath.Join(dir, "top.jsonl"), "{}\n{}\n")
	if after, err := fingerprint(roots); err != nil || after == before {
		t.Errorf("a file of the root did not change the fingerprint (%v)", err)
	}
}

// TestFingerprintRefusesLinks: a symbolic link (whose target the walk
// does not look into) makes the roots unfit for the cache.
func TestFingerprintRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := t.TempDir()
	writeFile(t, filepath.Join(target, "x.jsonl"), "{}\n")
	writeFile(t, filepath.Join(dir, "a", "one.jsonl"), "{}\n")
	if err := os.Symlink(target, filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := fingerprint([]ingest.Root{{Path: dir, Recursive: true}}); !errors.Is(err, errNoFingerprint) {
		t.Errorf("link below the root: err = %v", err)
	}
	if _, err := fingerprint([]ingest.Root{{Path: filepath.Join(dir, "a", "link"), Recursive: true}}); !errors.Is(err, errNoFingerprint) {
		t.Errorf("link as the root: err = %v", err)
	}
}

// TestRunStatusCachedFiles: with a fixed clock, a session file added to
// the roots and then removed changes the cached answer each time.
func TestRunStatusCachedFiles(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "66666666-0000-4000-8000-000000000001", "2025-06-05T09:00:00.000Z", []brec{
		{at: "2025-06-05T09:10:00.000Z", input: 1000, output: 200, cost: 1},
	})
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "c.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	now := utc("2025-06-05T10:00:00Z")
	today := func(want float64) {
		t.Helper()
		st, err := RunStatusCached(context.Background(), o, StatusQuery{}, now)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(st.Today.Cost-want) > 1e-12 || !strings.HasPrefix(st.Line(-1), "today $") {
			t.Errorf("today $%v (%q), want $%v", st.Today.Cost, st.Line(-1), want)
		}
	}
	today(1)
	today(1) // from the cache
	added := sessionFile(t, dir, "66666666-0000-4000-8000-000000000002", "2025-06-05T09:30:00.000Z", []brec{
		{at: "2025-06-05T09:40:00.000Z", input: 10, output: 5, cost: 2.5},
	})
	today(3.5)
	today(3.5)
	if err := os.Remove(added); err != nil {
		t.Fatal(err)
	}
	today(1)
}
