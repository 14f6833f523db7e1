package migrate

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReadOnlyFileSystemCurrentNotFailed (finding 10): the plan is made
// before the lock, so on a read-only file system a file that is already
// current is reported current (nothing to write, no lock taken), and only
// the file that needs an upgrade fails. A real read-only tmpfs: needs root
// (CI runs as root); otherwise a read-only directory stands in for it.
func TestReadOnlyFileSystemCurrentNotFailed(t *testing.T) {
	dir := t.TempDir()
	mounted := false
	if os.Getuid() == 0 {
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		mounted = true
		defer exec.Command("umount", dir).Run()
	} else {
		t.Log("not root: a read-only directory stands in for a read-only file system")
	}
	for name, src := range map[string]string{
		"current.jsonl": "c14-atomic-v4-billed-usage-kinds/session.jsonl",
		"old.jsonl":     "c06-v2-hook-message/session.jsonl",
	} {
		b, err := os.ReadFile(filepath.Join(casesDir, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if mounted {
		if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
			t.Fatalf("remount ro: %v %s", err, out)
		}
	} else {
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
	}
	out := runMigrate(t, dir, nil)
	if r := out.results["current.jsonl"]; r.Result != ResultCurrent {
		t.Errorf("current.jsonl: %s (%s), want current", r.Result, r.Detail)
	}
	if r := out.results["old.jsonl"]; r.Result != ResultFailed {
		t.Errorf("old.jsonl: %s (%s), want failed", r.Result, r.Detail)
	}
}
