package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runEnvCLI runs sessions-etl in-process with home as the home directory
// and env as the whole environment the store discovery sees (SPEC.md §7.1
// variables and XDG_CONFIG_HOME; a name not in env is unset).
func runEnvCLI(t *testing.T, home string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Now: time.Now, Home: home,
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

type caseTotals struct {
	Records int64   `json:"records"`
	Input   int64   `json:"input"`
	Output  int64   `json:"output"`
	Cost    float64 `json:"cost"`
}

// reportJSONTotals reads the totals of `report … --json`.
func reportJSONTotals(t *testing.T, out string) caseTotals {
	t.Helper()
	var r struct {
		Totals struct {
			Records int64    `json:"records"`
			Input   int64    `json:"inputTokens"`
			Output  int64    `json:"outputTokens"`
			Cost    *float64 `json:"totalCost"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	got := caseTotals{Records: r.Totals.Records, Input: r.Totals.Input, Output: r.Totals.Output}
	if r.Totals.Cost != nil {
		got.Cost = *r.Totals.Cost
	}
	return got
}

func sameTotals(a, b caseTotals) bool {
	return a.Records == b.Records && a.Input == b.Input && a.Output == b.Output && math.Abs(a.Cost-b.Cost) < 1e-9
}

// TestCaseMovedStores is case c26: a HOME with pi moved by
// PI_CODING_AGENT_DIR / PI_CODING_AGENT_SESSION_DIR, an omp, an OpenClaw and
// a kimchi store. For each environment of expected.json, with no PATH:
// `sources --json` gives the expected rows, `report daily --json` the
// expected totals (and per --source label), validate reads exactly the
// files it should, and a variable naming a missing directory is said on
// stderr, exit 0.
func TestCaseMovedStores(t *testing.T) {
	caseDir, err := filepath.Abs(filepath.Join(reportCases, "c26-moved-stores"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Validate map[string]struct {
			Status string `json:"status"`
		} `json:"validate"`
		Envs []struct {
			Env     map[string]string `json:"env"`
			Sources []struct {
				Label      string `json:"label"`
				Root       string `json:"root"`
				SelectedBy string `json:"selected_by"`
				Variable   string `json:"variable"`
				Exists     bool   `json:"exists"`
				Files      int    `json:"files"`
				Bytes      int64  `json:"bytes"`
			} `json:"sources"`
			ReportTotals caseTotals            `json:"report_totals"`
			PerLabel     map[string]caseTotals `json:"per_label"`
			NotRead      []string              `json:"not_read"`
			Reported     string                `json:"reported"`
		} `json:"envs"`
		Usage struct {
			Records int64   `json:"counted_records"`
			Input   int64   `json:"input"`
			Output  int64   `json:"output"`
			Cost    float64 `json:"cost_total"`
		} `json:"usage"`
	}
	raw, err := os.ReadFile(filepath.Join(caseDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Envs) != 4 {
		t.Fatalf("expected.json: %d environments, want 4", len(want.Envs))
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	for i, e := range want.Envs {
		t.Run(strings.Join(slices.Sorted(maps.Keys(e.Env)), "+"), func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
			home := strings.ReplaceAll(e.Env["HOME"], "$CASE", caseDir)
			subst := func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "$CASE", caseDir), "$HOME", home)
			}
			env := map[string]string{}
			for k, v := range e.Env {
				if k != "HOME" {
					env[k] = subst(v)
				}
			}

			rows, out := sourcesJSON(t, home, env)
			if len(rows) != len(e.Sources) {
				t.Errorf("sources: %d rows, want %d:\n%s", len(rows), len(e.Sources), out)
			}
			for _, ws := range e.Sources {
				root := subst(ws.Root)
				i := slices.IndexFunc(rows, func(r sourceRow) bool { return r.Label == ws.Label && r.Root == root })
				if i < 0 {
					t.Errorf("sources: no row %s %s:\n%s", ws.Label, root, out)
					continue
				}
				r := rows[i]
				if r.SelectedBy != ws.SelectedBy || r.Variable != ws.Variable || r.Exists != ws.Exists || r.Files != ws.Files || r.Bytes != ws.Bytes {
					t.Errorf("sources row %s %s: selected_by %s variable %q exists %v files %d bytes %d; want %s %q %v %d %d",
						ws.Label, root, r.SelectedBy, r.Variable, r.Exists, r.Files, r.Bytes, ws.SelectedBy, ws.Variable, ws.Exists, ws.Files, ws.Bytes)
				}
			}

			code, out, errOut := runEnvCLI(t, home, env, "report", "daily", "--json", "--tz", "UTC")
			if code != ExitOK {
				t.Fatalf("report: exit %d\n%s", code, errOut)
			}
			if got := reportJSONTotals(t, out); !sameTotals(got, e.ReportTotals) {
				t.Errorf("report totals %+v, want %+v", got, e.ReportTotals)
			}
			if e.Reported != "" {
				v := "PI_CODING_AGENT_DIR=" + env["PI_CODING_AGENT_DIR"]
				if !strings.Contains(errOut, v) || !strings.Contains(errOut, "names no directory") {
					t.Errorf("report: stderr does not say %s names no directory:\n%s", v, errOut)
				}
			} else if errOut != "" {
				t.Errorf("report: unexpected stderr:\n%s", errOut)
			}
			for label, wt := range e.PerLabel {
				code, out, errOut = runEnvCLI(t, home, env, "report", "daily", "--json", "--tz", "UTC", "--source", label)
				if code != ExitOK {
					t.Fatalf("report --source %s: exit %d\n%s", label, code, errOut)
				}
				if got := reportJSONTotals(t, out); !sameTotals(got, wt) {
					t.Errorf("report --source %s: %+v, want %+v", label, got, wt)
				}
			}

			code, out, errOut = runEnvCLI(t, home, env, "validate", "--json")
			if code != ExitOK {
				t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
			}
			read := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var v jsonFileVerdict
				if err := json.Unmarshal([]byte(line), &v); err == nil && v.Path != "" {
					rel, _ := filepath.Rel(caseDir, v.Path)
					read[rel] = v.Status
				}
			}
			for rel, wv := range want.Validate {
				switch {
				case slices.Contains(e.NotRead, rel):
					if _, ok := read[rel]; ok {
						t.Errorf("validate read %s, which this environment does not reach", rel)
					}
				case read[rel] != wv.Status:
					t.Errorf("validate %s: %q, want %q (read: %v)", rel, read[rel], wv.Status, read)
				}
			}
			if i == 0 {
				// Nothing of the pi store: the message names each place looked in.
				_, out, _ = runEnvCLI(t, home, env, "validate", "--source", "pi")
				if !strings.Contains(out, "No session files found (looked in: ~/.pi/agent/sessions (missing), ~/.pi/agent/*.jsonl (missing)") {
					t.Errorf("validate --source pi: want the looked-in message:\n%s", out)
				}
			}
		})
	}

	// The case directory as PATH: all five files.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	code, out, errOut := runEnvCLI(t, t.TempDir(), nil, "report", "daily", "--json", "--tz", "UTC", caseDir)
	if code != ExitOK {
		t.Fatalf("report PATH: exit %d\n%s", code, errOut)
	}
	wu := caseTotals{Records: want.Usage.Records, Input: want.Usage.Input, Output: want.Usage.Output, Cost: want.Usage.Cost}
	if got := reportJSONTotals(t, out); !sameTotals(got, wu) {
		t.Errorf("report PATH totals %+v, want %+v", got, wu)
	}
}

// sourcesJSON runs `sources --json` with env in home and returns its rows
// (one JSON object per line) and its raw output.
func sourcesJSON(t *testing.T, home string, env map[string]string) ([]sourceRow, string) {
	t.Helper()
	code, out, errOut := runEnvCLI(t, home, env, "sources", "--json")
	if code != ExitOK {
		t.Fatalf("sources: exit %d\n%s", code, errOut)
	}
	var rows []sourceRow
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r sourceRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("sources --json line %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows, out
}
