package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMigrateRelayoutCLI: a failed move is a failed result (exit 1); files
// not moved are listed with their reason and counted (not failures); undo
// puts everything back, removes the directories the run created and exits 0.
func TestMigrateRelayoutCLI(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	agent := filepath.Join(home, ".pi", "agent")
	hdr := func(id, cwd string) string {
		h := `{"type":"session","version":4,"id":"` + id + `","createdAt":"2025-06-01T10:00:00.000Z"`
		if cwd != "" {
			h += `,"cwd":"` + cwd + `"`
		}
		return h + "}\n"
	}
	writeSession(t, filepath.Join(agent, "long.jsonl"), hdr("s-long", "/"+strings.Repeat("x", 300)))
	writeSession(t, filepath.Join(agent, "mv.jsonl"), hdr("s-mv", "/home/u/mv"))
	writeSession(t, filepath.Join(agent, "ok.jsonl"), hdr("s-ok", "/home/u/ok"))
	writeSession(t, filepath.Join(agent, "sessions", "--home-u-ok--", "ok.jsonl"), hdr("s-other", "/home/u/ok"))
	writeSession(t, filepath.Join(agent, "nocwd.jsonl"), hdr("s-nocwd", ""))
	runs := filepath.Join(home, "runs")

	code, out, errOut := runImportCLI(t, home, "migrate", "--relayout", "--dry-run", "--json", filepath.Join(home, ".pi"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Summary struct {
			NotMoved         int            `json:"not_moved"`
			NotMovedByReason map[string]int `json:"not_moved_by_reason"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", code, err, out, errOut)
	}
	if s := last.Summary; s.NotMoved != 2 || s.NotMovedByReason["target_exists"] != 1 || s.NotMovedByReason["no_cwd"] != 1 {
		t.Errorf("--json summary: %+v", s)
	}

	code, out, errOut = runImportCLI(t, home, "migrate", "--relayout", "--backup-dir", runs, filepath.Join(home, ".pi"))
	if code != ExitFailed {
		t.Errorf("exit %d, want 1 (a move failed)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"failed    " + filepath.Join(agent, "long.jsonl") + " (move_failed: could not move it to ",
		"current   " + filepath.Join(agent, "ok.jsonl") + " (not moved: target exists)",
		"current   " + filepath.Join(agent, "nocwd.jsonl") + " (not moved: no cwd)",
		"moved     " + filepath.Join(agent, "mv.jsonl") + " (moved to ",
		"2 not moved (1 target exists, 1 no cwd).",
		"not an error",
		"1 file could not be upgraded or moved",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`Undo with: sessions-etl migrate --undo (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no undo hint:\n%s", out)
	}
	code, out, errOut = runImportCLI(t, home, "migrate", "--undo", m[1], "--backup-dir", runs)
	if code != ExitOK {
		t.Errorf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "1 empty directory removed") {
		t.Errorf("undo output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(agent, "sessions", "--home-u-mv--")); err == nil {
		t.Error("undo left the directory the run created")
	}
	for _, n := range []string{"long", "mv", "ok", "nocwd"} {
		if _, err := os.Stat(filepath.Join(agent, n+".jsonl")); err != nil {
			t.Errorf("%s.jsonl: %v", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(agent, "sessions", "--home-u-ok--", "ok.jsonl")); err != nil {
		t.Errorf("the other file: %v", err)
	}
}

// TestRepairsShownInText: migrate --repair and import --repair list every
// repair under the file's result line in text mode.
func TestRepairsShownInText(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	src := `{"type":"session","version":3,"id":"s-r","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"a"}}` + "\n" +
		`{"type":"message","id":"e2"`
	p := filepath.Join(home, "m", "a.jsonl")
	writeSession(t, p, src)
	code, out, errOut := runImportCLI(t, home, "import", "--repair", "--to", filepath.Join(home, "store"), filepath.Join(home, "m"))
	if code != ExitOK || !strings.Contains(out, "line 3: repair: removed the torn final fragment (27 bytes, the source file keeps it)") {
		t.Errorf("import: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runImportCLI(t, home, "migrate", "--repair", filepath.Join(home, "m"))
	if code != ExitOK || !strings.Contains(out, "upgraded  "+p) ||
		!strings.Contains(out, "line 3: repair: removed the torn final fragment (27 bytes, kept in the backup)") {
		t.Errorf("migrate: exit %d\n%s%s", code, out, errOut)
	}
}
