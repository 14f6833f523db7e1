package fstx

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// A session a dead process left aside (renameReplace's Windows fallback,
// killed between its two moves) is moved back by CleanStaleTemps when its
// name is free, and left alone, never deleted, when it is not.
func TestCleanStaleTempsRestoresAside(t *testing.T) {
	dead := deadPID(t)
	dir := t.TempDir()
	aside := func(name string) string {
		return filepath.Join(dir, TempPrefix+strconv.Itoa(dead)+"-"+name+".aside")
	}
	if err := os.WriteFile(aside("a.jsonl"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(aside("b.jsonl"), []byte("old b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("new b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CleanStaleTemps(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "a.jsonl"): "a\n",
		filepath.Join(dir, "b.jsonl"): "new b\n",
		aside("b.jsonl"):              "old b\n",
	} {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", filepath.Base(path), got, err, want)
		}
	}
	if _, err := os.Lstat(aside("a.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a's aside copy still there after it was moved back: %v", err)
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.ProcessState.Pid()
	if ProcessAlive(pid) {
		t.Fatalf("pid %d still alive after its process exited", pid)
	}
	return pid
}

// TestSyncFile: a file another writer made is fsynced through the fault
// seam (an injected fsync error is returned), and a missing file is an
// error.
func TestSyncFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncFile(p); err != nil {
		t.Fatal(err)
	}
	saved := Faults.Sync
	defer func() { Faults.Sync = saved }()
	errInjected := errors.New("injected fsync error")
	Faults.Sync = func(*os.File) error { return errInjected }
	if err := SyncFile(p); !errors.Is(err, errInjected) {
		t.Errorf("injected EIO: got %v", err)
	}
	if err := SyncFile(p + ".missing"); err == nil {
		t.Error("missing file: no error")
	}
}
