package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// TestExportSharedRoot: two machines export into one partitioned root;
// bad --partition-by use is a usage error.
func TestExportSharedRoot(t *testing.T) {
	root, work := t.TempDir(), t.TempDir()
	for m, home := range map[string]string{"a": exportCases + "/c07-early-v4-and-fork-counted-once/home", "b": exportCases + "/c13-prime-child-usage"} {
		code, stdout, stderr := runCLI(t, t.TempDir(), "export", "--parquet", root, "--partition-by", "month", "--machine", m,
			"--work-dir", filepath.Join(work, m), home)
		if code != ExitOK {
			t.Fatalf("export %s exit %d\n%s\n%s", m, code, stdout, stderr)
		}
	}
	for _, p := range []string{"usage/machine=a", "usage/machine=b", "sessions/machine=a", "views.sql"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if parts, _ := filepath.Glob(filepath.Join(root, "usage", "machine=a", "month=*", "part-*.parquet")); len(parts) == 0 {
		t.Error("no usage/machine=a/month=*/part-*.parquet")
	}
	for _, args := range [][]string{
		{"export", "--parquet", root, "--partition-by", "week", exportCases + "/c13-prime-child-usage"},
		{"export", "--duckdb", filepath.Join(work, "x.duckdb"), "--partition-by", "month", exportCases + "/c13-prime-child-usage"},
		{"export", "--parquet", root, "--partition-by", "month", "--machine", "../x", exportCases + "/c13-prime-child-usage"},
	} {
		if code, _, stderr := runCLI(t, t.TempDir(), args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s); want %d", args, code, stderr, ExitUsage)
		}
	}
}

// TestReportFrom: two machines hold the same home (a synced copy) and one
// more store; `report --from ROOT` counts each record once, as a report
// over the union of the session files does, whether the machines share a
// root or each has its own.
func TestReportFrom(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the --from cache
	c07, c13 := exportCases+"/c07-early-v4-and-fork-counted-once/home", exportCases+"/c13-prime-child-usage"
	shared, rootA, rootB := t.TempDir(), t.TempDir(), t.TempDir()
	for _, e := range []struct {
		root, m string
		homes   []string
	}{{shared, "a", []string{c07}}, {shared, "b", []string{c07, c13}}, {rootA, "a", []string{c07}}, {rootB, "b", []string{c07, c13}}} {
		args := append([]string{"export", "--parquet", e.root, "--partition-by", "day", "--machine", e.m, "--work-dir", t.TempDir()}, e.homes...)
		if code, stdout, stderr := runCLI(t, t.TempDir(), args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
	for _, kind := range []string{"daily", "model", "session"} {
		code, want, stderr := runCLI(t, t.TempDir(), "report", kind, "--json", "--tz", "Europe/Paris", "--db", filepath.Join(t.TempDir(), "r.duckdb"), c07, c13)
		if code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", kind, code, stderr)
		}
		for _, from := range [][]string{{"--from", shared}, {"--from", rootA, "--from", rootB}} {
			code, got, stderr := runCLI(t, t.TempDir(), append([]string{"report", kind, "--json", "--tz", "Europe/Paris"}, from...)...)
			if code != ExitOK {
				t.Fatalf("report %s %v: exit %d: %s", kind, from, code, stderr)
			}
			if kind == "session" {
				continue // session paths differ: totals below
			}
			if got != want {
				t.Errorf("report %s %v:\n%s\nwant (the session files' report):\n%s", kind, from, got, want)
			}
		}
	}
	code, _, _ := runCLI(t, t.TempDir(), "report", "daily", "--from", shared, c07)
	if code != ExitUsage {
		t.Errorf("--from with a PATH: exit %d; want %d", code, ExitUsage)
	}
}

// TestQueryFrom: query --from reads a shared root's tables, usage.counted
// across machines.
func TestQueryFrom(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the --from cache
	c07 := exportCases + "/c07-early-v4-and-fork-counted-once/home"
	root := t.TempDir()
	for _, m := range []string{"a", "b"} {
		if code, stdout, stderr := runCLI(t, t.TempDir(), "export", "--parquet", root, "--partition-by", "month", "--machine", m, "--work-dir", t.TempDir(), c07); code != ExitOK {
			t.Fatalf("export %s: exit %d\n%s\n%s", m, code, stdout, stderr)
		}
	}
	db := filepath.Join(t.TempDir(), "one.duckdb")
	if code, _, stderr := runCLI(t, t.TempDir(), "export", "--duckdb", db, c07); code != ExitOK {
		t.Fatal(stderr)
	}
	const q = "SELECT count(*) AS n, sum(input) AS input FROM counted_usage"
	_, want, _ := runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", q)
	code, got, stderr := runCLI(t, t.TempDir(), "query", "--from", root, "--csv", q)
	if code != ExitOK || got != want {
		t.Errorf("query --from: exit %d (%s):\n%s\nwant (one machine's database):\n%s", code, stderr, got, want)
	}
	code, got, _ = runCLI(t, t.TempDir(), "query", "--from", root, "--csv", "SELECT count(DISTINCT machine) AS m FROM usage")
	if code != ExitOK || got != "m\n2\n" {
		t.Errorf("machines in usage: exit %d, %q; want 2", code, got)
	}
}

// TestDashboardFrom: dashboard --from writes the page of a shared root,
// with the total of the union of the machines' session files.
func TestDashboardFrom(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the --from cache
	c07, c13 := exportCases+"/c07-early-v4-and-fork-counted-once/home", exportCases+"/c13-prime-child-usage"
	root := t.TempDir()
	for m, homes := range map[string][]string{"a": {c07}, "b": {c07, c13}} {
		args := append([]string{"export", "--parquet", root, "--partition-by", "month", "--machine", m, "--work-dir", t.TempDir()}, homes...)
		if code, stdout, stderr := runCLI(t, t.TempDir(), args...); code != ExitOK {
			t.Fatalf("export %s: exit %d\n%s\n%s", m, code, stdout, stderr)
		}
	}
	dir := t.TempDir()
	_, _, want := runCLI(t, t.TempDir(), "dashboard", "--tz", "UTC", "--db", filepath.Join(dir, "r.duckdb"), "--out", filepath.Join(dir, "a.html"), c07, c13)
	code, _, got := runCLI(t, t.TempDir(), "dashboard", "--tz", "UTC", "--from", root, "--out", filepath.Join(dir, "b.html"))
	total := func(s string) string {
		if i := strings.Index(s, "(total "); i >= 0 {
			return s[i : i+strings.IndexByte(s[i:], ')')+1]
		}
		return s
	}
	if code != ExitOK || total(got) != total(want) || !strings.Contains(want, "(total ") {
		t.Errorf("dashboard --from: exit %d, %q; want %q", code, total(got), total(want))
	}
}

// TestReportToolsFrom: `report tools --from` counts a tool call once
// across machines, as it counts usage (SPEC.md §4, §7.7): machine a holds
// P (a bash call) and Q (a grep call); machine b holds Q synced and F, a
// fork of P continued on b (P's entries copied verbatim, then a read
// call). By hand: bash 1 call, grep 1, read 1, each with its result; the
// same as `report tools` over the union of the session files.
func TestReportToolsFrom(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the --from cache
	const (
		p = "70000001-0000-4000-8000-000000000001"
		q = "70000002-0000-4000-8000-000000000002"
		f = "70000003-0000-4000-8000-000000000003"
	)
	header := func(id, ts, parent string) string {
		h := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":"/w/tools"`, id, ts)
		if parent != "" {
			h += fmt.Sprintf(`,"parentSession":%q`, parent)
		}
		return h + "}\n"
	}
	call := func(eid, parent, ts, callID, tool string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"toolCall","id":%q,"name":%q,"arguments":{"x":"y"}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.00001}}}}`+"\n",
			eid, parent, ts, callID, tool)
	}
	result := func(eid, parent, ts, callID, tool string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":%q,"message":{"role":"toolResult","toolCallId":%q,"toolName":%q,"content":[{"type":"text","text":"done"}],"isError":false}}`+"\n",
			eid, parent, ts, callID, tool)
	}
	pBody := call("p0000001", "null", "2026-03-01T10:00:01.000Z", "t1", "bash") + result("p0000002", "p0000001", "2026-03-01T10:00:02.000Z", "t1", "bash")
	qBody := header(q, "2026-03-01T11:00:00.000Z", "") + call("q0000001", "null", "2026-03-01T11:00:01.000Z", "t3", "grep") +
		result("q0000002", "q0000001", "2026-03-01T11:00:02.000Z", "t3", "grep")
	a, b := t.TempDir(), t.TempDir()
	dir := ".pi/agent/sessions/--w-tools--"
	pFile := "2026-03-01T10-00-00-000Z_" + p + ".jsonl"
	writeTestFile(t, filepath.Join(a, dir, pFile), header(p, "2026-03-01T10:00:00.000Z", "")+pBody)
	writeTestFile(t, filepath.Join(a, dir, "2026-03-01T11-00-00-000Z_"+q+".jsonl"), qBody)
	writeTestFile(t, filepath.Join(b, dir, "2026-03-01T11-00-00-000Z_"+q+".jsonl"), qBody)
	writeTestFile(t, filepath.Join(b, dir, "2026-03-02T09-00-00-000Z_"+f+".jsonl"),
		header(f, "2026-03-02T09:00:00.000Z", "/home/someone-else/"+dir+"/"+pFile)+pBody+
			call("f0000001", `"p0000002"`, "2026-03-02T09:00:01.000Z", "t2", "read")+result("f0000002", "f0000001", "2026-03-02T09:00:02.000Z", "t2", "read"))

	root := t.TempDir()
	for m, home := range map[string]string{"a": a, "b": b} {
		if code, stdout, stderr := runCLI(t, t.TempDir(), "export", "--parquet", root, "--partition-by", "month", "--machine", m, "--work-dir", t.TempDir(), home); code != ExitOK {
			t.Fatalf("export %s: exit %d\n%s\n%s", m, code, stdout, stderr)
		}
	}
	type tools struct {
		Tools []struct {
			ToolName string `json:"toolName"`
			Calls    int64  `json:"calls"`
			Results  int64  `json:"results"`
		} `json:"tools"`
	}
	summary := func(out string) string {
		var v tools
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var s []string
		for _, x := range v.Tools {
			s = append(s, fmt.Sprintf("%s:%d/%d", x.ToolName, x.Calls, x.Results))
		}
		sort.Strings(s)
		return strings.Join(s, " ")
	}
	const want = "bash:1/1 grep:1/1 read:1/1"
	code, files, stderr := runCLI(t, t.TempDir(), "report", "tools", "--json", "--db", filepath.Join(t.TempDir(), "r.duckdb"), a, b)
	if code != ExitOK {
		t.Fatalf("report tools: exit %d: %s", code, stderr)
	}
	if got := summary(files); got != want {
		t.Errorf("report tools over the session files: %s; want %s", got, want)
	}
	code, from, stderr := runCLI(t, t.TempDir(), "report", "tools", "--json", "--from", root)
	if code != ExitOK {
		t.Fatalf("report tools --from: exit %d: %s", code, stderr)
	}
	if got := summary(from); got != want {
		t.Errorf("report tools --from: %s; want %s", got, want)
	}
}
