package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareHomeNeverDeletes (finding 14): pointed at a directory that is
// not empty and was not generated (no manifest.json) — a test corpus, a
// real ~/.pi — the harness refuses and leaves every byte; a new or empty
// directory is generated into; a generated home is reused.
func TestPrepareHomeNeverDeletes(t *testing.T) {
	base := t.TempDir()
	precious := filepath.Join(base, "corpus")
	if err := os.MkdirAll(filepath.Join(precious, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(precious, "sessions", "a.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gen := func(n *int) func(string) error {
		return func(dir string) error {
			*n++
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{}"), 0o644)
		}
	}
	var calls int
	err := prepareHome(precious, gen(&calls))
	if err == nil || !strings.Contains(err.Error(), "refusing") || calls != 0 {
		t.Fatalf("non-empty directory: err %v, %d generations; want refused", err, calls)
	}
	if b, err := os.ReadFile(filepath.Join(precious, "sessions", "a.jsonl")); err != nil || string(b) != "{}\n" {
		t.Fatalf("the corpus was touched: %q %v", b, err)
	}
	for _, home := range []string{filepath.Join(base, "new"), filepath.Join(base, "empty")} {
		if strings.HasSuffix(home, "empty") {
			if err := os.Mkdir(home, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		calls = 0
		if err := prepareHome(home, gen(&calls)); err != nil || calls != 1 {
			t.Fatalf("%s: err %v, %d generations", home, err, calls)
		}
		if _, err := os.Stat(filepath.Join(home, "manifest.json")); err != nil {
			t.Fatalf("%s: not generated: %v", home, err)
		}
		if err := prepareHome(home, gen(&calls)); err != nil || calls != 1 {
			t.Fatalf("%s: generated home not reused: err %v, %d generations", home, err, calls)
		}
	}
	ents, _ := os.ReadDir(base)
	if len(ents) != 3 {
		t.Errorf("left behind in %s: %v", base, ents)
	}
}

// TestPrepareWorkRefusesForeignDirectory: the scratch directory, whose
// outputs the harness removes between stages, is never one it did not make.
func TestPrepareWorkRefusesForeignDirectory(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "keep.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareWork(base); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("foreign directory: %v, want refused", err)
	}
	work := filepath.Join(base, "work")
	if err := prepareWork(work); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "out.duckdb"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareWork(work); err != nil {
		t.Fatalf("the harness's own directory refused: %v", err)
	}
}
