package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden (then read the files before committing)")

// runTerminal runs sessions-etl in-process as if stdout and stderr were a
// terminal of width columns, with env as the environment.
func runTerminal(t *testing.T, width int, env map[string]string, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Now: func() time.Time { return now }, Home: t.TempDir(),
		OutIsTerminal: width > 0, OutWidth: width, Getenv: func(k string) string { return env[k] }}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

func TestUseColor(t *testing.T) {
	for _, c := range []struct {
		mode     string
		env      map[string]string
		terminal bool
		want     bool
	}{
		{"auto", nil, true, true},
		{"auto", nil, false, false},
		{"auto", map[string]string{"NO_COLOR": "1"}, true, false},
		{"auto", map[string]string{"NO_COLOR": ""}, true, true},
		{"auto", map[string]string{"FORCE_COLOR": "1"}, false, true},
		{"auto", map[string]string{"FORCE_COLOR": "0"}, false, false},
		{"auto", map[string]string{"NO_COLOR": "1", "FORCE_COLOR": "1"}, true, false},
		{"auto", map[string]string{"TERM": "dumb"}, true, false},
		{"always", map[string]string{"NO_COLOR": "1"}, false, true},
		{"never", map[string]string{"FORCE_COLOR": "1"}, true, false},
	} {
		got, err := useColor(c.mode, func(k string) string { return c.env[k] }, c.terminal)
		if err != nil || got != c.want {
			t.Errorf("useColor(%s, %v, terminal %v) = %v, %v; want %v", c.mode, c.env, c.terminal, got, err, c.want)
		}
	}
	if _, err := useColor("sometimes", os.Getenv, true); err == nil {
		t.Error("--color sometimes: no error")
	}
}

// TestReportColor: on a terminal the table is coloured (golden file:
// fatih/color's escapes for the title, column titles, rules, totals and
// unpriced costs) and the problem lines on stderr are yellow; NO_COLOR,
// --color never and a pipe give plain text; --color always colours a
// pipe. The coloured golden file was checked with `cat -v`.
func TestReportColor(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dirs := []string{filepath.Join(reportCases, "c14-atomic-v4-billed-usage-kinds"), filepath.Join(reportCases, "c03-future-version")}
	base := append([]string{"report", "daily", "--tz", "UTC"}, dirs...)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	code, out, errOut := runTerminal(t, 200, nil, now, base...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join("testdata", "golden", "report-daily-color.txt")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), out); d != "" {
		t.Errorf("coloured table (-want +got):\n%s", d)
	}
	if !strings.Contains(out, "\x1b[1m") || !strings.Contains(out, "\x1b[33m") {
		t.Errorf("no bold or yellow in the coloured table:\n%q", out)
	}
	for _, c := range []struct {
		name  string
		width int
		env   map[string]string
		flags []string
		color bool
	}{
		{"NO_COLOR", 200, map[string]string{"NO_COLOR": "1"}, nil, false},
		{"--color never", 200, nil, []string{"--color", "never"}, false},
		{"piped", 0, nil, nil, false},
		{"piped, --color always", 0, nil, []string{"--color", "always"}, true},
		{"piped, FORCE_COLOR", 0, map[string]string{"FORCE_COLOR": "1"}, nil, true},
	} {
		_, out, _ := runTerminal(t, c.width, c.env, now, append(append([]string{}, base...), c.flags...)...)
		if got := strings.Contains(out, "\x1b["); got != c.color {
			t.Errorf("%s: colour %v, want %v:\n%s", c.name, got, c.color, out)
		}
	}
	// Stderr's problem lines follow stderr's own terminal-ness, which
	// runTerminal does not set: plain here, yellow with --color always.
	_, _, errOut = runTerminal(t, 0, nil, now, append(append([]string{}, base...), "--color", "always")...)
	if !strings.Contains(errOut, "\x1b[33m1 file not used (1 future_version)") {
		t.Errorf("--color always: stderr line not yellow: %q", errOut)
	}
	if code, _, _ := runTerminal(t, 0, nil, now, append(append([]string{}, base...), "--color", "sometimes")...); code != ExitUsage {
		t.Errorf("--color sometimes: exit %d, want 2", code)
	}
}

// TestReportPeriodsAndOrder: --last and a relative --since count back
// from today in --tz; --order desc reverses the days; the two period
// flags exclude each other.
func TestReportPeriodsAndOrder(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dirs := []string{filepath.Join(reportCases, "c13-prime-child-usage"), filepath.Join(reportCases, "c05-v1-linear-with-compaction-index"),
		filepath.Join(reportCases, "c07-early-v4-and-fork-counted-once", "home")}
	days := func(now time.Time, flags ...string) []string {
		t.Helper()
		code, out, errOut := runTerminal(t, 0, nil, now, append(append([]string{"report", "daily", "--json", "--tz", "UTC"}, flags...), dirs...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", flags, code, errOut)
		}
		var r struct {
			Daily []struct {
				Date string `json:"date"`
			} `json:"daily"`
			Report struct {
				Since *string `json:"since"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var ds []string
		for _, d := range r.Daily {
			ds = append(ds, d.Date)
		}
		return ds
	}
	all := days(time.Now())
	if len(all) < 3 {
		t.Fatalf("days %v: want at least 3", all)
	}
	last := all[len(all)-1]
	lastDay, err := time.Parse(time.DateOnly, last)
	if err != nil {
		t.Fatal(err)
	}
	now := lastDay.Add(12 * time.Hour) // noon of the newest day with usage
	if got := days(now, "--last", "1d"); strings.Join(got, ",") != last {
		t.Errorf("--last 1d: %v, want [%s]", got, last)
	}
	if got := days(now, "--since", "0d"); strings.Join(got, ",") != last {
		t.Errorf("--since 0d: %v, want [%s]", got, last)
	}
	var within []string
	for _, d := range all {
		if day, _ := time.Parse(time.DateOnly, d); !day.Before(lastDay.AddDate(0, 0, -400)) {
			within = append(within, d)
		}
	}
	if got := days(now, "--since", "400d"); strings.Join(got, ",") != strings.Join(within, ",") {
		t.Errorf("--since 400d: %v, want %v", got, within)
	}
	desc := days(now, "--order", "desc")
	for i := range all {
		if desc[i] != all[len(all)-1-i] {
			t.Fatalf("--order desc: %v, want %v reversed", desc, all)
		}
	}
	for _, flags := range [][]string{{"--last", "7d", "--since", "2025-01-01"}, {"--last", "7y"}, {"--since", "soon"}, {"--order", "up"}} {
		if code, _, _ := runTerminal(t, 0, nil, now, append(append([]string{"report", "daily"}, flags...), dirs...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", flags, code)
		}
	}
}

// TestReportCompactCLI: --compact fits 80 columns, and so does any
// table on a terminal of 80 columns.
func TestReportCompactCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dir := filepath.Join(reportCases, "c14-atomic-v4-billed-usage-kinds")
	for _, c := range []struct {
		width int
		flags []string
	}{{0, []string{"--compact"}}, {200, []string{"--compact"}}, {80, nil}, {72, nil}} {
		for _, kind := range []string{"daily", "session", "model", "project"} {
			_, out, _ := runTerminal(t, c.width, map[string]string{"NO_COLOR": "1"}, time.Now(),
				append([]string{"report", kind, "--tz", "UTC", dir}, c.flags...)...)
			limit := 80
			if c.width > 0 && c.width < 80 {
				limit = c.width
			}
			for _, l := range strings.Split(out, "\n") {
				if n := len([]rune(l)); n > limit {
					t.Errorf("report %s %v at width %d: a line of %d columns: %q", kind, c.flags, c.width, n, l)
				}
			}
		}
	}
}
