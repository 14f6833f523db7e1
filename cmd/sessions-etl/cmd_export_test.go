package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const exportCases = "../../testdata/cases"

func TestExportThenQuery(t *testing.T) {
	out := t.TempDir()
	db := filepath.Join(out, "sessions.duckdb")
	pq := filepath.Join(out, "parquet")
	code, stdout, stderr := runCLI(t, t.TempDir(), "export", "--duckdb", db, "--parquet", pq,
		exportCases+"/c07-early-v4-and-fork-counted-once/home", exportCases+"/c13-prime-child-usage")
	if code != ExitOK {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Exported 3 files", "usage", "entries", "6 datasets written"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("stderr not empty off a terminal: %q", stderr)
	}
	code, stdout, stderr = runCLI(t, t.TempDir(), "query", "--duckdb", db, "select count(*) from entries")
	if code != ExitOK || strings.TrimSpace(stdout) != "count_star()\n11" {
		t.Errorf("query exit %d, output %q, stderr %q; want 11 entries", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv",
		"select session_id, sum(input) as input from counted_usage group by 1 order by 1")
	want := "session_id,input\n0b9d7c11-5e6f-4a8b-9c0d-1e2f3a4b5c03,3500\n5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01,1000\n7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02,400\n"
	if code != ExitOK || stdout != want {
		t.Errorf("--csv exit %d:\n%s\nwant\n%s", code, stdout, want)
	}
	code, stdout, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--json",
		"select kind, counted, cost_total, timestamp from usage where entry_id = 'f0000003'")
	var row map[string]any
	if err := json.Unmarshal([]byte(stdout), &row); code != ExitOK || err != nil {
		t.Fatalf("--json exit %d: %v\n%s", code, err, stdout)
	}
	if row["kind"] != "child_usage" || row["counted"] != true || row["cost_total"] != 0.003 || row["timestamp"] != "2025-08-01T10:01:00Z" {
		t.Errorf("--json row %v", row)
	}
	if !strings.HasPrefix(stdout, `{"kind":`) {
		t.Errorf("--json keys not in column order: %s", stdout)
	}

	// An unchanged re-run reads nothing and rewrites nothing.
	code, stdout, _ = runCLI(t, t.TempDir(), "export", "--json", "--duckdb", db, "--parquet", pq,
		exportCases+"/c07-early-v4-and-fork-counted-once/home", exportCases+"/c13-prime-child-usage")
	var sum struct {
		Summary struct {
			Read, Unchanged int
			Changed         bool
			ParquetTables   []string `json:"parquet_tables"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sum); code != ExitOK || err != nil {
		t.Fatalf("re-run exit %d: %v\n%s", code, err, stdout)
	}
	if sum.Summary.Read != 0 || sum.Summary.Unchanged != 3 || sum.Summary.Changed || len(sum.Summary.ParquetTables) != 0 {
		t.Errorf("re-run summary %+v", sum.Summary)
	}
}

func TestExportUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"export", exportCases + "/c02-final-record-without-newline"},
		{"export", "--duckdb", filepath.Join(t.TempDir(), "x.duckdb"), "--cost", "cheap", exportCases},
		{"query", "--csv", "--json", "select 1"},
		{"query"},
	} {
		code, _, stderr := runCLI(t, t.TempDir(), args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

func TestExportRejectedFilesExit1(t *testing.T) {
	out := t.TempDir()
	code, stdout, _ := runCLI(t, t.TempDir(), "export", "--duckdb", filepath.Join(out, "x.duckdb"), exportCases+"/c03-future-version")
	if code != ExitFailed || !strings.Contains(stdout, "1 files were not exported") {
		t.Errorf("exit %d, want 1 for a future-version file:\n%s", code, stdout)
	}
}

func TestQueryErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.duckdb")
	code, _, stderr := runCLI(t, t.TempDir(), "query", "--duckdb", missing, "select 1")
	if code != ExitFailed || !strings.Contains(stderr, missing) {
		t.Errorf("missing database: exit %d, stderr %q", code, stderr)
	}
	out := t.TempDir()
	db := filepath.Join(out, "x.duckdb")
	if code, _, stderr := runCLI(t, t.TempDir(), "export", "--duckdb", db, exportCases+"/c02-final-record-without-newline"); code != ExitOK {
		t.Fatalf("export: %d %s", code, stderr)
	}
	code, _, stderr = runCLI(t, t.TempDir(), "query", "--duckdb", db, "select * from no_such_table")
	if code != ExitFailed || !strings.Contains(stderr, "no_such_table") {
		t.Errorf("bad SQL: exit %d, stderr %q", code, stderr)
	}
	// The database is opened read-only: a query cannot change it.
	code, _, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "delete from usage")
	if code != ExitFailed {
		t.Errorf("delete through query: exit %d, want 1", code)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() == 0 {
		t.Errorf("database damaged: %v", err)
	}
}

// TestQueryOnReportDatabase: the database report keeps (usage mode) answers
// queries on its tables and views; a query on a table it does not keep
// says what is missing and what to do; an export into it makes it a full
// export (every file read again, said so), after which the query works.
func TestQueryOnReportDatabase(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	if err := os.CopyFS(filepath.Join(home, ".pi"), os.DirFS(filepath.Join(exportCases, "c07-early-v4-and-fork-counted-once", "home", ".pi"))); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, home, "report", "daily", "--json"); code != ExitOK {
		t.Fatalf("report exit %d: %s%s", code, out, errOut)
	}
	code, stdout, stderr := runCLI(t, home, "query", "--csv", "select sum(input) as input from counted_usage")
	if code != ExitOK || stdout != "input\n1400\n" {
		t.Errorf("query on the report database: exit %d, %q, %q", code, stdout, stderr)
	}
	// A daily report makes the database without tool rows: a query of
	// them is refused and says how to fill them, which works.
	code, stdout, stderr = runCLI(t, home, "query", "--csv", "select count(*) as n from tool_calls")
	if code != ExitFailed || stdout != "" || !strings.Contains(stderr, "tool_uses (and tool_calls) are empty") ||
		!strings.Contains(stderr, "run 'sessions-etl report tools' once") {
		t.Errorf("tool_calls on the report database of a daily report: exit %d, %q, %q", code, stdout, stderr)
	}
	if code, out, errOut := runCLI(t, home, "report", "tools", "--json"); code != ExitOK {
		t.Fatalf("report tools exit %d: %s%s", code, out, errOut)
	}
	code, stdout, stderr = runCLI(t, home, "query", "--csv", "select count(*) as n from tool_calls")
	if code != ExitOK || stdout != "n\n0\n" {
		t.Errorf("tool_calls on the report database after report tools: exit %d, %q, %q", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, home, "query", "select count(*) from entries")
	if code != ExitFailed || !strings.Contains(stderr, "made by 'sessions-etl report'") ||
		!strings.Contains(stderr, "entries and content_blocks are not in it") || !strings.Contains(stderr, "sessions-etl export --duckdb FILE") {
		t.Errorf("entries on the report database: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, home, "query", "select * from no_such_table")
	if code != ExitFailed || !strings.Contains(stderr, "made by 'sessions-etl report'") {
		t.Errorf("unknown table on the report database: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, home, "query", "select nonsense(1)")
	if code != ExitFailed || strings.Contains(stderr, "made by 'sessions-etl report'") {
		t.Errorf("an error that is not a missing table: exit %d, stderr %q", code, stderr)
	}

	db := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "sessions-etl", "sessions.duckdb")
	code, stdout, stderr = runCLI(t, home, "export", "--duckdb", db)
	if code != ExitOK || !strings.Contains(stdout, "Every file was read: the database held only the tables of 'sessions-etl report'") {
		t.Errorf("export into the report database: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, home, "query", "--csv", "select count(*) as n from entries")
	if code != ExitOK || stdout != "n\n6\n" {
		t.Errorf("entries after the export: exit %d, %q, %q", code, stdout, stderr)
	}
}
