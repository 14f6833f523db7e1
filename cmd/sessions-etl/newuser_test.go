package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNewUserHome is issue 10's "tried as a new user would": a fresh HOME
// with pi moved by PI_CODING_AGENT_DIR (~/.config/pi/agent, case c26's pi
// session), an oh-my-pi home (case c25's session with its title slot) and
// an OpenClaw home with its sidecars, a reset archive and a deleted .zst
// archive (case c23). With no PATH: `report daily` counts every store
// once (the totals of the three cases' expected.json added up; per
// --source label, each case's own), a second run from the warm cache the
// same; `sources` shows each store, how it was chosen and the session files
// found; `validate` reads all of them (the trajectory log passed over
// with a note); nothing on stderr.
func TestNewUserHome(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	home := t.TempDir()
	copyCase := func(from, to string) {
		t.Helper()
		src := filepath.Join(reportCases, from)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out := filepath.Join(home, to, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o600)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	copyCase("c26-moved-stores/home/.config/pi/agent/sessions", ".config/pi/agent/sessions")
	copyCase("c25-omp-title-slot/omp/agent/sessions", ".omp/agent/sessions")
	copyCase("c23-openclaw-sidecars/openclaw/agents/ops/sessions", ".openclaw/agents/ops/sessions")
	env := map[string]string{"PI_CODING_AGENT_DIR": filepath.Join(home, ".config", "pi", "agent")}

	// The expected totals, from the cases.
	var c26 struct {
		Envs []struct {
			Env      map[string]string     `json:"env"`
			PerLabel map[string]caseTotals `json:"per_label"`
		} `json:"envs"`
	}
	type usage struct {
		Records int64   `json:"counted_records"`
		Input   int64   `json:"input"`
		Output  int64   `json:"output"`
		Cost    float64 `json:"cost_total"`
	}
	var c25, c23 struct {
		Usage usage `json:"usage"`
	}
	readExpected(t, "c26-moved-stores", &c26)
	readExpected(t, "c25-omp-title-slot", &c25)
	readExpected(t, "c23-openclaw-sidecars", &c23)
	perLabel := map[string]caseTotals{
		"omp":      {Records: c25.Usage.Records, Input: c25.Usage.Input, Output: c25.Usage.Output, Cost: c25.Usage.Cost},
		"openclaw": {Records: c23.Usage.Records, Input: c23.Usage.Input, Output: c23.Usage.Output, Cost: c23.Usage.Cost},
	}
	for _, e := range c26.Envs {
		if e.Env["PI_CODING_AGENT_DIR"] == "$HOME/.config/pi/agent" {
			perLabel["pi"] = e.PerLabel["pi"]
		}
	}
	if perLabel["pi"].Records == 0 {
		t.Fatal("c26: no environment with PI_CODING_AGENT_DIR=$HOME/.config/pi/agent")
	}
	var total caseTotals
	for _, l := range perLabel {
		total.Records += l.Records
		total.Input += l.Input
		total.Output += l.Output
		total.Cost += l.Cost
	}

	for run := 1; run <= 2; run++ {
		code, out, errOut := runEnvCLI(t, home, env, "report", "daily", "--json", "--tz", "UTC")
		if code != ExitOK || errOut != "" {
			t.Fatalf("report daily (run %d): exit %d\n%s", run, code, errOut)
		}
		if got := reportJSONTotals(t, out); !sameTotals(got, total) {
			t.Errorf("report daily (run %d): %+v, want %+v", run, got, total)
		}
	}
	for label, want := range perLabel {
		code, out, errOut := runEnvCLI(t, home, env, "report", "daily", "--json", "--tz", "UTC", "--source", label)
		if code != ExitOK {
			t.Fatalf("report --source %s: exit %d\n%s", label, code, errOut)
		}
		if got := reportJSONTotals(t, out); !sameTotals(got, want) {
			t.Errorf("report --source %s: %+v, want %+v", label, got, want)
		}
	}

	// sources: each store, how it was chosen, the session files found (on
	// disk: every file of the store but the trajectory log).
	sessionFiles := func(dir string) (n int, bytes int64) {
		ents, err := os.ReadDir(filepath.Join(home, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(e.Name(), ".trajectory.jsonl") {
				n++
				bytes += fi.Size()
			}
		}
		return n, bytes
	}
	pin, pib := sessionFiles(".config/pi/agent/sessions/--home-dev-x--")
	ompn, ompb := sessionFiles(".omp/agent/sessions/--home-dev-app--")
	ocn, ocb := sessionFiles(".openclaw/agents/ops/sessions")
	want := []sourceRow{
		{Label: "pi", Root: filepath.Join(home, ".config/pi/agent/sessions"), SelectedBy: "variable", Variable: "PI_CODING_AGENT_DIR", Exists: true, Files: pin, Bytes: pib},
		{Label: "atomic", Root: filepath.Join(home, ".atomic/agent/sessions"), SelectedBy: "default"},
		{Label: "prime", Root: filepath.Join(home, ".prime/agent/sessions"), SelectedBy: "default"},
		{Label: "omp", Root: filepath.Join(home, ".omp/agent/sessions"), SelectedBy: "default", Exists: true, Files: ompn, Bytes: ompb},
		{Label: "openclaw", Root: filepath.Join(home, ".openclaw/agents/ops/sessions"), SelectedBy: "default", Exists: true, Files: ocn, Bytes: ocb},
		{Label: "kimchi", Root: filepath.Join(home, ".config/kimchi/harness/sessions"), SelectedBy: "default"},
	}
	if ocn != 5 {
		t.Fatalf("the OpenClaw store holds %d session files, want 5 (c23)", ocn)
	}
	rows, out := sourcesJSON(t, home, env)
	if len(rows) != len(want) {
		t.Errorf("sources: %d rows, want %d:\n%s", len(rows), len(want), out)
	}
	for _, w := range want {
		i := slices.IndexFunc(rows, func(r sourceRow) bool { return r.Label == w.Label && r.Root == w.Root })
		if i < 0 {
			t.Errorf("sources: no row %s %s:\n%s", w.Label, w.Root, out)
			continue
		}
		r := rows[i]
		if r.SelectedBy != w.SelectedBy || r.Variable != w.Variable || r.Exists != w.Exists || r.Files != w.Files || r.Bytes != w.Bytes {
			t.Errorf("sources row %s: %+v, want %+v", w.Label, r, w)
		}
	}
	code, out, _ := runEnvCLI(t, home, env, "sources")
	if code != ExitOK || !strings.Contains(out, "PI_CODING_AGENT_DIR") {
		t.Errorf("sources (text): exit %d, the pi row does not name PI_CODING_AGENT_DIR:\n%s", code, out)
	}

	code, out, errOut := runEnvCLI(t, home, env, "validate", "--json")
	if code != ExitOK {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	statuses := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v jsonFileVerdict
		if json.Unmarshal([]byte(line), &v) == nil && v.Path != "" {
			statuses[v.Status]++
		}
	}
	if statuses["needs_upgrade"] != pin+ompn+ocn || statuses["skipped"] != 1 || len(statuses) != 2 {
		t.Errorf("validate: %v, want %d needs_upgrade and the trajectory log skipped", statuses, pin+ompn+ocn)
	}
}

// TestMovedStoreGivenAsPath: a PATH inside a store moved by a variable
// keeps that store's label (SPEC.md §7.1: the label comes from the store a
// file is in), not custom; a PATH that is pi's moved agent directory reads
// its other JSONL files as pi's agent directory does (not_a_session_file,
// a note), and an archive given as PATH is labelled by its inner paths.
func TestMovedStoreGivenAsPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	home := t.TempDir()
	agent := filepath.Join(home, ".config", "pi", "agent")
	sess := filepath.Join(agent, "sessions", "--home-dev-x--", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(sess), 0o755); err != nil {
		t.Fatal(err)
	}
	hdr := `{"type":"session","version":3,"id":"0a0a0a0a-4e5f-4a6b-8c7d-0a0a0a0a0001","timestamp":"2025-12-01T09:00:00.000Z","cwd":"/home/dev/x"}` + "\n"
	if err := os.WriteFile(sess, []byte(hdr), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(agent, "history.jsonl")
	if err := os.WriteFile(other, []byte(`{"kind":"prompt","text":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PI_CODING_AGENT_DIR": agent}
	for _, path := range []string{agent, filepath.Join(agent, "sessions"), filepath.Dir(sess)} {
		code, out, errOut := runEnvCLI(t, home, env, "validate", "--json", path)
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v jsonFileVerdict
			if json.Unmarshal([]byte(line), &v) == nil && v.Path != "" {
				got[v.Path] = v.Source + " " + v.Status
			}
		}
		if code != ExitOK || got[sess] != "pi needs_upgrade" {
			t.Errorf("validate %s: exit %d, %v, want %s labelled pi\n%s", path, code, got, sess, errOut)
		}
		if path == agent && got[other] != "pi skipped" {
			t.Errorf("validate %s: %s is %q, want pi skipped (not_a_session_file)", path, other, got[other])
		}
	}
	// Without the variable, the same PATH is nobody's store: custom.
	code, out, _ := runEnvCLI(t, home, nil, "validate", "--json", filepath.Join(agent, "sessions"))
	if code != ExitOK || !strings.Contains(out, `"source":"custom"`) {
		t.Errorf("validate without PI_CODING_AGENT_DIR: exit %d, want the file labelled custom:\n%s", code, out)
	}
}

func readExpected(t *testing.T, c string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(reportCases, c, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", c, err)
	}
}
