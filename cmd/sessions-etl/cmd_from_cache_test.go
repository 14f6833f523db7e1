package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReportFromCache: report --from answers from a cache of the root's
// tables, re-priced with the report's price table: the first (cold) and
// the second (warm) answer are the report over the union of the session
// files, with the bundled table and with --pricing, in the auto and
// calculate cost modes; a machine re-exported with more files is seen.
func TestReportFromCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c05 := filepath.Join(reportCases, "c05-v1-linear-with-compaction-index")
	c07, c13 := exportCases+"/c07-early-v4-and-fork-counted-once/home", exportCases+"/c13-prime-child-usage"
	root := t.TempDir()
	export := func(m string, homes ...string) {
		t.Helper()
		args := append([]string{"export", "--parquet", root, "--partition-by", "month", "--machine", m, "--work-dir", filepath.Join(root+"-work", m)}, homes...)
		if code, stdout, stderr := runCLI(t, t.TempDir(), args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"source": "mine", "retrieved": "2026-01-01", "unit": "USD per million tokens",
		"models": [{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 1000000, "output": 3000000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(step string, homes ...string) {
		t.Helper()
		for _, v := range [][]string{nil, {"--cost", "calculate"}, {"--pricing", prices, "--cost", "calculate"}, {"--pricing", prices}} {
			for _, kind := range []string{"daily", "session"} {
				args := append([]string{"report", kind, "--json", "--tz", "Europe/Paris"}, v...)
				code, want, stderr := runCLI(t, t.TempDir(), append(append(args, "--db", filepath.Join(t.TempDir(), "r.duckdb")), homes...)...)
				if code != ExitOK {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				for _, run := range []string{"cold", "warm"} {
					code, got, stderr := runCLI(t, t.TempDir(), append(args, "--from", root)...)
					if code != ExitOK {
						t.Fatalf("%s %v --from (%s): exit %d: %s", step, args, run, code, stderr)
					}
					w := want
					if kind == "session" {
						got, w = jsonTotals(t, got), jsonTotals(t, want) // session paths differ
					}
					if got != w {
						t.Errorf("%s %v --from (%s):\n%s\nwant (the session files' report):\n%s", step, args, run, got, w)
					}
				}
			}
		}
	}
	export("a", c07)
	export("b", c07, c13)
	check("a, b", c07, c13)
	caches, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "sessions-etl", "from-*.duckdb"))
	if len(caches) != 2 {
		t.Errorf("caches %v; want two (one per price table)", caches)
	}
	export("a", c07, c05)
	check("a re-exported", c07, c13, c05)
}

// jsonTotals is the "totals" object of a JSON report.
func jsonTotals(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		Totals json.RawMessage `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Totals) == 0 {
		t.Fatalf("no totals (%v):\n%s", err, out)
	}
	return string(r.Totals)
}
