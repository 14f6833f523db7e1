package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestC30UsageEntries: pi "usage" entries (appendUsage, kind cache_warm)
// and oh-my-pi "model_usage" entries are billed records of kinds
// usage_entry and model_usage, their own kind (purpose) kept in sub_kind,
// in both sinks (SPEC.md §1.4, §4).
func TestC30UsageEntries(t *testing.T) {
	dir := filepath.Join(casesDir, "c30-usage-entries")
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT kind, sub_kind, count(*) FROM usage WHERE counted GROUP BY ALL ORDER BY ALL`)
			want := []string{"assistant|∅|2", "model_usage|title|1", "usage_entry|cache_warm|2"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("usage kinds (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, `SELECT session_id, count(*), round(sum(cost_total), 9) FROM usage WHERE counted GROUP BY ALL ORDER BY ALL`)
			want = []string{
				"30a0c001-4e5f-4a6b-8c7d-30a000000001|3|0.016812",
				"30a0c002-4e5f-4a6b-8c7d-30a000000002|2|0.0111",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("per session (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, `SELECT entry_id, provider, model, api, stop_reason FROM usage WHERE kind <> 'assistant' ORDER BY entry_id`)
			want = []string{
				"30a00003|anthropic|claude-sonnet-4-5|∅|∅",
				"30a00004|anthropic|claude-sonnet-4-5|∅|∅",
				"30b00002|anthropic|claude-haiku-4-5|anthropic-messages|stop",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("attribution (-want +got):\n%s", d)
			}
			var unknown int
			queryOne(t, db, `SELECT count(*) FROM ingest_issues WHERE code = 'unknown_entry_type'`, &unknown)
			if unknown != 0 {
				t.Errorf("%d unknown_entry_type issues, want none", unknown)
			}
		})
	}
}

// TestC21ToolResultFacts: toolResult entries keep their tool call id, tool
// name and isError in entries, also those without a content block, in both
// sinks; the tool_calls view counts them as results.
func TestC21ToolResultFacts(t *testing.T) {
	dir := filepath.Join(casesDir, "c21-empty-tool-result")
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT e.entry_id, e.tool_call_id, e.tool_name, e.is_error, count(b.block_index)
				FROM entries e LEFT JOIN content_blocks b USING (file_id, entry_index)
				WHERE e.role = 'toolResult' GROUP BY ALL ORDER BY e.entry_id`)
			want := []string{
				"21a00003|call_read_1|read|false|1",
				"21a00004|call_bash_1|bash|false|0",
				"21a00006|call_bash_2|bash|true|0",
				"21a00008|call_write_1|write|false|0",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tool results (-want +got):\n%s", d)
			}
			if s.name != "duckdb" {
				return
			}
			got = queryStrings(t, db, `SELECT tool_name, calls, results, errors, output_bytes FROM tool_calls`)
			want = []string{"bash|2|2|1|0", "read|1|1|0|11", "write|1|1|0|0"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tool_calls view (-want +got):\n%s", d)
			}
		})
	}
}

// TestC27CacheWriteAndServedModel: 1-hour cache writes (pi cacheWrite1h,
// omp cttl) priced at their own rate, records routed by openrouter/auto
// priced and grouped by message.responseModel with requested_model kept,
// and a negative recorded cost ignored (bad_usage) and calculated
// (SPEC.md §7.4), in both sinks and both cost modes.
func TestC27CacheWriteAndServedModel(t *testing.T) {
	dir := filepath.Join(casesDir, "c27-cache-write-and-served-model")
	type rec struct {
		group, requested string
		cw1h             int64
		calc, auto       float64
		autoSource       string
	}
	want := map[string]rec{
		"27a00002": {"anthropic / claude-haiku-4-5", "claude-haiku-4-5", 2000, 0.00775, 0.00775, "recorded"},
		"27a00004": {"anthropic / claude-haiku-4-5", "claude-haiku-4-5", 1000, 0.0029, 0.0029, "calculated"},
		"27a00006": {"anthropic / claude-haiku-4-5", "claude-haiku-4-5", 0, 0.0012, 0.0012, "calculated"},
		"27b00002": {"anthropic / claude-haiku-4-5", "claude-haiku-4-5", 1500, 0.004175, 0.004175, "calculated"},
		"27c00002": {"openrouter / anthropic/claude-haiku-4.5", "openrouter/auto", 0, 0.0035, 0.0035, "calculated"},
		"27c00004": {"openrouter / openai/gpt-4o-mini", "openrouter/auto", 0, 0.00225, 0.0024, "recorded"},
	}
	for _, mode := range []CostMode{CostCalculate, CostAuto} {
		for _, s := range exportSinks(t, []string{dir}, func(o *Options) { o.CostMode = mode }) {
			t.Run(s.name+"/"+string(mode), func(t *testing.T) {
				db := s.open(t, s.out)
				rows, err := db.Query(`SELECT entry_id, provider || ' / ' || model, requested_model, cache_write_1h, cost_total, cost_source
					FROM usage WHERE counted ORDER BY entry_id`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				n := 0
				var total float64
				for rows.Next() {
					var id, group, requested, src string
					var cw1h int64
					var cost float64
					if err := rows.Scan(&id, &group, &requested, &cw1h, &cost, &src); err != nil {
						t.Fatal(err)
					}
					n++
					total += cost
					w, ok := want[id]
					if !ok {
						t.Errorf("unexpected usage row %s", id)
						continue
					}
					wantCost, wantSrc := w.auto, w.autoSource
					if mode == CostCalculate {
						wantCost, wantSrc = w.calc, "calculated"
					}
					if group != w.group || requested != w.requested || cw1h != w.cw1h || !approx(cost, wantCost) || src != wantSrc {
						t.Errorf("%s: %s (asked %s) 1h %d $%v %s; want %s (asked %s) 1h %d $%v %s",
							id, group, requested, cw1h, cost, src, w.group, w.requested, w.cw1h, wantCost, wantSrc)
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				wantTotal := 0.021925
				if mode == CostCalculate {
					wantTotal = 0.021775
				}
				if n != 6 || !approx(total, wantTotal) {
					t.Errorf("%d records $%v, want 6 $%v", n, total, wantTotal)
				}
				got := queryStrings(t, db, `SELECT i.line_no, i.severity, i.code FROM ingest_issues i JOIN files f USING (file_id)
					WHERE f.path LIKE '%27a0c003-4e5f-4a6b-8c7d-27a000000003.jsonl' AND i.code = 'bad_usage' GROUP BY ALL ORDER BY ALL`)
				if d := cmp.Diff([]string{"3|warning|bad_usage"}, got); d != "" {
					t.Errorf("bad_usage issues (-want +got):\n%s", d)
				}
				var negative int
				queryOne(t, db, `SELECT count(*) FROM usage WHERE cost_total < 0 OR calculated_cost_total < 0 OR recorded_cost_total < 0`, &negative)
				if negative != 0 {
					t.Errorf("%d rows with a negative cost", negative)
				}
			})
		}
	}
}

// TestC24SubagentRollup: a roll-up whose child session is in the export is
// kept with counted = false and rollup_of_session_id; one whose child is
// absent counts (SPEC.md §7.3). Removing the child file moves its spend
// onto the roll-up: the total neither drops nor doubles.
func TestC24SubagentRollup(t *testing.T) {
	src := filepath.Join(casesDir, "c24-subagent-rollup")
	const (
		parent1 = "24a0c001-4e5f-4a6b-8c7d-24a000000001"
		child1  = "24a0c0c1-4e5f-4a6b-8c7d-24a0000000c1"
		parent2 = "24a0c002-4e5f-4a6b-8c7d-24a000000002"
	)
	childFile := filepath.Join("sessions", "--home-dev-app--", "2025-11-03T10-00-05-000Z_"+child1+".jsonl")
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			home := copyTree(t, src)
			out := t.TempDir()
			runExport(t, s, out, []string{home}, nil)
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT session_id, entry_id, kind, counted, rollup_of_session_id, input, output, cache_read, cost_total
				FROM usage WHERE kind = 'tool_result' ORDER BY entry_id`)
			want := []string{
				parent1 + "|24a00003|tool_result|false|" + child1 + "|5500|350|1000|0.00735",
				parent2 + "|24c00003|tool_result|true|∅|4000|300|0|0.0055",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("roll-ups (-want +got):\n%s", d)
			}
			var n, notCounted int
			var cost float64
			queryOne(t, db, `SELECT count(*) FILTER (WHERE counted), count(*) FILTER (WHERE NOT counted), sum(cost_total) FILTER (WHERE counted) FROM usage`,
				&n, &notCounted, &cost)
			if n != 7 || notCounted != 1 || !approx(cost, 0.02965) {
				t.Errorf("%d counted, %d not, $%v; want 7, 1, $0.02965", n, notCounted, cost)
			}
			// The child file goes: its spend is the roll-up's again.
			if err := os.Remove(filepath.Join(home, childFile)); err != nil {
				t.Fatal(err)
			}
			out2 := t.TempDir()
			runExport(t, s, out2, []string{home}, nil)
			db2 := s.open(t, out2)
			queryOne(t, db2, `SELECT count(*) FILTER (WHERE counted), count(*) FILTER (WHERE NOT counted), sum(cost_total) FILTER (WHERE counted) FROM usage`,
				&n, &notCounted, &cost)
			if n != 6 || notCounted != 0 || !approx(cost, 0.02965) {
				t.Errorf("without the child: %d counted, %d not, $%v; want 6, 0, $0.02965", n, notCounted, cost)
			}
		})
	}
}

// TestC24SubagentRollupsView: the subagent_rollups view lists each roll-up
// with the child it names and, when the child was read, its own cost.
func TestC24SubagentRollupsView(t *testing.T) {
	dir := filepath.Join(casesDir, "c24-subagent-rollup")
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{dir}, nil)
	db := sinks[0].open(t, out)
	got := queryStrings(t, db, `SELECT parent_session_id, entry_id, child_session_id, counted, rollup_cost, child_records, round(child_cost, 9)
		FROM subagent_rollups`)
	want := []string{
		"24a0c001-4e5f-4a6b-8c7d-24a000000001|24a00003|24a0c0c1-4e5f-4a6b-8c7d-24a0000000c1|false|0.00735|2|0.00735",
		"24a0c002-4e5f-4a6b-8c7d-24a000000002|24c00003|∅|true|0.0055|∅|∅",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("subagent_rollups (-want +got):\n%s", d)
	}
}
