package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateWithoutPathAtomicOnly (finding 13, SPEC.md §2.3a): with no
// PATH, migrate upgrades Atomic stores only and points pi and Prime users
// to import; a pi or Prime store named as PATH is upgraded in place with a
// one-line warning naming the agent.
func TestMigrateWithoutPathAtomicOnly(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	v3 := func(id string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/w"}` + "\n" +
			`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	}
	files := map[string]string{
		filepath.Join(home, ".atomic", "agent", "sessions", "--w--", "a.jsonl"): v3("s-a"),
		filepath.Join(home, ".pi", "agent", "sessions", "--w--", "p.jsonl"):     v3("s-p"),
		filepath.Join(home, ".prime", "agent", "sessions", "r.jsonl"):           v3("s-r"),
	}
	for p, b := range files {
		writeSession(t, p, b)
	}
	code, out, errOut := runCLI(t, home, "migrate")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for p, b := range files {
		got, _ := os.ReadFile(p)
		atomic := strings.Contains(p, ".atomic")
		if atomic == (string(got) == b) {
			t.Errorf("%s: upgraded %v, want %v", p, !atomic, atomic)
		}
	}
	if !strings.Contains(errOut, "pi and Prime Agent read format 3") || !strings.Contains(errOut, "'sessions-etl import'") {
		t.Errorf("no pointer to import on stderr:\n%s", errOut)
	}
	if strings.Contains(errOut, "warning:") {
		t.Errorf("a warning without pi files upgraded:\n%s", errOut)
	}

	code, out, errOut = runCLI(t, home, "migrate", filepath.Join(home, ".pi"))
	if code != ExitOK {
		t.Fatalf("PATH: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: upgraded 1 pi session in place that pi reads") {
		t.Errorf("PATH: want one warning line naming pi, got:\n%s", errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(home, ".pi", "agent", "sessions", "--w--", "p.jsonl")); string(got) == files[filepath.Join(home, ".pi", "agent", "sessions", "--w--", "p.jsonl")] {
		t.Errorf("PATH: the pi file was not upgraded")
	}
}
