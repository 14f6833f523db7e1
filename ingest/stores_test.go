package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDefaultStores: every variable of SPEC.md §7.1 moves its store (and
// only its store); a variable naming a missing path gives a store that is
// not there and that MissingMoved names; unset or empty variables leave
// the defaults.
func TestDefaultStores(t *testing.T) {
	home := t.TempDir()
	other := t.TempDir()
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(filepath.Join(home, ".openclaw", "agents", "main", "sessions"))
	mk(filepath.Join(home, ".openclaw", "agents", "ops"))
	mk(filepath.Join(other, "state", "agents", "x", "sessions"))
	mk(filepath.Join(other, "omp-agent", "sessions"))

	type row struct{ label, root, by, variable string }
	def := []row{
		{"pi", filepath.Join(home, ".pi/agent/sessions"), "default", ""},
		{"atomic", filepath.Join(home, ".atomic/agent/sessions"), "default", ""},
		{"prime", filepath.Join(home, ".prime/agent/sessions"), "default", ""},
		{"omp", filepath.Join(home, ".omp/agent/sessions"), "default", ""},
		{"openclaw", filepath.Join(home, ".openclaw/agents/main/sessions"), "default", ""},
		{"openclaw", filepath.Join(home, ".openclaw/agents/ops/sessions"), "default", ""},
		{"kimchi", filepath.Join(home, ".config/kimchi/harness/sessions"), "default", ""},
	}
	with := func(i int, r row) []row {
		out := slices.Clone(def)
		out[i] = r
		return out
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    []row
		flat    string // pi's legacy flat directory
		missing []string
	}{
		{"none", nil, def, filepath.Join(home, ".pi/agent"), nil},
		{"empty is unset", map[string]string{EnvPiAgentDir: "", EnvPrimeSessionDir: ""}, def, filepath.Join(home, ".pi/agent"), nil},
		{"PI_CODING_AGENT_DIR", map[string]string{EnvPiAgentDir: "~/.config/pi/agent"},
			with(0, row{"pi", filepath.Join(home, ".config/pi/agent/sessions"), "variable", EnvPiAgentDir}),
			filepath.Join(home, ".config/pi/agent"), []string{EnvPiAgentDir}},
		{"PI_CODING_AGENT_SESSION_DIR wins", map[string]string{EnvPiAgentDir: other, EnvPiSessionDir: filepath.Join(other, "omp-agent")},
			with(0, row{"pi", filepath.Join(other, "omp-agent"), "variable", EnvPiSessionDir}), other, nil},
		{"PRIME_AGENT_SESSION_DIR missing", map[string]string{EnvPrimeSessionDir: filepath.Join(other, "nope")},
			with(2, row{"prime", filepath.Join(other, "nope"), "variable", EnvPrimeSessionDir}),
			filepath.Join(home, ".pi/agent"), []string{EnvPrimeSessionDir}},
		{"OMP_CODING_AGENT_DIR", map[string]string{EnvOmpAgentDir: filepath.Join(other, "omp-agent")},
			with(3, row{"omp", filepath.Join(other, "omp-agent/sessions"), "variable", EnvOmpAgentDir}), filepath.Join(home, ".pi/agent"), nil},
		{"OMP_CODING_AGENT_SESSION_DIR wins", map[string]string{EnvOmpAgentDir: other, EnvOmpSessionDir: filepath.Join(other, "s")},
			with(3, row{"omp", filepath.Join(other, "s"), "variable", EnvOmpSessionDir}), filepath.Join(home, ".pi/agent"), []string{EnvOmpSessionDir}},
		{"OPENCLAW_STATE_DIR", map[string]string{EnvOpenClawState: filepath.Join(other, "state")},
			slices.Delete(with(4, row{"openclaw", filepath.Join(other, "state/agents/x/sessions"), "variable", EnvOpenClawState}), 5, 6),
			filepath.Join(home, ".pi/agent"), nil},
		{"OPENCLAW_STATE_DIR missing", map[string]string{EnvOpenClawState: filepath.Join(other, "gone")},
			slices.Delete(with(4, row{"openclaw", filepath.Join(other, "gone/agents/*/sessions"), "variable", EnvOpenClawState}), 5, 6),
			filepath.Join(home, ".pi/agent"), []string{EnvOpenClawState}},
		{"XDG_CONFIG_HOME", map[string]string{EnvXDGConfigHome: other},
			with(6, row{"kimchi", filepath.Join(other, "kimchi/harness/sessions"), "default", ""}), filepath.Join(home, ".pi/agent"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := StoreEnv{Home: home, Lookup: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }}
			got := DefaultStores(env)
			var rows []row
			for _, s := range got {
				rows = append(rows, row{s.Label, s.Root, s.SelectedBy, s.Variable})
				if s.Kind != s.Label {
					t.Errorf("%s: kind %q", s.Label, s.Kind)
				}
			}
			if !slices.Equal(rows, tc.want) {
				t.Errorf("stores:\n got %v\nwant %v", rows, tc.want)
			}
			if got[0].Flat != tc.flat {
				t.Errorf("pi flat %q, want %q", got[0].Flat, tc.flat)
			}
			var missing []string
			for _, s := range MissingMoved(got) {
				missing = append(missing, s.Variable)
			}
			if !slices.Equal(missing, tc.missing) {
				t.Errorf("missing moved stores %v, want %v", missing, tc.missing)
			}
		})
	}
}

// TestStoreLabels: a file is labelled by the store it was found in, even
// when its path names another agent's home; --source (Root.Labels) keeps
// only its label; a moved pi agent directory passes over its other JSONL
// files as .pi/agent does.
func TestStoreLabels(t *testing.T) {
	home := t.TempDir()
	agent := filepath.Join(home, "cfg", ".atomic-looking", "agent")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hdr := `{"type":"session","id":"a","version":3,"timestamp":"2025-01-01T00:00:00Z","cwd":"/x"}` + "\n"
	write(filepath.Join(agent, "sessions", ".atomic", "s.jsonl"), hdr)
	write(filepath.Join(agent, "flat.jsonl"), hdr)
	write(filepath.Join(agent, "history.jsonl"), `{"type":"prompt","text":"hi"}`+"\n")
	write(filepath.Join(home, ".omp", "agent", "sessions", "o.jsonl"), hdr)
	env := StoreEnv{Home: home, Lookup: func(k string) (string, bool) {
		if k == EnvPiAgentDir {
			return agent, true
		}
		return "", false
	}}
	rts := StoreRoots(DefaultStores(env))
	got := map[string]string{}
	var notes []string
	err := Discover(context.Background(), rts, func(f File) error { got[f.Path] = f.Source; return nil },
		func(p PathIssue) { notes = append(notes, p.Issue.Code+" "+filepath.Base(p.Path)) })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		filepath.Join(agent, "sessions", ".atomic", "s.jsonl"):      "pi",
		filepath.Join(agent, "flat.jsonl"):                          "pi",
		filepath.Join(home, ".omp", "agent", "sessions", "o.jsonl"): "omp",
	}
	if len(got) != len(want) {
		t.Errorf("found %v, want %v", got, want)
	}
	for p, l := range want {
		if got[p] != l {
			t.Errorf("%s: label %q, want %q", p, got[p], l)
		}
	}
	if !slices.Equal(notes, []string{CodeNotASessionFile + " history.jsonl"}) {
		t.Errorf("path issues %v, want history.jsonl not_a_session_file", notes)
	}
	for i := range rts {
		rts[i].Labels = []string{SourceOmp}
	}
	got = map[string]string{}
	notes = nil
	if err := Discover(context.Background(), rts, func(f File) error { got[f.Path] = f.Source; return nil },
		func(p PathIssue) { notes = append(notes, p.Issue.Code) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[filepath.Join(home, ".omp", "agent", "sessions", "o.jsonl")] != SourceOmp || len(notes) != 0 {
		t.Errorf("--source omp: files %v, issues %v", got, notes)
	}
	for path, want := range map[string]string{
		"/h/.omp/agent/sessions/x.jsonl":             "omp",
		"/h/.openclaw/agents/main/sessions/x.jsonl":  "openclaw",
		"/h/.config/kimchi/harness/sessions/x.jsonl": "kimchi",
		"/h/kimchi/other/x.jsonl":                    "custom",
		"/h/.pi/agent/sessions/.omp-not/x.jsonl":     "pi",
	} {
		if got := SourceOf(path); got != want {
			t.Errorf("SourceOf(%s) = %s, want %s", path, got, want)
		}
	}
}
