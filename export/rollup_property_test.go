package export

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
)

// TestRollupProperty: over generated homes of parents running subagents
// (every link style of SPEC.md §7.3), with a random part of the child files
// removed, the counted total equals the sum of the real calls: a child's
// spend counts once, in the child when its file was read, else through the
// roll-up — never lost, never doubled.
func TestRollupProperty(t *testing.T) {
	seed := testkit.Seed(t)
	r := rand.New(rand.NewPCG(seed, 11))
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		home := t.TempDir()
		dir := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-app--")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var wantRecords, wantNotCounted int
		var wantMicros int64
		families := 2 + r.IntN(4)
		for f := range families {
			parentID := fmt.Sprintf("%08x-0000-4000-8000-%012x", round, f)
			parentName := fmt.Sprintf("2025-11-%02dT10-00-00-000Z_%s.jsonl", f+1, parentID)
			var p strings.Builder
			fmt.Fprintf(&p, `{"type":"session","version":3,"id":%q,"timestamp":"2025-11-%02dT10:00:00.000Z","cwd":"/home/dev/app"}`+"\n", parentID, f+1)
			line := func(b *strings.Builder, id, ts, role, extra string, micros, in int64) {
				cost := `{"total":` + usd(micros) + `}`
				if role == "toolResult" && r.IntN(2) == 0 {
					cost = usd(micros) // pi-subagents writes the cost as a plain number
				}
				fmt.Fprintf(b, `{"type":"message","id":%q,"parentId":null,"timestamp":%q,"message":{"role":%q,"content":[],%s"usage":{"input":%d,"output":10,"cacheRead":0,"cacheWrite":0,"cost":%s}}}`+"\n",
					id, ts, role, extra, in, cost)
			}
			own := int64(1000 + r.IntN(5000))
			line(&p, fmt.Sprintf("p%07x", f), fmt.Sprintf("2025-11-%02dT10:00:01.000Z", f+1), "assistant", `"provider":"anthropic","model":"claude-sonnet-4-5",`, own, 100)
			wantRecords++
			wantMicros += own
			children := 1 + r.IntN(3)
			for c := range children {
				childID := fmt.Sprintf("%08x-0000-4000-8001-%06x%06x", round, f, c)
				childName := fmt.Sprintf("2025-11-%02dT10-00-%02d-000Z_%s.jsonl", f+1, 10+c, childID)
				var ch strings.Builder
				fmt.Fprintf(&ch, `{"type":"session","version":3,"id":%q,"timestamp":"2025-11-%02dT10:00:%02d.000Z","cwd":"/home/dev/app","parentSession":"/elsewhere/%s"}`+"\n",
					childID, f+1, 10+c, parentName)
				calls := 1 + r.IntN(3)
				var sum, sumIn int64
				for k := range calls {
					m, in := int64(100+r.IntN(3000)), int64(10+r.IntN(500))
					sum += m
					sumIn += in
					line(&ch, fmt.Sprintf("c%03x%04x", c, k), fmt.Sprintf("2025-11-%02dT10:00:%02d.%03dZ", f+1, 10+c, k+1), "assistant",
						`"provider":"anthropic","model":"claude-haiku-4-5",`, m, in)
				}
				links := []string{
					fmt.Sprintf(`{"sessionFile":"/other/machine/%s"}`, childName),
					fmt.Sprintf(`{"sessionId":%q}`, childID),
					fmt.Sprintf(`{"childSessionId":%q}`, childID),
					fmt.Sprintf(`{"childSessionFile":"%s"}`, filepath.ToSlash(filepath.Join(dir, childName))),
					fmt.Sprintf(`{"sessionPath":"C:\\Users\\x\\%s"}`, childName),
					fmt.Sprintf(`{"session":{"id":%q,"path":"/x/y.jsonl"}}`, childID),
					fmt.Sprintf(`{"session":{"path":"/x/%s"}}`, childName),
				}
				link := links[r.IntN(len(links))]
				line(&p, fmt.Sprintf("r%03x%04x", f, c), fmt.Sprintf("2025-11-%02dT10:01:%02d.000Z", f+1, c), "toolResult",
					fmt.Sprintf(`"toolCallId":"call%d","toolName":"subagent","details":%s,`, c, link), sum, sumIn)
				wantMicros += sum // once: in the child, or through the roll-up
				if r.IntN(3) == 0 {
					wantRecords++ // the child file is gone: the roll-up counts
					continue
				}
				wantRecords += calls
				wantNotCounted++
				writeFile(t, filepath.Join(dir, childName), ch.String())
			}
			writeFile(t, filepath.Join(dir, parentName), p.String())
		}
		for _, s := range exportSinks(t, []string{home}, nil) {
			out := s.out
			db := s.open(t, out)
			var n, notCounted int
			var cost float64
			queryOne(t, db, `SELECT count(*) FILTER (WHERE counted), count(*) FILTER (WHERE NOT counted), sum(cost_total) FILTER (WHERE counted) FROM usage`,
				&n, &notCounted, &cost)
			if n != wantRecords || notCounted != wantNotCounted || !approx(cost, float64(wantMicros)/1e6) {
				t.Errorf("seed %d round %d %s: %d counted, %d roll-ups not counted, $%v; want %d, %d, $%v",
					seed, round, s.name, n, notCounted, cost, wantRecords, wantNotCounted, float64(wantMicros)/1e6)
			}
		}
	}
}

// usd writes micro-dollars as a decimal USD amount.
func usd(micros int64) string { return fmt.Sprintf("%d.%06d", micros/1e6, micros%1e6) }
