package export

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The home in ../testdata/subagent-links (README.md there) holds the two
// shapes SPEC.md §7.3 recognises beyond details naming one child:
//
//   - P1's roll-up names no child in its details; its tool call's arguments
//     name C1 (sessionFile), whose header points back at P1: the roll-up
//     stands for C1 (rollup_link tool_call) and is not counted. P2's tool
//     call names C2 (sessionId), which does not point back at P2: not
//     recognised, the roll-up counts (and C2 counts on its own);
//   - P3's roll-up names two children in details.results[] (pi-subagents'
//     parallel run; a POSIX path from another machine and a Windows path):
//     both read, so it stands for both and is not counted; its parts (the
//     items' own usage, rollup_part 1 and 2) stand for their children and
//     are not counted either. P4's names C4a and C4b (chain run,
//     results[].sessionId, no usage per item) and only C4a was read: the
//     roll-up itself is not counted, its rest row (rollup_part 0) is — the
//     roll-up less C4a's own counted usage (900 − 200 input tokens), the
//     only record of C4b's spend — so C4a's spend counts once.
const subagentLinksDir = "../testdata/subagent-links"

const (
	slP1  = "5a000001-4e5f-4a6b-8c7d-5a0000000001"
	slC1  = "5a000002-4e5f-4a6b-8c7d-5a0000000002"
	slP2  = "5a000003-4e5f-4a6b-8c7d-5a0000000003"
	slP3  = "5a000005-4e5f-4a6b-8c7d-5a0000000005"
	slC3a = "5a000006-4e5f-4a6b-8c7d-5a0000000006"
	slC3b = "5a000007-4e5f-4a6b-8c7d-5a0000000007"
	slP4  = "5a000008-4e5f-4a6b-8c7d-5a0000000008"
	slC4a = "5a000009-4e5f-4a6b-8c7d-5a0000000009"
)

func TestRollupRecognition(t *testing.T) {
	for _, s := range exportSinks(t, []string{subagentLinksDir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT session_id, rollup_part, rollup_link, counted, replace(coalesce(rollup_of_session_id, '∅'), chr(10), '+'), input, output
				FROM usage WHERE kind = 'tool_result' ORDER BY session_id, rollup_part NULLS FIRST`)
			want := []string{
				slP1 + "|∅|tool_call|false|" + slC1 + "|500|10",
				slP2 + "|∅|tool_call|true|∅|300|10",
				slP3 + "|∅|details|false|" + slC3a + "+" + slC3b + "|700|20",
				slP3 + "|0|details|false|" + slC3a + "+" + slC3b + "|700|20",
				slP3 + "|1|details|false|" + slC3a + "|400|10",
				slP3 + "|2|details|false|" + slC3b + "|300|10",
				slP4 + "|∅|details|false|" + slC4a + "|900|20",
				slP4 + "|0|details|true|" + slC4a + "|700|10",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("roll-ups (-want +got):\n%s", d)
			}
			var n, input, output int64
			var cost float64
			queryOne(t, db, `SELECT count(*), sum(input), sum(output), sum(cost_total) FROM usage WHERE counted`, &n, &input, &output, &cost)
			if n != 11 || input != 5200 || output != 110 || !approx(cost, 0.0052) {
				t.Errorf("counted: %d records, input %d, output %d, $%v; want 11, 5200, 110, $0.0052", n, input, output, cost)
			}
			if s.name != "duckdb" { // the views are created in a DuckDB export
				return
			}
			got = queryStrings(t, db, `SELECT parent_session_id, rollup_link, replace(named_child, chr(10), '+') LIKE '%+%', child_records, round(child_cost, 9),
				counted_records, round(coalesce(counted_cost, 0), 9)
				FROM subagent_rollups ORDER BY parent_session_id`)
			want = []string{
				slP1 + "|tool_call|false|1|0.0005|0|0",
				slP2 + "|tool_call|false|∅|∅|1|0.0003",
				slP3 + "|details|true|2|0.0007|0|0",
				slP4 + "|details|true|1|0.0002|1|0.0007",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("subagent_rollups (-want +got):\n%s", d)
			}
		})
	}
}

// TestRollupLinksIgnoreOtherArrays: an array of results without link
// fields names no child; a tool call without a link names none either.
func TestRollupLinksIgnoreOtherArrays(t *testing.T) {
	home := t.TempDir()
	dir := home + "/.pi/agent/sessions/--home-dev-x--"
	body := strings.Join([]string{
		`{"type":"session","version":3,"id":"5b000001-4e5f-4a6b-8c7d-5b0000000001","timestamp":"2025-11-09T10:00:00.000Z","cwd":"/home/dev/x"}`,
		`{"type":"message","id":"5b000001","parentId":null,"timestamp":"2025-11-09T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"subagent","arguments":{"task":"x"}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.00001}}}}`,
		`{"type":"message","id":"5b000002","parentId":"5b000001","timestamp":"2025-11-09T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"subagent","content":[],"details":{"results":[{"agent":"a","exitCode":0}]},"usage":{"input":20,"output":2,"cacheRead":0,"cacheWrite":0,"cost":0.00002}}}`,
	}, "\n") + "\n"
	writeFile(t, dir+"/2025-11-09T10-00-00-000Z_5b000001-4e5f-4a6b-8c7d-5b0000000001.jsonl", body)
	for _, s := range exportSinks(t, []string{home}, nil) {
		out := s.out
		db := s.open(t, out)
		got := queryStrings(t, db, `SELECT kind, counted, rollup_link, rollup_child_id, rollup_child_path FROM usage ORDER BY entry_id`)
		want := []string{"assistant|true|∅|∅|∅", "tool_result|true|∅|∅|∅"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, d)
		}
	}
}
