package export

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/synth"
)

var subagentSeeds = flag.String("subagent-seeds", "", "comma-separated synth seeds for TestSubagentSynthHomes (default: 1 and one drawn from the clock)")

// TestSubagentSynthHomes: on synth homes with subagent runs (seeds from
// -subagent-seeds, printed), each sink's counted usage equals the
// manifest's — records, every token kind and the recorded cost — with one
// not-counted roll-up per run whose children were all read, naming that
// child (rollup_of_session_id); after the child files are removed and the
// home exported again, the same spend is counted through the roll-ups.
func TestSubagentSynthHomes(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	seeds := testkit.Seeds(t, "subagent-seeds", *subagentSeeds, 1)
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Logf("seed %d (rerun: go test ./export -run TestSubagentSynthHomes -subagent-seeds %d)", seed, seed)
			home := filepath.Join(t.TempDir(), "home")
			m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 40, Seed: seed, Subagents: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(m.SubagentRuns, func(r synth.SubagentRun) bool { return r.Split }) {
				t.Fatalf("seed %d: no run read in part: the home proves nothing about split roll-ups", seed)
			}
			want := m.Usage.Tokens
			wantMicros := m.Usage.CostRecordedMicros
			checkCounted(t, "whole home", home, want, wantMicros, m.Usage.Rollups, m.SubagentRuns)

			for _, r := range m.SubagentRuns {
				written := false
				for _, c := range r.Children {
					if c.Present {
						written = true
						if err := os.Remove(filepath.Join(home, filepath.FromSlash(c.Path))); err != nil {
							t.Fatal(err)
						}
						want.Records -= c.Usage.Records
					} else if r.Split {
						want.Records-- // its part counted; now the roll-up does
					}
				}
				if written {
					want.Records++
				}
			}
			checkCounted(t, "child files removed", home, want, wantMicros, 0, nil)
		})
	}
}

// checkCounted exports home to both sinks and compares the counted usage
// with the expected tokens and recorded micro-dollars (the manifest counts
// recorded costs only), the roll-ups not counted, and each run's row.
func checkCounted(t *testing.T, label, home string, want synth.Tokens, micros, rollups int64, runs []synth.SubagentRun) {
	t.Helper()
	for _, s := range exportSinks(t, []string{home}, nil) {
		out := s.out
		db := s.open(t, out)
		var got synth.Tokens
		var recorded float64
		var notCounted int64
		queryOne(t, db, `SELECT count(*) FILTER (WHERE counted),
  coalesce(sum(input) FILTER (WHERE counted), 0), coalesce(sum(output) FILTER (WHERE counted), 0),
  coalesce(sum(cache_read) FILTER (WHERE counted), 0), coalesce(sum(cache_write) FILTER (WHERE counted), 0),
  coalesce(sum(input + output + cache_read + cache_write) FILTER (WHERE counted), 0),
  coalesce(sum(recorded_cost_total) FILTER (WHERE counted), 0),
  count(*) FILTER (WHERE NOT counted AND rollup_of_session_id IS NOT NULL AND rollup_part IS NULL)
FROM usage`, &got.Records, &got.Input, &got.Output, &got.CacheRead, &got.CacheWrite, &got.TotalTokens, &recorded, &notCounted)
		if got != want || !approx(recorded, float64(micros)/1e6) || notCounted != rollups {
			t.Errorf("%s, %s: counted %+v, recorded $%.6f, %d roll-ups not counted; manifest %+v, $%.6f, %d",
				label, s.name, got, recorded, notCounted, want, float64(micros)/1e6, rollups)
		}
		for _, r := range runs {
			var counted bool
			var of *string
			queryOne(t, db, fmt.Sprintf(`SELECT counted, rollup_of_session_id FROM usage WHERE session_id = '%s' AND entry_id = '%s' AND rollup_part IS NULL`,
				r.ParentSessionID, r.EntryID), &counted, &of)
			wantOf := ""
			for _, c := range r.Children { // the children read, one line each
				if c.Present {
					if wantOf != "" {
						wantOf += "\n"
					}
					wantOf += c.SessionID
				}
			}
			if r.Split { // each child's part counts when its child was not read
				for i, c := range r.Children {
					var pc bool
					queryOne(t, db, fmt.Sprintf(`SELECT counted FROM usage WHERE session_id = '%s' AND entry_id = '%s' AND rollup_part = %d`,
						r.ParentSessionID, r.EntryID, i+1), &pc)
					if pc == c.Present {
						t.Errorf("%s, %s: roll-up %s part %d counted %v, child read %v", label, s.name, r.EntryID, i+1, pc, c.Present)
					}
				}
			}
			gotOf := ""
			if of != nil {
				gotOf = *of
			}
			if counted != r.Counted || (of == nil) != (wantOf == "") || gotOf != wantOf {
				t.Errorf("%s, %s: roll-up %s (%s): counted %v, rollup_of_session_id %q; want %v, %q", label, s.name, r.EntryID, r.Link, counted, gotOf, r.Counted, wantOf)
			}
		}
	}
}
