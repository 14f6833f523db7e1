package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// TestC30SessionReport: usage and model_usage entries are in the session
// report's records and costs (their sessions' totals include them, as pi's
// own session totals do).
func TestC30SessionReport(t *testing.T) {
	dir := filepath.Join(casesDir, "c30-usage-entries")
	r := runOnDB(t, Session, filepath.Join(t.TempDir(), "r.duckdb"), []string{dir}, nil)
	want := map[string]struct {
		records int64
		cost    float64
	}{
		"30a0c001-4e5f-4a6b-8c7d-30a000000001": {3, 0.016812},
		"30a0c002-4e5f-4a6b-8c7d-30a000000002": {2, 0.0111},
	}
	if len(r.Rows) != len(want) {
		t.Fatalf("%d session rows, want %d", len(r.Rows), len(want))
	}
	for _, row := range r.Rows {
		w, ok := want[row.Key]
		if !ok {
			t.Errorf("unexpected session %q", row.Key)
			continue
		}
		if row.Records != w.records || relDiff(row.Cost, w.cost) > 1e-9 || !row.Complete() {
			t.Errorf("session %s: %d records $%v (complete %v), want %d records $%v", row.Key, row.Records, row.Cost, row.Complete(), w.records, w.cost)
		}
	}
}

// toolLine is one tools-report row, as c21's expected.json gives it.
func toolLine(r ToolRow) string {
	rate := 0.0
	if r.Results > 0 {
		rate = float64(r.Errors) / float64(r.Results)
	}
	return fmt.Sprintf("%s calls %d results %d errors %d rate %.2f bytes %d", r.Tool, r.Calls, r.Results, r.Errors, rate, r.OutputBytes)
}

// toolResultsOf runs the tools report over paths on the report's own
// (usage-mode) database and on a full export's, and checks both give the
// same rows.
func toolResultsOf(t *testing.T, paths []string) []string {
	t.Helper()
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "export.duckdb")
	if _, err := export.Run(context.Background(), export.Options{Roots: roots, Workers: 2, DuckDBPath: full}); err != nil {
		t.Fatal(err)
	}
	var out [2][]string
	for i, db := range []string{filepath.Join(t.TempDir(), "r.duckdb"), full} {
		r := runOnDB(t, Tools, db, paths, func(o *Options) { o.Managed = i == 0 })
		for _, row := range r.ToolRows {
			out[i] = append(out[i], toolLine(row))
		}
		out[i] = append(out[i], "total "+toolLine(r.ToolTotals))
	}
	if d := cmp.Diff(out[0], out[1]); d != "" {
		t.Errorf("tools report: usage-mode database and full export differ (-usage +full):\n%s", d)
	}
	return out[0]
}

// TestC21EmptyToolResults: a toolResult whose content is [] is a result,
// and its isError counts (report tools --json of the case).
func TestC21EmptyToolResults(t *testing.T) {
	got := toolResultsOf(t, []string{filepath.Join(casesDir, "c21-empty-tool-result")})
	want := []string{
		"bash calls 2 results 2 errors 1 rate 0.50 bytes 0",
		"read calls 1 results 1 errors 0 rate 0.00 bytes 11",
		"write calls 1 results 1 errors 0 rate 0.00 bytes 0",
		"total  calls 4 results 4 errors 1 rate 0.25 bytes 11",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

// TestToolResultContentShapes: results with content [], no content, a
// string, null and an array of non-objects are all results; isError is
// kept for each.
func TestToolResultContentShapes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"shape-1","timestamp":"2025-10-20T09:00:00.000Z","cwd":"/w"}` + "\n")
	shapes := []string{`"content":[],`, ``, `"content":"four",`, `"content":null,`, `"content":[1,"x"],`}
	prev := "null"
	for i, shape := range shapes {
		call, res := fmt.Sprintf("a%07d", 2*i), fmt.Sprintf("r%07d", 2*i)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2025-10-20T09:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"t%d","arguments":{}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1}}}`+"\n",
			call, prev, 2*i, i, i)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2025-10-20T09:00:%02d.000Z","message":{"role":"toolResult",%s"toolCallId":"c%d","toolName":"t%d","isError":%v}}`+"\n",
			res, call, 2*i+1, shape, i, i, i%2 == 0)
		prev = fmt.Sprintf("%q", res)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := toolResultsOf(t, []string{dir})
	want := []string{
		"t0 calls 1 results 1 errors 1 rate 1.00 bytes 0",
		"t1 calls 1 results 1 errors 0 rate 0.00 bytes 0",
		"t2 calls 1 results 1 errors 1 rate 1.00 bytes 4",
		"t3 calls 1 results 1 errors 0 rate 0.00 bytes 0",
		"t4 calls 1 results 1 errors 1 rate 1.00 bytes 0",
		"total  calls 5 results 5 errors 3 rate 0.60 bytes 4",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

// TestC29ProjectLabels: colliding last elements get the shortest suffix
// that tells the cwds apart, Windows cwds split on both separators, and
// --project takes a label, a path-element suffix or a full cwd (c29).
func TestC29ProjectLabels(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	dir := filepath.Join(casesDir, "c29-project-labels")
	db := filepath.Join(t.TempDir(), "r.duckdb")
	r := runOnDB(t, Project, db, []string{dir}, nil)
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s|%s|%d|%d|%d|%d|%.6f", row.Key, row.Cwd, row.Sessions, row.Records, row.Input, row.Output, row.Cost))
	}
	sort.Strings(got)
	want := []string{
		"api/src|/home/dev/api/src|1|1|1500|200|0.007500",
		"tool2|C:\\Users\\dev\\tool2|1|1|800|40|0.003000",
		"tool|/home/dev/tool|1|1|500|50|0.002250",
		"web/src|/home/dev/web/src|2|2|3000|200|0.012000",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("projects (-want +got):\n%s", d)
	}
	if r.Totals.Records != 5 || r.Totals.Input != 5800 || r.Totals.Output != 490 || relDiff(r.Totals.Cost, 0.02475) > 1e-9 {
		t.Errorf("totals %+v, want 5 records 5800/490 $0.02475", r.Totals)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"cwd": "C:\\Users\\dev\\tool2"`) {
		t.Errorf("project JSON has no cwd:\n%s", js.String())
	}
	filters := []struct {
		arg     string
		records int64
		cost    float64
	}{
		{"src", 3, 0.0195},
		{"web/src", 2, 0.012},
		{"api/src", 1, 0.0075},
		{"/home/dev/api/src", 1, 0.0075},
		{"/home/dev/api/src/", 1, 0.0075},
		{"tool", 1, 0.00225},
		{"tool2", 1, 0.003},
		{`C:\Users\dev\tool2`, 1, 0.003},
		{"C:/Users/dev/tool2", 1, 0.003},
		{"dev/tool2", 1, 0.003},
		{"ool2", 0, 0},
	}
	for _, f := range filters {
		fr := runOnDB(t, Project, db, []string{dir}, func(o *Options) { o.Project = f.arg })
		if fr.Totals.Records != f.records || relDiff(fr.Totals.Cost, f.cost) > 1e-9 {
			t.Errorf("--project %q: %d records $%v, want %d $%v", f.arg, fr.Totals.Records, fr.Totals.Cost, f.records, f.cost)
		}
	}
	// Labels are computed over every session, not the filtered ones.
	fr := runOnDB(t, Project, db, []string{dir}, func(o *Options) { o.Project = "api/src" })
	if len(fr.Rows) != 1 || fr.Rows[0].Key != "api/src" {
		t.Errorf("--project api/src rows %+v, want the one row api/src", fr.Rows)
	}
}

// TestC27ModelReport: records routed by openrouter/auto are grouped by the
// model that served them, and 1-hour cache writes priced at their rate, in
// the report's database (auto and calculate) and when the report prices in
// Go with a --pricing table of its own.
func TestC27ModelReport(t *testing.T) {
	dir := filepath.Join(casesDir, "c27-cache-write-and-served-model")
	db := filepath.Join(t.TempDir(), "r.duckdb")
	r := runOnDB(t, Model, db, []string{dir}, nil)
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s / %s|%d|%d|%d|%d|%d|%.6f", row.Provider, row.ModelKey.Model, row.Records, row.Input,
			row.Output, row.CacheRead, row.CacheWrite, row.Cost))
	}
	sort.Strings(got)
	want := []string{
		"anthropic / claude-haiku-4-5|4|1700|370|6000|6800|0.016025",
		"openrouter / anthropic/claude-haiku-4.5|1|2000|300|0|0|0.003500",
		"openrouter / openai/gpt-4o-mini|1|10000|1000|2000|0|0.002400",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		mode  export.CostMode
		total float64
	}{{export.CostAuto, 0.021925}, {export.CostCalculate, 0.021775}} {
		for _, own := range []bool{false, true} {
			r := runOnDB(t, Daily, db, []string{dir}, func(o *Options) {
				o.CostMode = c.mode
				if own { // another table than the database's: priced in Go
					p, err := pricing.Parse(bundledWithNote(t))
					if err != nil {
						t.Fatal(err)
					}
					o.Prices, o.PricingID = p, "test-copy"
				}
			})
			if r.Totals.Records != 6 || r.Totals.Unpriced.Records != 0 || relDiff(r.Totals.Cost, c.total) > 1e-9 {
				t.Errorf("%s (own table %v): %d records, %d unpriced, $%v; want 6, 0, $%v", c.mode, own, r.Totals.Records,
					r.Totals.Unpriced.Records, r.Totals.Cost, c.total)
			}
		}
	}
}

// bundledWithNote is the bundled price table with other notes: the same
// prices from a table the database was not priced with.
func bundledWithNote(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../pricing/prices.json")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(raw, []byte(`"notes": "`), []byte(`"notes": "copy for a test. `), 1)
}

// TestC24SessionSubagents: the session report shows each subagent under
// its parent, and the parent's usage with and without its subagents
// (table and JSON); the grand total counts every call once (SPEC.md §7.3).
func TestC24SessionSubagents(t *testing.T) {
	dir := filepath.Join(casesDir, "c24-subagent-rollup")
	r := runOnDB(t, Session, filepath.Join(t.TempDir(), "r.duckdb"), []string{dir}, nil)
	line := func(u Usage) string {
		return fmt.Sprintf("%d|%d|%d|%d|%.6f", u.Records, u.Input, u.Output, u.CacheRead, u.Cost)
	}
	var got []string
	for _, row := range r.Rows {
		s := fmt.Sprintf("%d %s own %s", row.Depth, row.Key, line(row.Usage))
		if row.WithSubagents != nil {
			s += fmt.Sprintf(" subagents %v with %s", row.Subagents, line(*row.WithSubagents))
		}
		got = append(got, s)
	}
	want := []string{
		"0 24a0c001-4e5f-4a6b-8c7d-24a000000001 own 2|2500|180|0|0.010200 subagents [24a0c0c1-4e5f-4a6b-8c7d-24a0000000c1] with 4|8000|530|1000|0.017550",
		"1 24a0c0c1-4e5f-4a6b-8c7d-24a0000000c1 own 2|5500|350|1000|0.007350",
		"0 24a0c002-4e5f-4a6b-8c7d-24a000000002 own 3|5700|400|0|0.012100",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("session rows (-want +got):\n%s", d)
	}
	if r.Totals.Records != 7 || relDiff(r.Totals.Cost, 0.02965) > 1e-9 {
		t.Errorf("totals %d records $%v, want 7 $0.02965", r.Totals.Records, r.Totals.Cost)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sessions []struct {
			SessionID       string   `json:"sessionId"`
			ParentSessionID *string  `json:"parentSessionId"`
			Records         int64    `json:"records"`
			TotalCost       *float64 `json:"totalCost"`
			Subagents       []string `json:"subagents"`
			WithSubagents   *struct {
				Records   int64    `json:"records"`
				Input     int64    `json:"inputTokens"`
				TotalCost *float64 `json:"totalCost"`
			} `json:"withSubagents"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Sessions[0]
	if p.WithSubagents == nil || p.WithSubagents.Records != 4 || p.WithSubagents.Input != 8000 ||
		relDiff(*p.WithSubagents.TotalCost, 0.01755) > 1e-9 || len(p.Subagents) != 1 {
		t.Errorf("parent JSON %+v", p)
	}
	if c := doc.Sessions[1]; c.ParentSessionID == nil || *c.ParentSessionID != p.SessionID || c.WithSubagents != nil {
		t.Errorf("child JSON %+v, want parentSessionId %s", c, p.SessionID)
	}
	var table bytes.Buffer
	if err := r.WriteText(&table, Table, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"↳ 24a0c0c1-4e5f-4a6b-8c7d-24a0000000c1", "= with 1 subagent(s)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}
