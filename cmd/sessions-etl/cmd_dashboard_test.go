package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDashboardCLI: dashboard writes the page (exit 0), needs --out, and
// says where it wrote and the total.
func TestDashboardCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(reportCases, "c07-early-v4-and-fork-counted-once")
	now := time.Date(2025, 5, 2, 9, 0, 0, 0, time.UTC)
	out := filepath.Join(t.TempDir(), "d.html")
	code, _, errOut := runAt(t, now, "", "dashboard", "--tz", "UTC", "--out", out, dir)
	if code != ExitOK || !strings.Contains(errOut, "Wrote "+out+" (total $0.0240)") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `id="total-cost">$0.0240</p>`) || strings.Count(string(raw), `<svg class="chart"`) != 5 {
		// c07 has no tool calls: five charts and the tools section says so.
		t.Errorf("page: %d charts", strings.Count(string(raw), `<svg class="chart"`))
	}
	// The page is published whole by one rename: mode 0644, nothing else
	// left beside it.
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("page mode: %v %v, want 0644", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("%d entries beside the page, want only the page", len(ents))
	}
	// A rewrite over an existing page that cannot be written (its
	// directory is gone) fails with exit 1 and names the file.
	gone := filepath.Join(t.TempDir(), "no", "d.html")
	if code, _, errOut := runAt(t, now, "", "dashboard", "--tz", "UTC", "--out", gone, dir); code == ExitOK || !strings.Contains(errOut, gone) {
		t.Errorf("unwritable --out: exit %d, stderr %q", code, errOut)
	}
	for _, bad := range [][]string{{"dashboard", dir}, {"dashboard", "--out", out, "--top", "0", dir}, {"dashboard", "--out", out, "--since", "May", dir}} {
		if code, _, errOut := runAt(t, now, "", bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, errOut)
		}
	}
}

// TestCompletion: the new commands complete their fixed flag values.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "report", "blocks", "--token-limit", ""}, "max"},
		{[]string{"__complete", "budget", "check", "--cost", ""}, "recorded"},
		{[]string{"__complete", "statusline", "--source", ""}, "atomic"},
		{[]string{"__complete", "dashboard", "--tz", ""}, "Europe/Paris"},
		{[]string{"__complete", "budget", ""}, "check\tCompare today"},
	} {
		code, out, _ := runAt(t, time.Now(), "", c.args...)
		if code != ExitOK || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, out %q, want %s", c.args, code, out, c.want)
		}
	}
}
