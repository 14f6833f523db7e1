package export

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/upgrade"
)

// v4Session is a v4 file of session id with createdAt created and one
// assistant message per entry id, all at the same instant with the same
// usage: distinct records that look alike.
func v4Session(id, created string, entryIDs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":4,"id":%q,"createdAt":%q,"cwd":"/w"}`+"\n", id, created)
	prev := "null"
	for _, e := range entryIDs {
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0},"timestamp":1772359200000}}`+"\n", e, prev)
		prev = fmt.Sprintf("%q", e)
	}
	return b.String()
}

// TestDistinctIDsSameTimestampAndTokens: entries with different ids are
// different billed records, even with the same timestamps and tokens, in
// one session or in unrelated ones (QA: 50 000 such sessions were reported
// as one record).
func TestDistinctIDsSameTimestampAndTokens(t *testing.T) {
	files := map[string]string{"one.jsonl": v4Session("10000000-0000-4000-8000-000000000000", "2026-03-01T09:00:00.000Z", "a1", "a2", "a3")}
	const others = 20
	for i := range others {
		files[fmt.Sprintf("s%02d.jsonl", i)] = v4Session(fmt.Sprintf("20000000-0000-4000-8000-0000000000%02d", i),
			"2026-03-01T09:00:00.000Z", fmt.Sprintf("b%02d", i))
	}
	db, _ := exportFiles(t, files, nil)
	var n, counted, dups int64
	queryOne(t, db, "SELECT count(*), count(*) FILTER (WHERE counted), count(duplicate_of_session_id) FROM usage", &n, &counted, &dups)
	if n != 3+others || counted != n || dups != 0 {
		t.Errorf("%d rows, %d counted, %d with duplicate_of_session_id; want %d, all counted, none", n, counted, dups, 3+others)
	}
	var records, input int64
	queryOne(t, db, "SELECT sum(records), sum(input) FROM daily_usage", &records, &input)
	if records != 3+others || input != 100*(3+others) {
		t.Errorf("daily_usage: %d records, %d input; want %d, %d", records, input, 3+others, 100*(3+others))
	}
}

// migrated returns the bytes `sessions-etl migrate` writes for the v1 file
// raw.
func migrated(t *testing.T, raw []byte) []byte {
	t.Helper()
	plan, err := upgrade.PlanFile(context.Background(), bytes.NewReader(raw), int64(len(raw)), upgrade.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := upgrade.Apply(&out, bytes.NewReader(raw), plan); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"version":4`)) || !bytes.Contains(out.Bytes(), []byte(`"parentId":`)) {
		t.Fatalf("not migrated to v4 with ids:\n%s", out.Bytes())
	}
	return out.Bytes()
}

// TestV1AndMigratedCopyCountOnce: a v1 file (no entry ids) and its copy
// migrated by sessions-etl (ids added, records otherwise the same) hold the
// same billed records: c05's two count once, whichever file comes first,
// and a fork of the migrated copy adds only its own record.
func TestV1AndMigratedCopyCountOnce(t *testing.T) {
	c05 := filepath.Join(casesDir, "c05-v1-linear-with-compaction-index")
	raw, err := os.ReadFile(filepath.Join(c05, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	exp := loadCaseUsage(t, c05)
	v4 := migrated(t, raw)
	const c05ID = "7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02"
	const forkID = "30000000-0000-4000-8000-000000000000"
	// The fork copies the migrated entries verbatim and adds one record.
	lines := strings.SplitAfter(strings.TrimSuffix(string(v4), "\n"), "\n")
	fork := `{"type":"session","version":4,"id":"` + forkID + `","createdAt":"2025-06-02T00:00:00.000Z","cwd":"/home/dev/proj","parentSessionId":"` + c05ID + `"}` + "\n" +
		strings.Join(lines[1:], "") + "\n" +
		`{"type":"message","id":"f0rk0001","parentId":null,"timestamp":"2025-06-02T00:00:05.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":5,"output":1},"timestamp":1748822405000}}` + "\n"
	for name, files := range map[string]map[string]string{
		"v1 first":       {"a/v1.jsonl": string(raw), "b/v4.jsonl": string(v4)},
		"migrated first": {"a/v4.jsonl": string(v4), "b/v1.jsonl": string(raw)},
		"with a fork":    {"a/v1.jsonl": string(raw), "b/v4.jsonl": string(v4), "c/fork.jsonl": fork},
	} {
		t.Run(name, func(t *testing.T) {
			db, _ := exportFiles(t, files, nil)
			var n, in, out int64
			queryOne(t, db, "SELECT count(*), sum(input), sum(output) FROM usage WHERE counted AND session_id = '"+c05ID+"'", &n, &in, &out)
			if n != *exp.CountedRecords || in != *exp.Input || out != *exp.Output {
				t.Errorf("c05 counted %d records, %d input, %d output; want %d, %d, %d", n, in, out, *exp.CountedRecords, *exp.Input, *exp.Output)
			}
			got := queryStrings(t, db, `SELECT regexp_extract(f.path, '[^/]+$'), u.input, u.counted, u.duplicate_of_session_id
				FROM usage u JOIN files f USING (file_id) WHERE NOT u.counted ORDER BY f.path, u.entry_index`)
			second := "v4.jsonl"
			if name == "migrated first" {
				second = "v1.jsonl"
			}
			want := []string{second + "|50|false|" + c05ID, second + "|70|false|" + c05ID}
			if name == "with a fork" {
				want = append(want, "fork.jsonl|50|false|"+c05ID, "fork.jsonl|70|false|"+c05ID)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("copies (-want +got):\n%s", d)
			}
			var all int64
			queryOne(t, db, "SELECT count(*) FROM usage WHERE counted", &all)
			if wantAll := *exp.CountedRecords + int64(strings.Count(name, "fork")); all != wantAll {
				t.Errorf("%d records counted in all, want %d", all, wantAll)
			}
		})
	}
}

// TestCopyOfEarliestMatch: duplicate_of_session_id names the session of
// the earliest row that makes a row a copy, whether it matched by entry id
// and timestamp or, for a v1 row without id, by timestamps and tokens.
func TestCopyOfEarliestMatch(t *testing.T) {
	const (
		v1ID   = "40000000-0000-4000-8000-000000000001"
		withID = "40000000-0000-4000-8000-000000000002"
		copyID = "40000000-0000-4000-8000-000000000003"
	)
	v1 := func(created string) string {
		return `{"type":"session","id":"` + v1ID + `","timestamp":"` + created + `","cwd":"/w"}` + "\n" +
			`{"type":"message","timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0},"timestamp":1772359200000}}` + "\n"
	}
	for _, c := range []struct {
		name              string
		v1, first, second string // header instants
		want              []string
	}{
		{"v1 oldest", "2026-03-01T08:00:00.000Z", "2026-03-01T09:00:00.000Z", "2026-03-01T09:30:00.000Z",
			[]string{v1ID + "|true|∅", withID + "|false|" + v1ID, copyID + "|false|" + v1ID}},
		{"v1 between", "2026-03-01T09:10:00.000Z", "2026-03-01T09:00:00.000Z", "2026-03-01T09:30:00.000Z",
			[]string{v1ID + "|false|" + withID, withID + "|true|∅", copyID + "|false|" + withID}},
		{"v1 newest", "2026-03-01T10:00:00.000Z", "2026-03-01T09:00:00.000Z", "2026-03-01T09:30:00.000Z",
			[]string{v1ID + "|false|" + withID, withID + "|true|∅", copyID + "|false|" + withID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := exportFiles(t, map[string]string{
				"v1.jsonl":   v1(c.v1),
				"id.jsonl":   v4Session(withID, c.first, "e1"),
				"copy.jsonl": v4Session(copyID, c.second, "e1"),
			}, nil)
			got := queryStrings(t, db, "SELECT session_id, counted, duplicate_of_session_id FROM usage ORDER BY session_id")
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
