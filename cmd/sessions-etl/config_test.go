package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFile: the config file's stores are read with no PATH (label =
// name, selected_by config), its defaults apply when the flag is not
// given, unknown keys are named and ignored, a store path that is missing
// is said on stderr, and a file that does not parse is a usage error
// naming the file and line.
func TestConfigFile(t *testing.T) {
	caseDir, err := filepath.Abs(filepath.Join(reportCases, "c26-moved-stores"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	home := t.TempDir()
	cfgHome := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": cfgHome}
	cfg := filepath.Join(cfgHome, "sessions-etl", "config.toml")
	write := func(s string) {
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[defaults]
tz = "Asia/Tokyo"
colour = "always"

[[stores]]
name = "work"
path = "` + filepath.Join(caseDir, "elsewhere", "pi-sessions") + `"
source = "pi"

[[stores]]
name = "gone"
path = "/nonexistent/sessions-etl-test"

[budgets]
daily = 5
`)
	code, out, errOut := runEnvCLI(t, home, env, "sources", "--json")
	if code != ExitOK {
		t.Fatalf("sources: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, cfg+": unknown key defaults.colour (ignored)") {
		t.Errorf("sources: the unknown key is not named:\n%s", errOut)
	}
	var work, gone sourceRow
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r sourceRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		switch r.Label {
		case "work":
			work = r
		case "gone":
			gone = r
		}
	}
	if work.SelectedBy != "config" || work.Config != cfg || work.Kind != "pi" || !work.Exists || work.Files != 1 || work.Bytes != 782 {
		t.Errorf("work row %+v", work)
	}
	if gone.SelectedBy != "config" || gone.Exists || gone.Files != 0 {
		t.Errorf("gone row %+v", gone)
	}

	code, out, errOut = runEnvCLI(t, home, env, "report", "daily", "--json", "--source", "work")
	if code != ExitOK {
		t.Fatalf("report --source work: exit %d\n%s", code, errOut)
	}
	if got := reportJSONTotals(t, out); !sameTotals(got, caseTotals{Records: 1, Input: 500, Output: 50, Cost: 0.00225}) {
		t.Errorf("report --source work: %+v", got)
	}
	if !strings.Contains(errOut, `store "gone" of `+cfg+" names no directory") {
		t.Errorf("report: the missing config store is not named:\n%s", errOut)
	}
	var r struct {
		Report struct {
			Timezone string `json:"timezone"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Report.Timezone != "Asia/Tokyo" {
		t.Errorf("report timezone %q (%v), want the config's Asia/Tokyo", r.Report.Timezone, err)
	}
	code, out, _ = runEnvCLI(t, home, env, "report", "daily", "--json", "--tz", "UTC", "--source", "work")
	if err := json.Unmarshal([]byte(out), &r); code != ExitOK || err != nil || r.Report.Timezone != "UTC" {
		t.Errorf("--tz UTC over the config: exit %d, timezone %q", code, r.Report.Timezone)
	}
	if code, _, errOut := runEnvCLI(t, home, env, "validate", "--source", "nosuch"); code != ExitUsage || !strings.Contains(errOut, "work, gone") {
		t.Errorf("--source nosuch: exit %d, want 2 listing the config labels:\n%s", code, errOut)
	}

	write("[defaults]\ntz = \"UTC\"\n\n[[stores]\nname = \"x\"\n")
	for _, args := range [][]string{{"sources"}, {"validate"}, {"report", "daily"}} {
		code, _, errOut := runEnvCLI(t, home, env, args...)
		if code != ExitUsage || !strings.Contains(errOut, "config "+cfg+":4: ") {
			t.Errorf("%v with invalid TOML: exit %d, want 2 naming %s:4:\n%s", args, code, cfg, errOut)
		}
	}
}
