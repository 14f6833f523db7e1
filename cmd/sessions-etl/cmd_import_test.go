package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runImportCLI runs sessions-etl in-process with home as the user's home.
func runImportCLI(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Now: time.Now, Home: home}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

func writeSession(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestImportCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	const id = "11111111-2222-4333-8444-555555555555"
	hdr := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/home/dev/proj"}` + "\n"
	e1 := `{"type":"message","id":"a1","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1748772001000}}` + "\n"
	e2 := `{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":1748772002000}}` + "\n"
	pi := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--", "2025-06-01T10-00-00-000Z_"+id+".jsonl")
	prime := filepath.Join(home, ".prime", "agent", "sessions", id+".jsonl")
	writeSession(t, pi, hdr+e1+e2)
	writeSession(t, prime, hdr+e1) // an older copy of the same session
	target := filepath.Join(home, ".atomic", "agent", "sessions", "--home-dev-proj--", "2025-06-01T10-00-00-000Z_"+id+".jsonl")

	code, out, errOut := runImportCLI(t, home, "import", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 2 results and a summary, got:\n%s", out)
	}
	results := map[string]map[string]any{}
	for _, l := range lines[:2] {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		results[r["path"].(string)] = r
	}
	if r := results[pi]; r["result"] != "imported" || r["target"] != target {
		t.Errorf("pi: %v", r)
	}
	if r := results[prime]; r["result"] != "duplicate" || r["duplicate_of"] != pi {
		t.Errorf("prime: %v", r)
	}
	var sum struct {
		Summary struct {
			RunID    string                    `json:"run_id"`
			BySource map[string]map[string]int `json:"by_source"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &sum); err != nil || sum.Summary.RunID == "" || sum.Summary.BySource["prime"]["duplicate"] != 1 {
		t.Fatalf("summary %s (%v)", lines[2], err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatal(err)
	}

	// Again, human output: nothing to do.
	code, out, _ = runImportCLI(t, home, "import", "-v")
	if code != ExitOK || !strings.Contains(out, "already_imported") || !strings.Contains(out, "pi      1 already_imported") || strings.Contains(out, "Undo with") {
		t.Fatalf("second run, exit %d:\n%s", code, out)
	}

	// A differing store copy is a conflict: exit 1, not overwritten.
	orig, _ := os.ReadFile(target)
	writeSession(t, target, hdr+strings.Replace(e1, `"hi"`, `"hello"`, 1)+e2)
	code, out, _ = runImportCLI(t, home, "import")
	if code != ExitFailed || !strings.Contains(out, "conflict") {
		t.Fatalf("conflict: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(target, orig, 0o600); err != nil {
		t.Fatal(err)
	}

	// Undo the first run.
	code, out, errOut = runImportCLI(t, home, "import", "--undo", sum.Summary.RunID)
	if code != ExitOK || !strings.Contains(out, "1 removed") {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("undo left %s", target)
	}
	// Undo again: the created file is already gone, nothing to report.
	for _, args := range [][]string{{}, {"--json"}} {
		code, out, _ = runImportCLI(t, home, append([]string{"import", "--undo", sum.Summary.RunID}, args...)...)
		if code != ExitOK || !strings.Contains(out, "already_original") || strings.Contains(out, "changed_since") || strings.Contains(out, "backup/") {
			t.Errorf("second undo %v: exit %d\n%s", args, code, out)
		}
	}

	// A created file changed since the run stays (exit 1 in both formats);
	// it has no backup, so none is promised.
	code, out, _ = runImportCLI(t, home, "import", "--json")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); code != ExitOK || err != nil {
		t.Fatalf("import again: exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(target)
	os.WriteFile(target, append(b, e2...), 0o600)
	for _, args := range [][]string{{}, {"--json"}} {
		code, out, _ = runImportCLI(t, home, append([]string{"import", "--undo", sum.Summary.RunID}, args...)...)
		if code != ExitFailed || !strings.Contains(out, "changed_since") || strings.Contains(out, "backup") {
			t.Errorf("undo %v of a changed copy: exit %d, want 1\n%s", args, code, out)
		}
	}

	if code, _, _ := runImportCLI(t, home, "import", "--undo", "x", "extra"); code != ExitUsage {
		t.Errorf("--undo with SOURCE: exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ := runImportCLI(t, home, "import", "--undo", "no-such-run"); code != ExitUsage {
		t.Errorf("--undo of an unknown run: exit %d, want %d", code, ExitUsage)
	}
}
