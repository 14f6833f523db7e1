package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/synth"
	"github.com/sessions-etl/sessions-etl/validate"
)

// runCLI runs the command in-process and returns exit code, stdout, stderr.
func runCLI(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }, Home: home}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

func TestValidateJSONLines(t *testing.T) {
	code, out, _ := runCLI(t, t.TempDir(), "validate", "--json", "../../testdata/cases/c01-torn-final-record", "../../testdata/cases/c02-final-record-without-newline")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (a torn file)", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	var v struct {
		Path          string `json:"path"`
		Source        string `json:"source"`
		Status        string `json:"status"`
		FormatVersion *int   `json:"format_version"`
		Issues        []struct {
			Line     int    `json:"line"`
			Severity string `json:"severity"`
			Code     string `json:"code"`
			Message  string `json:"message"`
		} `json:"issues"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(v.Path) || !strings.HasSuffix(v.Path, "c01-torn-final-record/session.jsonl") {
		t.Errorf("path %q, want absolute", v.Path)
	}
	if v.Status != "torn" || v.FormatVersion == nil || *v.FormatVersion != 3 || v.Source != "custom" {
		t.Errorf("verdict %+v", v)
	}
	if len(v.Issues) != 1 || v.Issues[0].Line != 4 || v.Issues[0].Code != "torn_final_record" || v.Issues[0].Severity != "error" || v.Issues[0].Message == "" {
		t.Errorf("issues %+v", v.Issues)
	}
	var sum struct {
		Summary struct {
			Files    int            `json:"files"`
			ByStatus map[string]int `json:"by_status"`
			Failed   int            `json:"files_with_errors"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Summary.Files != 2 || sum.Summary.ByStatus["torn"] != 1 || sum.Summary.ByStatus["needs_upgrade"] != 1 || sum.Summary.Failed != 1 {
		t.Errorf("summary %+v", sum.Summary)
	}
}

func TestValidateExitCodes(t *testing.T) {
	ok := "../../testdata/cases/c09-crlf-line-endings"
	if code, out, _ := runCLI(t, t.TempDir(), "validate", ok); code != ExitOK || !strings.Contains(out, "The file is loadable.") {
		t.Errorf("valid file: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, t.TempDir(), "validate", "--workers", "0", ok); code != ExitUsage || !strings.Contains(errOut, "--workers") {
		t.Errorf("--workers 0: exit %d %s", code, errOut)
	}
	if code, _, _ := runCLI(t, t.TempDir(), "validate", "--no-such-flag"); code != ExitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, _, _ := runCLI(t, t.TempDir(), "no-such-command"); code != ExitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
	code, out, _ := runCLI(t, t.TempDir(), "validate", "../../testdata/cases/c12-corrupt-middle-line")
	if code != ExitFailed || !strings.Contains(out, "c12-corrupt-middle-line/session.jsonl:3: error corrupt_line") {
		t.Errorf("corrupt file: exit %d\n%s", code, out)
	}
}

// TestValidateDefaultRoots: with no PATH the default roots under the home
// are used, and the files are only read.
func TestValidateDefaultRoots(t *testing.T) {
	home := t.TempDir()
	src, _ := os.ReadFile("../../testdata/cases/c06-v2-hook-message/session.jsonl")
	p := filepath.Join(home, ".prime", "agent", "sessions", "s.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, src, 0o600)
	st, _ := os.Stat(p)
	code, out, _ := runCLI(t, home, "validate", "--json")
	if code != ExitOK || !strings.Contains(out, `"source":"prime"`) || !strings.Contains(out, `"status":"needs_upgrade"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
	st2, _ := os.Stat(p)
	if !st.ModTime().Equal(st2.ModTime()) {
		t.Errorf("validate touched the file")
	}
}

func TestMigrateCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	dir := filepath.Join(home, "s")
	os.MkdirAll(dir, 0o700)
	for _, c := range []string{"c06-v2-hook-message", "c01-torn-final-record"} {
		b, _ := os.ReadFile("../../testdata/cases/" + c + "/session.jsonl")
		os.WriteFile(filepath.Join(dir, c+".jsonl"), b, 0o600)
	}
	code, out, _ := runCLI(t, home, "migrate", "--json", dir)
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (the torn file cannot be upgraded)\n%s", code, out)
	}
	if !strings.Contains(out, `"result":"upgraded"`) || !strings.Contains(out, `"result":"skipped","reason":"torn"`) {
		t.Errorf("results:\n%s", out)
	}
	var sum struct {
		Summary struct {
			RunID string `json:"run_id"`
		} `json:"summary"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &sum)
	if sum.Summary.RunID == "" {
		t.Fatalf("no run id in %s", lines[len(lines)-1])
	}
	if code, out, _ := runCLI(t, home, "migrate", "--undo", sum.Summary.RunID); code != ExitOK || !strings.Contains(out, "restored") {
		t.Errorf("undo: exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "c06-v2-hook-message.jsonl"))
	if !bytes.Contains(b, []byte(`"role":"hookMessage"`)) {
		t.Errorf("undo did not restore the original")
	}
	if code, _, _ := runCLI(t, home, "migrate", "--undo", "no-such-run"); code != ExitUsage {
		t.Errorf("undo of an unknown run: exit %d", code)
	}

	// A file changed after the run is not restored: exit 1 in both
	// formats, and the human output says where its original is.
	_, out, _ = runCLI(t, home, "migrate", "--json", dir)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &sum)
	p := filepath.Join(dir, "c06-v2-hook-message.jsonl")
	b, _ = os.ReadFile(p)
	os.WriteFile(p, append(b, '\n'), 0o600)
	for _, args := range [][]string{{"--json"}, {}} {
		code, out, _ := runCLI(t, home, append([]string{"migrate", "--undo", sum.Summary.RunID}, args...)...)
		if code != ExitFailed || !strings.Contains(out, "changed_since") {
			t.Errorf("undo %v of a changed file: exit %d, want 1\n%s", args, code, out)
		}
		if len(args) == 0 && !strings.Contains(out, "its original stays in") {
			t.Errorf("undo of a changed file does not name the backup:\n%s", out)
		}
	}
}

// TestValidateSummaries: the summary's file count is the sum of its
// statuses (skipped included), other JSONL files in pi's agent directory
// are passed over however the directory is reached, an empty search names
// where it looked, and the counts in the human output are true.
func TestValidateSummaries(t *testing.T) {
	src, _ := os.ReadFile("../../testdata/cases/c06-v2-hook-message/session.jsonl")
	const hdr = `{"type":"session","version":3,"id":"s1","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/p"}` + "\n"
	withAgentFiles := func(t *testing.T) string {
		home := t.TempDir()
		writeSession(t, filepath.Join(home, ".pi", "agent", "sessions", "--p--", "s.jsonl"), string(src))
		writeSession(t, filepath.Join(home, ".pi", "agent", "prompt-history.jsonl"), `{"prompt":"hi","timestamp":1}`+"\n")
		return home
	}
	for _, tc := range []struct {
		name  string
		home  func(t *testing.T) string
		args  []string // "HOME" stands for the home directory
		code  int
		want  []string
		avoid []string
	}{
		{"default roots, json", withAgentFiles, []string{"validate", "--json"}, ExitOK,
			[]string{`"code":"not_a_session_file"`, `"files":2,`, `"by_status":{"needs_upgrade":1,"skipped":1}`}, nil},
		{"default roots", withAgentFiles, []string{"validate"}, ExitOK,
			[]string{"Validated 2 files", "The file is loadable (1 skipped)."}, nil},
		{"~/.pi given", withAgentFiles, []string{"validate", "--json", "HOME/.pi"}, ExitOK,
			[]string{`"code":"not_a_session_file"`, `"files":2,`}, []string{"not_session"}},
		{"~/.pi/agent given", withAgentFiles, []string{"validate", "HOME/.pi/agent"}, ExitOK,
			[]string{"The file is loadable (1 skipped)."}, []string{"not_session"}},
		{"the file itself given", withAgentFiles, []string{"validate", "HOME/.pi/agent/prompt-history.jsonl"}, ExitFailed,
			[]string{"not_session", "1 of 1 file has errors: the agent will not load it."}, nil},
		{"nothing found", func(t *testing.T) string { return t.TempDir() }, []string{"validate"}, ExitOK,
			[]string{"No session files found (looked in: ~/.pi/agent/sessions (missing), ~/.pi/agent/*.jsonl (missing), ~/.atomic/agent/sessions (missing), ~/.prime/agent/sessions (missing), ~/.omp/agent/sessions (missing), ~/.openclaw/agents/*/sessions (missing), ~/.config/kimchi/harness/sessions (missing))."}, nil},
		{"nothing found, some roots exist", func(t *testing.T) string {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".atomic", "agent", "sessions"), 0o700)
			return home
		}, []string{"validate"}, ExitOK,
			[]string{"looked in: ~/.pi/agent/sessions (missing), ~/.pi/agent/*.jsonl (missing), ~/.atomic/agent/sessions, ~/.prime"}, nil},
		{"more issues than listed", func(t *testing.T) string {
			home := t.TempDir()
			writeSession(t, filepath.Join(home, "s.jsonl"), hdr+strings.Repeat("oops\n", 150)+`{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}`+"\n")
			return home
		}, []string{"validate", "HOME/s.jsonl"}, ExitFailed,
			[]string{"Problems (first 20 of 150):", "1 of 1 file has errors"}, []string{"of 100)"}},
		{"all listed", func(t *testing.T) string {
			home := t.TempDir()
			writeSession(t, filepath.Join(home, "s.jsonl"), hdr+"oops\n"+`{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}`+"\n")
			writeSession(t, filepath.Join(home, "t.jsonl"), hdr+"oops\n"+`{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}`+"\n")
			return home
		}, []string{"validate", "HOME"}, ExitFailed,
			[]string{"Problems:\n", "2 of 2 files have errors: the agent will not load them."}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := tc.home(t)
			var args []string
			for _, a := range tc.args {
				args = append(args, strings.Replace(a, "HOME", home, 1))
			}
			code, out, errOut := runCLI(t, home, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(out, a) {
					t.Errorf("output has %q:\n%s", a, out)
				}
			}
		})
	}
}

// TestFormatVersions: early-v4 files are shown with the v4 files.
func TestFormatVersions(t *testing.T) {
	for _, tc := range []struct {
		byVersion map[string]int
		early     int
		want      string
	}{
		{map[string]int{"3": 2, "4": 5, "unknown": 3}, 3, "\nformat versions: v3 2, v4 5 (3 early v4), unknown 3\n"},
		{map[string]int{"1": 1, "4": 2}, 0, "\nformat versions: v1 1, v4 2\n"},
		{map[string]int{}, 0, ""},
	} {
		if got := formatVersions(validate.Summary{ByVersion: tc.byVersion, EarlyV4: tc.early}); got != tc.want {
			t.Errorf("formatVersions(%v, early %d) = %q, want %q", tc.byVersion, tc.early, got, tc.want)
		}
	}
}

// TestSynthMessage: synth says how many files it wrote (the manifest's
// count, which --sessions only approximates), not "session files".
func TestSynthMessage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "h")
	code, stdout, errOut := runCLI(t, t.TempDir(), "synth", "--out", out, "--sessions", "40", "--seed", "7")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	m, err := synth.LoadManifest(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("Wrote %d JSONL files (", len(m.Files)), "(--sessions 40 is a target:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = runCLI(t, t.TempDir(), "synth", "--out", out, "--sessions", "40", "--seed", "7")
	if want := fmt.Sprintf("already holds this home (%d JSONL files,", len(m.Files)); !strings.Contains(stdout, want) {
		t.Errorf("again: output lacks %q:\n%s", want, stdout)
	}
}
