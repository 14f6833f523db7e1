package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const reportCases = "../../testdata/cases"

// runReportCLI runs sessions-etl in-process with home as the user's home.
func runReportCLI(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Now: time.Now, Home: home}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

type reportTotals struct {
	Totals struct {
		InputTokens     int64    `json:"inputTokens"`
		TotalCost       *float64 `json:"totalCost"`
		Records         int64    `json:"records"`
		UnpricedRecords int64    `json:"unpricedRecords"`
		CostIncomplete  bool     `json:"costIncomplete"`
	} `json:"totals"`
	Daily []struct {
		Date string `json:"date"`
	} `json:"daily"`
}

func decodeReport(t *testing.T, out string) reportTotals {
	t.Helper()
	var r reportTotals
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return r
}

// TestReportZeroSetup: with no flags the report ingests the default roots
// into the cache directory's database and answers; the next run reads no
// unchanged file (a file rewritten with the same size and mtime keeps its
// old numbers) but does read a changed one; PATH arguments use a database
// of their own.
func TestReportZeroSetup(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	src := filepath.Join(reportCases, "c07-early-v4-and-fork-counted-once", "home", ".pi")
	if err := os.CopyFS(filepath.Join(home, ".pi"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReportCLI(t, home, "report", "daily", "--json", "--tz", "UTC")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	r := decodeReport(t, out)
	if r.Totals.Records != 2 || r.Totals.InputTokens != 1400 || r.Totals.TotalCost == nil || *r.Totals.TotalCost != 0.024 {
		t.Errorf("totals %+v, want c07's 2 records, 1400 input, $0.024", r.Totals)
	}
	if len(r.Daily) != 2 || r.Daily[0].Date != "2025-05-01" || r.Daily[1].Date != "2025-05-02" {
		t.Errorf("days %+v", r.Daily)
	}
	if errOut != "" {
		t.Errorf("stderr under --json: %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(cache, "sessions-etl", "sessions.duckdb")); err != nil {
		t.Errorf("default database: %v", err)
	}

	// The fork's own record, 400 input tokens, becomes 900: same size, same
	// mtime, same inode. An incremental run does not read the file again.
	fork := filepath.Join(home, ".pi/agent/sessions/--home-dev-proj--/2025-05-02T08-00-00-000Z_7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02.jsonl")
	fi, err := os.Stat(fork)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fork)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"input":400,`, `"input":900,`, 1)
	if edited == string(raw) {
		t.Fatal("fixture changed: no input 400 in the fork")
	}
	f, err := os.OpenFile(fork, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(edited), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(fork, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runReportCLI(t, home, "report", "daily", "--tz", "UTC")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"2025-05-01", "2025-05-02", "Total", "1,400", "$0.0240"} {
		if !strings.Contains(out, want) {
			t.Errorf("warm table lacks %q (the unchanged file was read again?):\n%s", want, out)
		}
	}
	// A new mtime: the file is read again.
	if err := os.Chtimes(fork, fi.ModTime().Add(time.Second), fi.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runReportCLI(t, home, "report", "daily", "--json", "--tz", "UTC")
	if r := decodeReport(t, out); code != ExitOK || r.Totals.InputTokens != 1900 {
		t.Errorf("after the change: exit %d, totals %+v, want 1900 input", code, r.Totals)
	}

	// A PATH: its own database.
	dir := filepath.Join(reportCases, "c13-prime-child-usage")
	code, out, errOut = runReportCLI(t, home, "report", "model", "--md", dir)
	if code != ExitOK || !strings.Contains(out, "| anthropic | claude-sonnet-4-5 | 3 |") {
		t.Errorf("exit %d, stderr %q, out:\n%s", code, errOut, out)
	}
	dbs, _ := filepath.Glob(filepath.Join(cache, "sessions-etl", "sessions-*.duckdb"))
	if len(dbs) != 1 {
		t.Fatalf("databases for PATH reports: %v, want one", dbs)
	}
	// Not the default database: stderr says which and how to query it.
	if want := "Report database for " + dir + ": " + dbs[0] + "\nQuery it: sessions-etl query 'SELECT * FROM daily_usage' " + dir + "\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	for _, quiet := range []string{"--quiet", "--json"} {
		if _, _, errOut := runReportCLI(t, home, "report", "model", quiet, dir); errOut != "" {
			t.Errorf("stderr under %s: %q", quiet, errOut)
		}
	}
	code, out, _ = runReportCLI(t, home, "report", "daily", "--json", "--tz", "UTC")
	if r := decodeReport(t, out); code != ExitOK || r.Totals.InputTokens != 1900 {
		t.Errorf("default report after a PATH report: exit %d, totals %+v, want its own 1900 input", code, r.Totals)
	}
}

// TestReportFlags: an explicit database, --no-refresh, --pricing, and the
// usage errors (exit 2).
func TestReportFlags(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	db := filepath.Join(t.TempDir(), "mine.duckdb")
	c05 := filepath.Join(reportCases, "c05-v1-linear-with-compaction-index")

	code, out, errOut := runReportCLI(t, home, "report", "session", "--db", db, "--no-refresh", "--json", c05)
	if code != ExitFailed || !strings.Contains(errOut, db) {
		t.Errorf("--no-refresh on a missing database: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runReportCLI(t, home, "report", "session", "--db", db, "--json", "--cost", "recorded", c05)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if r := decodeReport(t, out); r.Totals.TotalCost == nil || *r.Totals.TotalCost != 0 || r.Totals.UnpricedRecords != 2 || !r.Totals.CostIncomplete {
		t.Errorf("recorded cost of v1 usage: %+v, want cost 0 (a number, never null), costIncomplete and 2 unpriced records", r.Totals)
	}
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"source": "mine", "retrieved": "2026-01-01", "unit": "USD per million tokens",
		"models": [{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 1000000, "output": 0}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runReportCLI(t, home, "report", "daily", "--db", db, "--no-refresh", "--json", "--pricing", prices, "--since", "20250102", "--until", "2025-01-02", c05)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if r := decodeReport(t, out); r.Totals.TotalCost == nil || *r.Totals.TotalCost != 130 || r.Totals.Records != 2 {
		t.Errorf("with --pricing: %+v, want $130 (120 input and 10 cache-read tokens at $1 each: cache reads default to the input price)", r.Totals)
	}

	for _, args := range [][]string{
		{"report"},
		{"report", "hourly"},
		{"report", "daily", "--json", "--csv", c05},
		{"report", "daily", "--since", "2025-13-01", c05},
		{"report", "daily", "--since", "2025-02-01", "--until", "2025-01-31", c05},
		{"report", "daily", "--tz", "Mars/Olympus_Mons", c05},
		{"report", "daily", "--cost", "guess", c05},
		{"report", "daily", "--source", "claude", c05},
		{"report", "daily", "--pricing", filepath.Join(t.TempDir(), "missing.json"), c05},
	} {
		if code, _, errOut := runReportCLI(t, home, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, ExitUsage, errOut)
		}
	}
}

// TestReportRejectedFiles: a report over files it cannot use still exits
// 0 (SPEC.md §7.6: reports are readers), covers the others and says so in
// one stderr line, under --quiet too, on unchanged re-runs too; --strict
// exits 1.
func TestReportRejectedFiles(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dirs := []string{filepath.Join(reportCases, "c03-future-version"), filepath.Join(reportCases, "c13-prime-child-usage")}
	const line = "1 file not used (1 future_version) — see: sessions-etl validate\n"
	for _, flags := range [][]string{{}, {"--quiet"}, {"--quiet"}} {
		code, out, errOut := runReportCLI(t, t.TempDir(), append(append([]string{"report", "provider"}, flags...), dirs...)...)
		if code != ExitOK || !strings.Contains(out, "anthropic") || !strings.HasPrefix(errOut, line) {
			t.Errorf("%v: exit %d, stderr %q, out:\n%s", flags, code, errOut, out)
		}
		if len(flags) > 0 && errOut != line {
			t.Errorf("%v: stderr %q, want only %q", flags, errOut, line)
		}
	}
	code, out, errOut := runReportCLI(t, t.TempDir(), append([]string{"report", "provider", "--strict"}, dirs...)...)
	if code != ExitFailed || !strings.Contains(out, "anthropic") || !strings.HasPrefix(errOut, line) {
		t.Errorf("--strict: exit %d, want 1; stderr %q, out:\n%s", code, errOut, out)
	}
}

// TestReportC22 is case c22 through the command: exit 0, the one stderr
// line of the case (under --json and --quiet too), files.salvaged in the
// JSON, exit 1 with --strict.
func TestReportC22(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dir, err := filepath.Abs(filepath.Join(reportCases, "c22-damaged-files-used"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	type file struct {
		Path   string   `json:"path"`
		Status string   `json:"status"`
		Codes  []string `json:"codes"`
		Lines  []int    `json:"lines"`
	}
	var exp struct {
		R struct {
			Exit       int    `json:"exit"`
			ExitStrict int    `json:"exit_with_strict"`
			Rejected   []file `json:"files.rejected"`
			Salvaged   []file `json:"files.salvaged"`
			StderrLine string `json:"stderr_line"`
		} `json:"report_json"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, flags := range [][]string{{"--json"}, {"--quiet"}, {}} {
		code, out, errOut := runReportCLI(t, home, append([]string{"report", "daily", "--tz", "UTC", dir}, flags...)...)
		if code != exp.R.Exit {
			t.Errorf("%v: exit %d, want %d", flags, code, exp.R.Exit)
		}
		if !strings.HasPrefix(errOut, exp.R.StderrLine+"\n") || (len(flags) > 0 && errOut != exp.R.StderrLine+"\n") {
			t.Errorf("%v: stderr %q, want the line %q", flags, errOut, exp.R.StderrLine)
		}
		if len(flags) == 0 || flags[0] != "--json" {
			continue
		}
		var got struct {
			Files struct {
				Rejected []file `json:"rejected"`
				Salvaged []file `json:"salvaged"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		for i := range got.Files.Salvaged {
			rel, err := filepath.Rel(dir, got.Files.Salvaged[i].Path)
			if err != nil {
				t.Fatal(err)
			}
			got.Files.Salvaged[i].Path = rel
		}
		sortFiles := func(fs []file) { sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path }) }
		sortFiles(got.Files.Salvaged)
		sortFiles(exp.R.Salvaged)
		if d := cmp.Diff(exp.R.Salvaged, got.Files.Salvaged); d != "" {
			t.Errorf("files.salvaged (-want +got):\n%s", d)
		}
		if got.Files.Rejected == nil || len(got.Files.Rejected) != len(exp.R.Rejected) {
			t.Errorf("files.rejected %v, want %v", got.Files.Rejected, exp.R.Rejected)
		}
	}
	if code, _, _ := runReportCLI(t, home, "report", "daily", "--strict", "--quiet", dir); code != exp.R.ExitStrict {
		t.Errorf("--strict: exit %d, want %d", code, exp.R.ExitStrict)
	}
}

// TestReportTZ: a TZ Go cannot load is a usage error naming TZ (not days
// silently in UTC under a header saying TZ); --tz overrides it; a loadable
// TZ buckets days in that zone, and the JSON names it by its IANA name.
func TestReportTZ(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	// Records at 23:59:20 UTC on 2026-07-02 and just after midnight UTC.
	dir := filepath.Join("..", "..", "testdata", "export", "views", "home")
	for _, tz := range []string{"EST5EDT,M3.2.0,M11.1.0", "Mars/Phobos"} {
		t.Setenv("TZ", tz)
		code, out, errOut := runReportCLI(t, t.TempDir(), "report", "daily", dir)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, `TZ="`+tz+`"`) || !strings.Contains(errOut, "--tz Area/City") {
			t.Errorf("TZ=%s: exit %d, stdout %q, stderr %q; want exit 2 naming TZ and suggesting --tz", tz, code, out, errOut)
		}
		code, out, errOut = runReportCLI(t, t.TempDir(), "report", "daily", "--json", "--tz", "Asia/Tokyo", dir)
		if code != ExitOK {
			t.Errorf("TZ=%s --tz Asia/Tokyo: exit %d, %s", tz, code, errOut)
		}
	}
	t.Setenv("TZ", "Asia/Tokyo")
	code, out, errOut := runReportCLI(t, t.TempDir(), "report", "daily", "--json", dir)
	if code != ExitOK {
		t.Fatalf("TZ=Asia/Tokyo: exit %d, %s", code, errOut)
	}
	var r struct {
		Daily []struct {
			Date string `json:"date"`
		} `json:"daily"`
		Report struct {
			Timezone *string `json:"timezone"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Daily) != 1 || r.Daily[0].Date != "2026-07-03" || r.Report.Timezone == nil || *r.Report.Timezone != "Asia/Tokyo" {
		t.Errorf("TZ=Asia/Tokyo: days %+v, timezone %v; want 2026-07-03 only, Asia/Tokyo", r.Daily, r.Report.Timezone)
	}
	// No TZ: the local zone, by its IANA name in JSON; the header may say (local).
	if err := os.Unsetenv("TZ"); err != nil {
		t.Fatal(err)
	}
	_, out, _ = runReportCLI(t, t.TempDir(), "report", "daily", "--json", dir)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if tz := r.Report.Timezone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil || strings.Contains(*tz, "(") {
			t.Errorf("local zone's JSON timezone %q is not an IANA name", *tz)
		}
	}
}

// TestReportJSONHelp: report's --json is described as one JSON document;
// the global --json of the other commands stays JSON Lines.
func TestReportJSONHelp(t *testing.T) {
	for _, args := range [][]string{{"report", "--help"}, {"report", "daily", "--help"}} {
		_, out, _ := runReportCLI(t, t.TempDir(), args...)
		if !strings.Contains(out, "one JSON document on stdout, in ccusage's shape (not JSON Lines)") || strings.Contains(out, "(JSON Lines) on stdout") {
			t.Errorf("%v: --json not described as one document:\n%s", args, out)
		}
	}
	if _, out, _ := runReportCLI(t, t.TempDir(), "validate", "--help"); !strings.Contains(out, "machine-readable output (JSON Lines) on stdout") {
		t.Errorf("validate --help lost the global --json description:\n%s", out)
	}
}

// TestReportNoSessionFiles: a report that found no session file says where
// it looked (stderr), besides "No usage found".
func TestReportNoSessionFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	os.MkdirAll(filepath.Join(home, ".prime", "agent", "sessions"), 0o700)
	dir := filepath.Join(home, "empty")
	os.MkdirAll(dir, 0o700)
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"report", "daily"}, "No session files found (looked in: ~/.pi/agent/sessions (missing), ~/.pi/agent/*.jsonl (missing), ~/.atomic/agent/sessions (missing), ~/.prime/agent/sessions, ~/.omp/agent/sessions (missing), ~/.openclaw/agents/*/sessions (missing), ~/.config/kimchi/harness/sessions (missing))."},
		{[]string{"report", "monthly", dir}, "No session files found (looked in: " + dir + ")."},
		{[]string{"report", "daily", "--json"}, ""},
	} {
		code, out, errOut := runReportCLI(t, home, tc.args...)
		if code != ExitOK {
			t.Errorf("%v: exit %d\n%s%s", tc.args, code, out, errOut)
		}
		if tc.stderr == "" {
			if strings.Contains(errOut, "No session files") {
				t.Errorf("%v: stderr %q", tc.args, errOut)
			}
			continue
		}
		if !strings.Contains(out, "No usage found") || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%v:\nstdout %s\nstderr %s\nwant on stderr %q", tc.args, out, errOut, tc.stderr)
		}
	}
}
