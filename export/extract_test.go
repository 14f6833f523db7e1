package export

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exportFiles writes files (relative path → content) under a new home,
// exports it to DuckDB and returns the open database and the home.
func exportFiles(t *testing.T, files map[string]string, tweak func(*Options)) (*sql.DB, string) {
	t.Helper()
	home := t.TempDir()
	for p, c := range files {
		writeFile(t, filepath.Join(home, p), c)
	}
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{home}, tweak)
	return sinks[0].open(t, out), home
}

const hdr3 = `{"type":"session","version":3,"id":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/app/"}`

func TestBadUsageValues(t *testing.T) {
	db, _ := exportFiles(t, map[string]string{"s.jsonl": hdr3 + "\n" +
		`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":-5,"output":"20","cacheRead":1.5,"cacheWrite":null,"totalTokens":"x","cost":{"total":-1,"input":0.5}},"timestamp":1767225601000}}` + "\n"}, nil)
	got := queryStrings(t, db, "SELECT input, output, cache_read, cache_write, total_tokens, recorded_cost_total, recorded_cost_input, cost_source FROM usage")
	// Everything bad counts as 0 / absent; the recorded total is absent, so auto calculates (all tokens 0: $0).
	if d := cmp.Diff([]string{"0|0|0|0|0|∅|0.5|calculated"}, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	got = queryStrings(t, db, "SELECT line_no, severity, code, message FROM ingest_issues WHERE code = 'bad_usage' ORDER BY message")
	want := []string{
		"2|warning|bad_usage|usage.cacheRead is 1.5, not a non-negative integer: counted as 0",
		"2|warning|bad_usage|usage.cost.total is -1, not a non-negative number: ignored",
		"2|warning|bad_usage|usage.input is -5, not a non-negative integer: counted as 0",
		`2|warning|bad_usage|usage.output is "20", not a non-negative integer: counted as 0`,
		`2|warning|bad_usage|usage.totalTokens is "x", not a non-negative integer of at most 2^40: the sum of the counts is used`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("issues (-want +got):\n%s", d)
	}
	var n int
	queryOne(t, db, "SELECT issue_count FROM files", &n)
	if n != 5 {
		t.Errorf("files.issue_count = %d, want 5", n)
	}
}

// TestHugeTokenCounts: counts no record can have (above MaxTokens) are
// bad_usage issues and count as 0, so that no sum overflows (a tester saw
// total_tokens = -2 from two counts of 2^63-1); so are recorded costs above
// MaxRecordCost (10^23 USD made every report fail).
func TestHugeTokenCounts(t *testing.T) {
	db, _ := exportFiles(t, map[string]string{"s.jsonl": hdr3 + "\n" +
		`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":9223372036854775807,"output":9223372036854775807,"cacheRead":1099511627776,"cacheWrite":1099511627777,"totalTokens":9223372036854775807,"cost":{"input":1e23,"output":1000000,"total":1e308}},"timestamp":1767225601000}}` + "\n"}, nil)
	got := queryStrings(t, db, "SELECT input, output, cache_read, cache_write, total_tokens, recorded_cost_input, recorded_cost_output, recorded_cost_total FROM usage")
	if d := cmp.Diff([]string{"0|0|1099511627776|0|1099511627776|∅|1e+06|∅"}, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	got = queryStrings(t, db, "SELECT code, message FROM ingest_issues WHERE code = 'bad_usage' ORDER BY message")
	want := []string{
		"bad_usage|usage.cacheWrite is 1099511627777, more than 1099511627776 tokens in one record: counted as 0",
		"bad_usage|usage.cost.input is 1e23, more than 1e+06 USD for one record: ignored",
		"bad_usage|usage.cost.total is 1e308, more than 1e+06 USD for one record: ignored",
		"bad_usage|usage.input is 9223372036854775807, more than 1099511627776 tokens in one record: counted as 0",
		"bad_usage|usage.output is 9223372036854775807, more than 1099511627776 tokens in one record: counted as 0",
		"bad_usage|usage.totalTokens is 9223372036854775807, not a non-negative integer of at most 2^40: the sum of the counts is used",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("issues (-want +got):\n%s", d)
	}
}

// TestHeaderLineGluedWithBOM: a header that shares its line with a record
// makes the file not_session, and its records are not used, with or
// without a BOM before it (a BOM before an otherwise good header is read
// with the BOM dropped; a tester saw the glued record counted only when a
// BOM was there).
func TestHeaderLineGluedWithBOM(t *testing.T) {
	rec := `{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":40,"output":1}}}`
	good := `{"type":"message","id":"b2","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":7,"output":1}}}`
	db, _ := exportFiles(t, map[string]string{
		"glued.jsonl":     hdr3 + rec + "\n",
		"glued-bom.jsonl": "\ufeff" + hdr3 + rec + "\n",
		"bom.jsonl":       "\ufeff" + strings.Replace(hdr3, "0001", "0002", 1) + "\n" + good + "\n",
	}, nil)
	got := queryStrings(t, db, "SELECT regexp_extract(f.path, '[^/]+$'), f.status, count(u.file_id) FROM files f LEFT JOIN usage u USING (file_id) GROUP BY ALL ORDER BY 1")
	want := []string{"bom.jsonl|not_session|1", "glued-bom.jsonl|not_session|0", "glued.jsonl|not_session|0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

// TestChildUsageTargetModel: a child's usage is folded into its target
// assistant message (seed 003), so it is priced as the target's model, not
// as the nearest preceding assistant's; without the target in the file it
// falls back to the nearest preceding assistant.
func TestChildUsageTargetModel(t *testing.T) {
	db, _ := exportFiles(t, map[string]string{"s.jsonl": hdr3 + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-opus-4-1","usage":{"input":10,"output":1}}}` + "\n" +
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-3-5-haiku","usage":{"input":10,"output":1}}}` + "\n" +
		`{"type":"child_usage_attributed","id":"c1","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","childUsage":{"input":1000000,"output":0}}` + "\n" +
		`{"type":"child_usage_attributed","id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"zz","childUsage":{"input":5,"output":0}}` + "\n"}, nil)
	got := queryStrings(t, db, "SELECT entry_id, kind, model, input, round(cost_total, 6) FROM usage ORDER BY entry_index")
	want := []string{
		"a1|assistant|claude-opus-4-1|10|0.000225",
		"a2|assistant|claude-3-5-haiku|10|1.2e-05",
		"c1|child_usage|claude-opus-4-1|1000000|15",
		"c2|child_usage|claude-3-5-haiku|5|4e-06",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
}

func TestChildUsageMismatch(t *testing.T) {
	db, _ := exportFiles(t, map[string]string{"s.jsonl": hdr3 + "\n" +
		`{"type":"message","id":"p1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10}}}` + "\n" +
		`{"type":"child_usage_attributed","id":"p2","parentId":"p1","timestamp":"2026-01-01T00:00:02.000Z","targetId":"p1","childUsage":{"input":5,"output":1},"aggregateUsage":{"input":105,"output":11}}` + "\n" +
		`{"type":"child_usage_attributed","id":"p3","parentId":"p2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"p1","childUsage":{"input":5,"output":1},"aggregateUsage":{"input":105,"output":11}}` + "\n" +
		`{"type":"child_usage_attributed","id":"p4","parentId":"p3","timestamp":"2026-01-01T00:00:04.000Z","targetId":"zz","childUsage":{"input":1,"output":1}}` + "\n"}, nil)
	got := queryStrings(t, db, "SELECT entry_id, kind, input, counted FROM usage ORDER BY entry_index")
	want := []string{"p1|assistant|100|true", "p2|child_usage|5|true", "p3|child_usage|5|true", "p4|child_usage|1|true"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	got = queryStrings(t, db, "SELECT line_no, code FROM ingest_issues WHERE code = 'child_usage_mismatch'")
	if d := cmp.Diff([]string{"4|child_usage_mismatch"}, got); d != "" {
		t.Errorf("mismatch issues (-want +got):\n%s", d)
	}
}

// TestAttribution: usage without its own model takes the nearest preceding
// assistant's, else the last model_change's, else the v1 header's.
func TestAttribution(t *testing.T) {
	v1 := `{"type":"session","id":"bbbbbbbb-0000-4000-8000-000000000002","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","provider":"openai","modelId":"gpt-5"}` + "\n" +
		`{"type":"compaction","timestamp":"2026-01-01T00:00:01.000Z","summary":"s","firstKeptEntryIndex":1,"usage":{"input":10,"output":1}}` + "\n" +
		`{"type":"model_change","timestamp":"2026-01-01T00:00:02.000Z","provider":"anthropic","modelId":"claude-opus-4-1"}` + "\n" +
		`{"type":"branch_summary","timestamp":"2026-01-01T00:00:03.000Z","fromId":"x","summary":"s","usage":{"input":20,"output":2}}` + "\n" +
		`{"type":"message","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"provider":"google","model":"gemini-2.5-pro","usage":{"input":30,"output":3},"timestamp":1767225604000}}` + "\n" +
		`{"type":"model_change","timestamp":"2026-01-01T00:00:05.000Z","provider":"xai","modelId":"grok-code-fast-1"}` + "\n" +
		`{"type":"message","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":false,"usage":{"input":40,"output":4},"timestamp":1767225606000}}` + "\n"
	none := hdr3 + "\n" + `{"type":"session_summary","id":"s1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","summary":"s","summarizedThroughId":"x","usage":{"input":1,"output":1}}` + "\n"
	db, _ := exportFiles(t, map[string]string{"v1.jsonl": v1, "none.jsonl": none}, nil)
	got := queryStrings(t, db, "SELECT kind, provider, model, entry_id, input FROM usage ORDER BY file_id, entry_index")
	want := []string{
		"session_summary|∅|∅|s1|1",
		"compaction|openai|gpt-5|∅|10",
		"branch_summary|anthropic|claude-opus-4-1|∅|20",
		"assistant|google|gemini-2.5-pro|∅|30",
		"tool_result|google|gemini-2.5-pro|∅|40",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("attribution (-want +got):\n%s", d)
	}
	var unpriced string
	queryOne(t, db, "SELECT cost_source FROM usage WHERE kind = 'session_summary'", &unpriced)
	if unpriced != "unpriced" {
		t.Errorf("usage without any model: cost_source %s, want unpriced", unpriced)
	}
}

// TestActiveBranchAndSessionRow: abandoned branches are off the active
// branch; the session row carries the header, name and counts.
func TestActiveBranchAndSessionRow(t *testing.T) {
	f := `{"type":"session","version":4,"id":"cccccccc-0000-4000-8000-000000000003","createdAt":"2026-02-01T00:00:00.000Z","cwd":"C:\\Users\\dev\\repo","internal":true,"workflow":{"runId":"r","stageId":"s","stageName":"build"}}` + "\n" +
		`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-02-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1769904001000}}` + "\n" +
		`{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-02-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1}}}` + "\n" +
		`{"type":"session_info","id":"m3","parentId":"m2","timestamp":"2026-02-01T00:00:03.000Z","name":"first"}` + "\n" +
		`{"type":"branch_summary","id":"m4","parentId":"m1","timestamp":"2026-02-01T00:00:04.000Z","fromId":"m3","summary":"left"}` + "\n" +
		`{"type":"message","id":"m5","parentId":"m4","timestamp":"2026-02-01T00:00:05.000Z","message":{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1769904005000}}` + "\n" +
		`{"type":"session_info","id":"m6","parentId":"m5","timestamp":"2026-02-01T00:00:06.000Z","name":"second"}` + "\n"
	db, _ := exportFiles(t, map[string]string{"s.jsonl": f}, nil)
	got := queryStrings(t, db, "SELECT entry_id, on_active_branch FROM entries ORDER BY entry_index")
	want := []string{"m1|true", "m2|false", "m3|false", "m4|true", "m5|true", "m6|true"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("active branch (-want +got):\n%s", d)
	}
	got = queryStrings(t, db, `SELECT project, name, internal, workflow_stage_name, entry_count, message_count, user_messages,
		assistant_messages, tool_result_messages, other_messages, first_activity, last_activity, active_leaf_id, torn, format_version FROM sessions`)
	want = []string{`repo|second|true|build|6|3|1|1|0|1|2026-02-01 00:00:01 +0000 UTC|2026-02-01 00:00:06 +0000 UTC|m6|false|4`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
}

// TestWholeFileCopy: the same session under two roots counts once; the
// copy points at its own session id.
func TestWholeFileCopy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(casesDir, "c02-final-record-without-newline", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	db, _ := exportFiles(t, map[string]string{
		".atomic/agent/sessions/--p--/s.jsonl": string(raw),
		".pi/agent/sessions/--p--/s.jsonl":     string(raw),
	}, nil)
	got := queryStrings(t, db, `SELECT f.source, u.counted, u.duplicate_of_session_id FROM usage u JOIN files f USING (file_id) ORDER BY f.path`)
	want := []string{"atomic|true|∅", "pi|false|" + parentID}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	got = queryStrings(t, db, `SELECT f.source, e.entry_id, e.fork_copy_of FROM entries e JOIN files f USING (file_id) ORDER BY f.path, e.entry_index`)
	want = []string{"atomic|a0000001|∅", "atomic|a0000002|∅", "pi|a0000001|" + parentID, "pi|a0000002|" + parentID}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}

// TestV1CopyWithoutIDs: a v1 file and its migrated copy (ids added) share
// usage identities (entry timestamp, message timestamp, tokens).
func TestV1CopyWithoutIDs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(casesDir, "c05-v1-linear-with-compaction-index", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	migrated := []string{strings.Replace(lines[0], `"type":"session",`, `"type":"session","version":4,`, 1)}
	prev := "null"
	for i, l := range lines[1:] {
		id := `"e000000` + string(rune('1'+i)) + `"`
		migrated = append(migrated, strings.Replace(l, `{"type":`, `{"id":`+id+`,"parentId":`+prev+`,"type":`, 1))
		prev = id
	}
	db, _ := exportFiles(t, map[string]string{"a/v1.jsonl": string(raw), "b/v4.jsonl": strings.Join(migrated, "\n") + "\n"}, nil)
	got := queryStrings(t, db, `SELECT f.path LIKE '%/a/v1.jsonl', u.input, u.counted FROM usage u JOIN files f USING (file_id) ORDER BY f.path, u.entry_index`)
	want := []string{"true|50|true", "true|70|true", "false|50|false", "false|70|false"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
}

func TestInvalidUTF8AndRaw(t *testing.T) {
	line := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"caf` + "\xe9" + `!"}],"timestamp":1767225601000}}`
	db, _ := exportFiles(t, map[string]string{"s.jsonl": hdr3 + "\n" + line + "\n"}, func(o *Options) { o.WithRaw = true })
	got := queryStrings(t, db, "SELECT text, byte_size FROM content_blocks")
	if d := cmp.Diff([]string{"caf\uFFFD!|5"}, got); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	var raw string
	queryOne(t, db, "SELECT raw_json FROM entries", &raw)
	if raw != strings.ToValidUTF8(line, "\uFFFD") {
		t.Errorf("raw_json %q", raw)
	}
	var code string
	queryOne(t, db, "SELECT code FROM ingest_issues", &code)
	if code != "invalid_utf8" {
		t.Errorf("issue %s, want invalid_utf8", code)
	}
}

// TestConcatenatedRecordsRaw: each record of a concatenated line is an
// entry of its own, with its own raw JSON and the line's number.
func TestConcatenatedRecordsRaw(t *testing.T) {
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{filepath.Join(casesDir, "c16-concatenated-records")}, func(o *Options) { o.WithRaw = true })
	db := sinks[0].open(t, out)
	got := queryStrings(t, db, "SELECT entry_index, entry_id, line_no, left(raw_json, 39) FROM entries ORDER BY entry_index")
	want := []string{
		`0|h0000001|2|{"type":"message","id":"h0000001","pare`,
		`1|h0000002|3|{"type":"message","id":"h0000002","pare`,
		`2|h0000003|3|{"type":"label","id":"h0000003","parent`,
		`3|h0000004|4|{"type":"message","id":"h0000004","pare`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}

// TestCostModes: --cost picks recorded or calculated costs, and changing
// it on an existing export gives what a fresh export in that mode gives.
func TestCostModes(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	dir := filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds")
	costs := func(db *sql.DB) []string {
		return queryStrings(t, db, "SELECT entry_id, cost_source, round(cost_total, 9), round(cost_input, 9) FROM usage ORDER BY entry_index")
	}
	// g0000004, a session summary, names no model and records no cost:
	// unpriced in every mode.
	want := map[CostMode][]string{
		CostAuto:      {"g0000002|recorded|0.0033|0", "g0000003|recorded|0.00495|0", "g0000004|unpriced|∅|∅"},
		CostRecorded:  {"g0000002|recorded|0.0033|0", "g0000003|recorded|0.00495|0", "g0000004|unpriced|∅|∅"},
		CostCalculate: {"g0000002|calculated|0.0033|0.0024", "g0000003|calculated|0.00495|0.0036", "g0000004|unpriced|∅|∅"},
	}
	out := t.TempDir()
	for _, mode := range []CostMode{CostCalculate, CostRecorded, CostAuto, CostCalculate} {
		fresh := t.TempDir()
		runExport(t, sinks[0], fresh, []string{dir}, func(o *Options) { o.CostMode = mode })
		fdb := sinks[0].open(t, fresh)
		if d := cmp.Diff(want[mode], costs(fdb)); d != "" {
			t.Errorf("fresh %s export (-want +got):\n%s", mode, d)
		}
		sum := runExport(t, sinks[0], out, []string{dir}, func(o *Options) { o.CostMode = mode })
		if sum.Read != 0 && sum.Unchanged != 0 {
			t.Errorf("mode switch to %s re-read files", mode)
		}
		db := sinks[0].open(t, out)
		if d := cmp.Diff(want[mode], costs(db)); d != "" {
			t.Errorf("export switched to %s (-want +got):\n%s", mode, d)
		}
		closeDB(t, db)
	}
}

// TestContentOptionChangeRereads: switching --no-content rebuilds.
func TestContentOptionChangeRereads(t *testing.T) {
	dir := filepath.Join(casesDir, "c08-four-megabyte-line")
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{dir}, nil)
	sum := runExport(t, sinks[0], out, []string{dir}, func(o *Options) { o.NoContent = true })
	if sum.Read != 1 {
		t.Errorf("--no-content on an export with content read %d files, want 1", sum.Read)
	}
	db := sinks[0].open(t, out)
	var n int
	queryOne(t, db, "SELECT count(*) FROM content_blocks WHERE text IS NOT NULL", &n)
	if n != 0 {
		t.Errorf("%d texts left after --no-content", n)
	}
}
