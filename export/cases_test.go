package export

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const casesDir = "../testdata/cases"

const (
	parentID = "5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01"
	forkID   = "7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02"
)

// caseUsage is the "usage" block of a case's expected.json.
type caseUsage struct {
	CountedRecords *int64           `json:"counted_records"`
	Input          *int64           `json:"input"`
	Output         *int64           `json:"output"`
	CacheRead      *int64           `json:"cache_read"`
	CacheWrite     *int64           `json:"cache_write"`
	CostTotal      *float64         `json:"cost_total"`
	SessionFlag    string           `json:"session_flag"`
	CostSource     string           `json:"cost_source"`
	Kinds          map[string]int64 `json:"kinds"`
}

func loadCaseUsage(t *testing.T, dir string) *caseUsage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Usage *caseUsage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	return exp.Usage
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestCasesUsage checks every "usage" expectation of the shared cases
// against both sinks.
func TestCasesUsage(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	ents, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range ents {
		dir := filepath.Join(casesDir, e.Name())
		exp := loadCaseUsage(t, dir)
		if exp == nil {
			continue
		}
		checked++
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel() // the cases are independent: one's fsyncs overlap another's work
			for _, s := range exportSinks(t, []string{dir}, nil) {
				t.Run(s.name, func(t *testing.T) {
					db := s.open(t, s.out)
					var n, in, outTok, cr, cw int64
					var cost sql.NullFloat64
					queryOne(t, db, `SELECT count(*), coalesce(sum(input),0), coalesce(sum(output),0), coalesce(sum(cache_read),0),
					coalesce(sum(cache_write),0), sum(cost_total) FROM usage WHERE counted`, &n, &in, &outTok, &cr, &cw, &cost)
					check := func(what string, want *int64, got int64) {
						if want != nil && *want != got {
							t.Errorf("%s = %d, want %d", what, got, *want)
						}
					}
					check("counted records", exp.CountedRecords, n)
					check("input", exp.Input, in)
					check("output", exp.Output, outTok)
					check("cache_read", exp.CacheRead, cr)
					check("cache_write", exp.CacheWrite, cw)
					if exp.CostTotal != nil && (!cost.Valid || !approx(cost.Float64, *exp.CostTotal)) {
						t.Errorf("cost_total = %v, want %v", cost, *exp.CostTotal)
					}
					for kind, want := range exp.Kinds {
						var got int64
						queryOne(t, db, "SELECT count(*) FROM usage WHERE counted AND kind = '"+kind+"'", &got)
						if got != want {
							t.Errorf("counted %s records = %d, want %d", kind, got, want)
						}
					}
					if exp.SessionFlag == "torn" {
						var torn bool
						queryOne(t, db, "SELECT bool_and(torn) FROM sessions", &torn)
						if !torn {
							t.Error("session not flagged torn")
						}
					}
					if strings.Contains(exp.CostSource, "never recorded") {
						var recorded int
						queryOne(t, db, "SELECT count(*) FROM usage WHERE cost_source = 'recorded'", &recorded)
						if recorded != 0 {
							t.Errorf("%d rows costed from a recorded cost, want none", recorded)
						}
					}
				})
			}
		})
	}
	if checked < 10 {
		t.Fatalf("only %d cases have usage expectations; the cases directory moved?", checked)
	}
}

// TestC07ForkCountedOnce: the early-v4 fork copies its parent's entries;
// the copied assistant message is counted once, in the parent, also when
// the parent file has moved and its parentSession path points nowhere.
func TestC07ForkCountedOnce(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	src := filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home")
	layouts := map[string]func(t *testing.T, home string){
		"as is": func(*testing.T, string) {},
		"parent moved": func(t *testing.T, home string) {
			moveFile(t, filepath.Join(home, ".pi/agent/sessions/--home-dev-proj--/2025-05-01T12-00-00-000Z_"+parentID+".jsonl"),
				filepath.Join(home, ".atomic/agent/sessions/elsewhere/2025-05-01T12-00-00-000Z_"+parentID+".jsonl"))
		},
		"parent moved and renamed": func(t *testing.T, home string) {
			moveFile(t, filepath.Join(home, ".pi/agent/sessions/--home-dev-proj--/2025-05-01T12-00-00-000Z_"+parentID+".jsonl"),
				filepath.Join(home, "archive/old-session.jsonl"))
		},
	}
	for name, layout := range layouts {
		t.Run(name, func(t *testing.T) {
			home := copyTree(t, src)
			layout(t, home)
			for _, s := range exportSinks(t, []string{home}, nil) {
				t.Run(s.name, func(t *testing.T) {
					db := s.open(t, s.out)
					got := queryStrings(t, db, `SELECT session_id, entry_id, input, output, cache_read, cache_write, cost_total, counted,
					duplicate_of_session_id FROM usage ORDER BY session_id, entry_id`)
					want := []string{
						parentID + "|c0000002|1000|200|5000|300|0.02|true|∅",
						forkID + "|c0000002|1000|200|5000|300|0.02|false|" + parentID,
						forkID + "|c0000004|400|100|1000|0|0.004|true|∅",
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("usage rows (-want +got):\n%s", d)
					}
					var n, in, outTok, cr, cw int64
					var cost float64
					queryOne(t, db, `SELECT count(*), sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost_total)
					FROM usage WHERE counted`, &n, &in, &outTok, &cr, &cw, &cost)
					if n != 2 || in != 1400 || outTok != 300 || cr != 6000 || cw != 300 || !approx(cost, 0.024) {
						t.Errorf("counted totals %d records %d/%d/%d/%d $%v, want 2 records 1400/300/6000/300 $0.024", n, in, outTok, cr, cw, cost)
					}
					got = queryStrings(t, db, `SELECT session_id, entry_id, fork_copy_of FROM entries ORDER BY session_id, entry_index`)
					want = []string{
						parentID + "|c0000001|∅",
						parentID + "|c0000002|∅",
						forkID + "|c0000001|" + parentID,
						forkID + "|c0000002|" + parentID,
						forkID + "|c0000003|∅",
						forkID + "|c0000004|∅",
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("entries.fork_copy_of (-want +got):\n%s", d)
					}
					var parent, how sql.NullString
					queryOne(t, db, "SELECT parent_session_id, parent_resolved_by FROM sessions WHERE session_id = '"+forkID+"'", &parent, &how)
					if parent.String != parentID {
						t.Errorf("fork's parent_session_id = %v (%v), want %s", parent, how, parentID)
					}
				})
			}
		})
	}
}

// TestC08ImageBlock: the image's byte_size is the decoded size of its
// base64 data (4 194 304 characters, no padding: 3 145 728 bytes).
func TestC08ImageBlock(t *testing.T) {
	dir := filepath.Join(casesDir, "c08-four-megabyte-line")
	for _, noContent := range []bool{false, true} {
		for _, s := range exportSinks(t, []string{dir}, func(o *Options) { o.NoContent = noContent }) {
			t.Run(fmt.Sprintf("%s/no-content=%v", s.name, noContent), func(t *testing.T) {
				db := s.open(t, s.out)
				got := queryStrings(t, db, `SELECT entry_id, block_index, block_type, mime_type, byte_size, text
					FROM content_blocks ORDER BY entry_index, block_index`)
				text, answer := "what is in this picture?", "a chart"
				if noContent {
					text, answer = "∅", "∅"
				}
				want := []string{
					"d0000001|0|text|∅|24|" + text,
					"d0000001|1|image|image/png|3145728|∅",
					"d0000002|0|text|∅|7|" + answer,
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("no-content %v: content_blocks (-want +got):\n%s", noContent, d)
				}
			})
		}
	}
}

// TestC13ChildUsage: one assistant row with its own usage and one
// child_usage row per child_usage_attributed record; no mismatch issue.
func TestC13ChildUsage(t *testing.T) {
	dir := filepath.Join(casesDir, "c13-prime-child-usage")
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT entry_id, kind, provider, model, input, output, recorded_cost_total, cost_total, cost_source, counted
				FROM usage ORDER BY entry_index`)
			want := []string{
				"f0000002|assistant|anthropic|claude-sonnet-4-5|2000|300|0.0105|0.0105|recorded|true",
				"f0000003|child_usage|anthropic|claude-sonnet-4-5|500|100|0.003|0.003|recorded|true",
				"f0000004|child_usage|anthropic|claude-sonnet-4-5|1000|50|0.00375|0.00375|recorded|true",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			var in, outTok int64
			var cost float64
			queryOne(t, db, "SELECT sum(input), sum(output), sum(cost_total) FROM usage WHERE counted", &in, &outTok, &cost)
			if in != 3500 || outTok != 450 || !approx(cost, 0.01725) {
				t.Errorf("totals %d/%d/$%v, want 3500/450/$0.01725", in, outTok, cost)
			}
			var issues int
			queryOne(t, db, "SELECT count(*) FROM ingest_issues WHERE code IN ('child_usage_mismatch', 'unknown_entry_type')", &issues)
			if issues != 0 {
				t.Errorf("%d child_usage_mismatch/unknown_entry_type issues, want 0", issues)
			}
		})
	}
}

// TestC14BilledUsageKinds: assistant, tool_result and session_summary
// records; the summary names no model and has no recorded cost, so it has
// no provider or model (none is guessed) and is unpriced, as in the report;
// the views say the same (daily_usage's cost leaves it out and counts it
// unpriced, unpriced_models lists it without a model).
func TestC14BilledUsageKinds(t *testing.T) {
	dir := filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds")
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT entry_id, kind, provider, model, input, output, total_tokens, cost_source, cost_total, counted
				FROM usage ORDER BY entry_index`)
			want := []string{
				"g0000002|assistant|anthropic|claude-sonnet-4-5|800|60|860|recorded|0.0033|true",
				"g0000003|tool_result|anthropic|claude-sonnet-4-5|1200|90|1290|recorded|0.00495|true",
				"g0000004|session_summary|∅|∅|812|21|833|unpriced|∅|true",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			var in, outTok int64
			queryOne(t, db, "SELECT sum(input), sum(output) FROM usage WHERE counted", &in, &outTok)
			if in != 2812 || outTok != 171 {
				t.Errorf("totals %d/%d, want 2812/171", in, outTok)
			}
			if s.name == "duckdb" {
				var cost float64
				var records, unpriced int64
				queryOne(t, db, "SELECT sum(cost_total), sum(records), sum(unpriced_records) FROM daily_usage", &cost, &records, &unpriced)
				if !approx(cost, 0.00825) || records != 3 || unpriced != 1 {
					t.Errorf("daily_usage: $%v, %d records, %d unpriced; want $0.00825, 3, 1 (the report's numbers)", cost, records, unpriced)
				}
				got = queryStrings(t, db, "SELECT provider, model, kinds, records, input, output FROM unpriced_models")
				if d := cmp.Diff([]string{"∅|∅|session_summary|1|812|21"}, got); d != "" {
					t.Errorf("unpriced_models (-want +got):\n%s", d)
				}
			}
			// The context_edit hides g0000002 from the model; it is still on the active branch and billed.
			got = queryStrings(t, db, "SELECT entry_id, type, on_active_branch FROM entries ORDER BY entry_index")
			want = []string{
				"g0000001|message|true", "g0000002|message|true", "g0000003|message|true",
				"g0000004|session_summary|true", "g0000005|context_edit|true",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
		})
	}
}

// TestTornFileKeepsCompleteRecords: c01's torn final record is dropped,
// its complete records are exported and the session is flagged torn.
func TestTornFileKeepsCompleteRecords(t *testing.T) {
	dir := filepath.Join(casesDir, "c01-torn-final-record")
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, "SELECT f.status, s.torn, s.entry_count, s.active_leaf_id FROM files f JOIN sessions s USING (file_id)")
			if d := cmp.Diff([]string{"torn|true|2|a0000002"}, got); d != "" {
				t.Errorf("files/sessions (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT entry_id, line_no FROM entries ORDER BY entry_index")
			if d := cmp.Diff([]string{"a0000001|2", "a0000002|3"}, got); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT line_no, severity, code FROM ingest_issues")
			if d := cmp.Diff([]string{"4|error|torn_final_record"}, got); d != "" {
				t.Errorf("issues (-want +got):\n%s", d)
			}
		})
	}
}

// TestRejectedFilesListed: files whose records are not used get a files
// row and their issues only; the BOM file is read with the BOM dropped.
func TestRejectedFilesListed(t *testing.T) {
	dirs := []string{"c03-future-version", "c04-unrecognized-versions", "c10-bom-before-header", "c15-empty-and-header-only"}
	var roots []string
	for _, d := range dirs {
		roots = append(roots, filepath.Join(casesDir, d))
	}
	for _, s := range exportSinks(t, roots, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			sum := s.sum
			if sum.Rejected != 5 {
				t.Errorf("rejected %d files, want 5 (future, 4 unrecognized)", sum.Rejected)
			}
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT regexp_extract(f.path, '[^/]+/[^/]+$'), f.status, f.format_version, f.issue_count > 0,
				s.entry_count FROM files f LEFT JOIN sessions s USING (file_id) ORDER BY f.path`)
			want := []string{
				"c03-future-version/session.jsonl|future_version|∅|true|∅",
				"c04-unrecognized-versions/fraction.jsonl|unrecognized_version|∅|true|∅",
				"c04-unrecognized-versions/null.jsonl|unrecognized_version|∅|true|∅",
				"c04-unrecognized-versions/string.jsonl|unrecognized_version|∅|true|∅",
				"c04-unrecognized-versions/zero.jsonl|unrecognized_version|∅|true|∅",
				"c10-bom-before-header/session.jsonl|not_session|3|true|2",
				"c15-empty-and-header-only/empty.jsonl|empty|∅|false|∅",
				"c15-empty-and-header-only/header-only.jsonl|needs_upgrade|3|false|0",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			var entries, usage int
			queryOne(t, db, "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM usage)", &entries, &usage)
			if entries != 2 || usage != 1 {
				t.Errorf("%d entries and %d usage rows, want the BOM file's 2 and 1", entries, usage)
			}
			codes := queryStrings(t, db, "SELECT DISTINCT code FROM ingest_issues ORDER BY code")
			for _, c := range []string{"bom", "future_version", "unrecognized_version"} {
				if !slices.Contains(codes, c) {
					t.Errorf("ingest_issues lacks %s: %v", c, codes)
				}
			}
			if s.name == "duckdb" {
				got = queryStrings(t, db, `SELECT regexp_extract(path, '[^/]+/[^/]+$'), status, line_no, code FROM rejected_files`)
				want = []string{
					"c03-future-version/session.jsonl|future_version|1|future_version",
					"c04-unrecognized-versions/fraction.jsonl|unrecognized_version|1|unrecognized_version",
					"c04-unrecognized-versions/null.jsonl|unrecognized_version|1|unrecognized_version",
					"c04-unrecognized-versions/string.jsonl|unrecognized_version|1|unrecognized_version",
					"c04-unrecognized-versions/zero.jsonl|unrecognized_version|1|unrecognized_version",
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("rejected_files (-want +got):\n%s", d)
				}
				var paths []string
				for _, f := range sum.RejectedFiles {
					paths = append(paths, filepath.Base(filepath.Dir(f.Path))+"/"+filepath.Base(f.Path)+"|"+f.Status)
				}
				want = []string{
					"c03-future-version/session.jsonl|future_version",
					"c04-unrecognized-versions/fraction.jsonl|unrecognized_version",
					"c04-unrecognized-versions/null.jsonl|unrecognized_version",
					"c04-unrecognized-versions/string.jsonl|unrecognized_version",
					"c04-unrecognized-versions/zero.jsonl|unrecognized_version",
				}
				if d := cmp.Diff(want, paths); d != "" {
					t.Errorf("Summary.RejectedFiles, the first %d (-want +got):\n%s", RejectedListed, d)
				}
			}
		})
	}
}

func moveFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files under src into a new temporary
// directory and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
