package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryOutputFormats: dates print as dates, float sums without binary
// noise (table and CSV; JSON keeps every digit), NULL visibly in the table.
func TestQueryOutputFormats(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.duckdb")
	if code, _, stderr := runCLI(t, t.TempDir(), "export", "--duckdb", db, exportCases+"/c13-prime-child-usage"); code != ExitOK {
		t.Fatalf("export: %d %s", code, stderr)
	}
	const q = `SELECT DATE '2025-08-19' AS d, 0.1::DOUBLE + 0.2::DOUBLE AS f, 0.0000045::DOUBLE AS small, NULL AS n,
		TIMESTAMP '2025-08-19 10:01:02.5' AS ts`
	code, stdout, stderr := runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", q)
	if want := "d,f,small,n,ts\n2025-08-19,0.3,0.0000045,,2025-08-19 10:01:02.5\n"; code != ExitOK || stdout != want {
		t.Errorf("--csv: exit %d, %q (stderr %q), want %q", code, stdout, stderr, want)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, q)
	if fields := strings.Fields(strings.Split(stdout, "\n")[1]); code != ExitOK || strings.Join(fields, " ") != "2025-08-19 0.3 0.0000045 NULL 2025-08-19 10:01:02.5" {
		t.Errorf("table: exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--json", q)
	var row map[string]any
	if err := json.Unmarshal([]byte(stdout), &row); code != ExitOK || err != nil {
		t.Fatalf("--json: exit %d, %v: %s", code, err, stdout)
	}
	a, b := 0.1, 0.2 // not constants: float64 arithmetic, as DuckDB's
	if row["d"] != "2025-08-19" || row["f"] != a+b || row["n"] != nil || row["ts"] != "2025-08-19T10:01:02.5Z" {
		t.Errorf("--json row %v", row)
	}
	// daily_usage.day is a DATE.
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", "SELECT day, typeof(day) AS type FROM daily_usage")
	if want := "day,type\n2025-08-01,DATE\n"; code != ExitOK || stdout != want {
		t.Errorf("daily_usage.day: exit %d, %q, want %q", code, stdout, want)
	}
}

func TestFormatFloat(t *testing.T) {
	for x, want := range map[float64]string{
		0.23359430000000003: "0.2335943",
		11.160763949999998:  "11.16076395",
		0:                   "0",
		-2.5:                "-2.5",
		1234567.891:         "1234567.891",
		1e-12:               "1e-12",
		3e20:                "3e+20",
		1.0 / 3:             "0.3333333333",
	} {
		if got := formatFloat(x, 64); got != want {
			t.Errorf("formatFloat(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestQueryOneStatement: several statements are refused (DuckDB would
// run them all and show only the last result); one, with a trailing
// semicolon or comment, is fine; no SQL is a usage error that says what to
// give.
func TestQueryOneStatement(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.duckdb")
	if code, _, stderr := runCLI(t, t.TempDir(), "export", "--duckdb", db, exportCases+"/c13-prime-child-usage"); code != ExitOK {
		t.Fatalf("export: %d %s", code, stderr)
	}
	for _, q := range []string{"select 1; select 2", "select count(*) from usage; select 2;"} {
		code, stdout, stderr := runCLI(t, t.TempDir(), "query", "--duckdb", db, q)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "more than one statement") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and no output", q, code, stdout, stderr)
		}
	}
	for _, q := range []string{"select 'a;b' as x;", "select 'a;b' as x -- done", "select 'a;b' as x; -- done"} {
		code, stdout, stderr := runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", q)
		if code != ExitOK || stdout != "x\na;b\n" {
			t.Errorf("%q: exit %d, %q, %q", q, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"query"}, {"query", "  "}} {
		code, _, stderr := runCLI(t, t.TempDir(), args...)
		if code != ExitUsage || !strings.Contains(stderr, "query needs one SQL statement") || !strings.Contains(stderr, "daily_usage") ||
			strings.Contains(stderr, "accepts 1 arg") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, t.TempDir(), "query", "--duckdb", db, "select 1", exportCases); code != ExitUsage {
		t.Errorf("--duckdb and a PATH: exit %d, stderr %q; want 2", code, stderr)
	}
}

// TestQueryFindsReportDatabase: the user journey of a report over a PATH
// and a query: query with the same PATH reads the report's database;
// without it, the missing default database is explained with the report
// databases that exist, their paths and the command for each.
func TestQueryFindsReportDatabase(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	home := t.TempDir()
	dir, err := filepath.Abs(exportCases + "/c13-prime-child-usage")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, home, "query", "select 1")
	if code != ExitFailed || !strings.Contains(stderr, filepath.Join(cache, "sessions-etl", "sessions.duckdb")) ||
		!strings.Contains(stderr, "sessions-etl report daily") || strings.Contains(stderr, "Report databases") {
		t.Errorf("no database at all: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, home, "report", "daily", "--tz", "UTC", dir); code != ExitOK {
		t.Fatalf("report: exit %d, %s", code, stderr)
	}
	dbs, _ := filepath.Glob(filepath.Join(cache, "sessions-etl", "sessions-*.duckdb"))
	if len(dbs) != 1 {
		t.Fatalf("report databases %v", dbs)
	}
	code, stdout, stderr = runCLI(t, home, "query", "select 1")
	want := fmt.Sprintf("Report databases in %s:\n  %s  (%s): sessions-etl query 'SQL' %s", filepath.Join(cache, "sessions-etl"),
		filepath.Base(dbs[0]), dir, dir)
	if code != ExitFailed || !strings.Contains(stderr, want) || strings.Contains(stderr, "export --duckdb "+filepath.Join(cache, "sessions-etl", "sessions.duckdb")) {
		t.Errorf("default database missing: exit %d, stderr %q, want it to hold %q", code, stderr, want)
	}
	code, stdout, stderr = runCLI(t, home, "query", "--csv", "select sum(input) as input from counted_usage", dir)
	if code != ExitOK || stdout != "input\n3500\n" {
		t.Errorf("query with the report's PATH: exit %d, %q, %q", code, stdout, stderr)
	}
	rel, err := filepath.Rel(mustGetwd(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ = runCLI(t, home, "query", "--csv", "select count(*) as n from usage", rel); code != ExitOK || stdout != "n\n3\n" {
		t.Errorf("query with the PATH spelt relatively: exit %d, %q", code, stdout)
	}
	other := exportCases + "/c14-atomic-v4-billed-usage-kinds"
	code, _, stderr = runCLI(t, home, "query", "select 1", other)
	if code != ExitFailed || !strings.Contains(stderr, "no report database for "+other) || !strings.Contains(stderr, "sessions-etl report daily "+other) ||
		!strings.Contains(stderr, filepath.Base(dbs[0])) {
		t.Errorf("a PATH without a report: exit %d, stderr %q", code, stderr)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestExportSummaryOutput: a first export shows rows only (no "updated"
// counts that are only the first derivation); an incremental one shows
// added, removed and re-derived rows with what re-derived means; rejected
// files are named, the first few, with their status, and the query that
// lists them all.
func TestExportSummaryOutput(t *testing.T) {
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, "c07"), os.DirFS(exportCases+"/c07-early-v4-and-fork-counted-once/home")); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		writeTestFile(t, filepath.Join(home, "bad", fmt.Sprintf("future-%d.jsonl", i)), `{"type":"session","version":9,"id":"x"}`+"\n")
	}
	db := filepath.Join(t.TempDir(), "x.duckdb")
	code, stdout, _ := runCLI(t, t.TempDir(), "export", "--duckdb", db, home)
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	for _, bad := range []string{"updated", "re-derived", "added"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("first export shows %q:\n%s", bad, stdout)
		}
	}
	for _, want := range []string{
		"7 files were not exported",
		"  future_version       " + filepath.Join(home, "bad", "future-0.jsonl") + ": line 1: future_version (",
		filepath.Join(home, "bad", "future-4.jsonl"),
		"  … and 2 more.\n",
		"All of them: sessions-etl query --duckdb " + db + " 'SELECT * FROM rejected_files'\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "future-5.jsonl") {
		t.Errorf("summary lists more than the first %d rejected files:\n%s", 5, stdout)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", "SELECT count(*) AS n FROM rejected_files")
	if code != ExitOK || stdout != "n\n7\n" {
		t.Errorf("rejected_files: exit %d, %q", code, stdout)
	}
	// The fork changes: it is read again, its copy re-derived.
	fork := filepath.Join(home, "c07/.pi/agent/sessions/--home-dev-proj--/2025-05-02T08-00-00-000Z_7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02.jsonl")
	f, err := os.OpenFile(fork, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"label","id":"c0000009","parentId":"c0000004","timestamp":"2025-05-02T09:00:00.000Z","targetId":"c0000004","label":"x"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "export", "--duckdb", db, home)
	if code != ExitFailed || !strings.Contains(stdout, "re-derived") || !strings.Contains(stdout, "re-derived: rows, new or old") {
		t.Errorf("incremental export: exit %d:\n%s", code, stdout)
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
