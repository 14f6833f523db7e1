package fstx

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A file held open through OpenFile can be replaced by a rename and keeps
// reading its own bytes; an O_APPEND handle writes at the end. On Windows
// this is what FILE_SHARE_DELETE buys (Go's os.Open would make the rename
// fail with "Access is denied"); elsewhere it is what the system does.
func TestOpenFileRenameOverOpenHandle(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenFile(target, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := OpenFile(target, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(); err != nil {
		t.Fatalf("Sync on an append handle: %v", err)
	}
	defer a.Close()

	tmp := filepath.Join(dir, "new.tmp")
	if err := os.WriteFile(tmp, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := renameReplace(tmp, target); err != nil {
		t.Fatalf("rename over a file open through OpenFile: %v", err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "old\nmore\n" {
		t.Fatalf("open handle reads %q after the rename, want the old file's bytes %q", got, "old\nmore\n")
	}
	now, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != "new\n" {
		t.Fatalf("path reads %q, want %q", now, "new\n")
	}
}
