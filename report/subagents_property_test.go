package report

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

var subagentSeeds = flag.String("subagent-seeds", "", "comma-separated synth seeds for TestSubagentHomes (default: 1, 2 and one drawn from the clock)")

// seedsFromFlag returns the seeds of -subagent-seeds, else 1, 2 and one
// from the clock (printed, so a failure can be rerun with the flag).
func seedsFromFlag(t *testing.T) []uint64 {
	t.Helper()
	out := testkit.Seeds(t, "subagent-seeds", *subagentSeeds, 1, 2)
	if *subagentSeeds == "" && testing.Short() {
		out = out[1:]
	}
	return out
}

// manifestWant is what every usage report must total on a synth home: the
// manifest's counted usage (recorded costs, the uncosted part priced or
// unpriced as TestSynthTotals has it).
func manifestWant(m *synth.Manifest) expectedModel {
	var want expectedModel
	for k, mu := range m.Usage.ByModel {
		e := expectModel(manifestKey(k), mu)
		want.tokens.add(e.tokens)
		want.cost += e.cost
		want.unpriced.add(e.unpriced)
	}
	return want
}

// checkTotals runs every usage report on home (through the report cache at
// db) and compares its totals with want.
func checkTotals(t *testing.T, label, db, home string, want expectedModel) map[Kind]*Report {
	t.Helper()
	out := map[Kind]*Report{}
	for i, r := range reportsOn(t, db, []string{home}, usageKinds, nil) {
		k := usageKinds[i]
		out[k] = r
		if r.Totals.Tokens != want.tokens || relDiff(r.Totals.Cost, want.cost) > 1e-9 || r.Totals.Unpriced != want.unpriced {
			t.Errorf("%s: %s: tokens %+v cost %.9f unpriced %+v; want %+v cost %.9f unpriced %+v",
				label, k, r.Totals.Tokens, r.Totals.Cost, r.Totals.Unpriced, want.tokens, want.cost, want.unpriced)
		}
	}
	return out
}

// TestSubagentHomes is the subagent roll-up property (SPEC.md §7.3) over
// synth homes with subagent runs, for several seeds (-subagent-seeds):
//
//   - every usage report's totals equal the manifest's, which counts each
//     child's spend once (the child's records when its file is there, the
//     roll-up when it is not);
//   - the session report puts each child that was read under its parent,
//     and the parent's total with subagents is its own plus its children's;
//     the top-level rows with their subagents add up to the grand total;
//   - removing child files (through the same report cache) moves each one's
//     spend onto its roll-up: tokens and cost unchanged, records down by the
//     child's and up by one per roll-up — never lost, never doubled.
func TestSubagentHomes(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	for _, seed := range seedsFromFlag(t) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Logf("seed %d (rerun: go test ./report -run TestSubagentHomes -subagent-seeds %d)", seed, seed)
			home := filepath.Join(t.TempDir(), "home")
			m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 60, Seed: seed, Subagents: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.SubagentRuns) == 0 || m.Usage.Rollups == 0 {
				t.Fatalf("seed %d: %d runs, %d roll-ups not counted: the home proves nothing", seed, len(m.SubagentRuns), m.Usage.Rollups)
			}
			if !slices.ContainsFunc(m.SubagentRuns, func(r synth.SubagentRun) bool { return r.Split }) {
				t.Fatalf("seed %d: no run read in part: the home proves nothing about split roll-ups", seed)
			}
			want := manifestWant(m)
			if want.tokens != fromSynth(m.Usage.Tokens) {
				t.Fatalf("manifest by_model sums %+v differ from its totals %+v", want.tokens, m.Usage.Tokens)
			}
			db := filepath.Join(t.TempDir(), "r.duckdb")
			reports := checkTotals(t, "whole home", db, home, want)
			checkSessionTree(t, reports[Session], m)

			// Remove every written child file of the runs.
			moved := want
			var removed int
			for _, r := range m.SubagentRuns {
				written := false
				for _, c := range r.Children {
					if !c.Present {
						continue
					}
					written = true
					if err := os.Remove(filepath.Join(home, filepath.FromSlash(c.Path))); err != nil {
						t.Fatal(err)
					}
					removed++
					moved.tokens.Records -= c.Usage.Records
				}
				if r.Split { // the parts of the children not read counted, one record each; now the roll-up does
					for _, c := range r.Children {
						if !c.Present {
							moved.tokens.Records--
						}
					}
				}
				if written {
					moved.tokens.Records++ // the roll-up now counts
				}
			}
			if removed == 0 {
				t.Fatalf("seed %d: no child file to remove", seed)
			}
			after := checkTotals(t, fmt.Sprintf("%d child files removed", removed), db, home, moved)
			for _, row := range after[Session].Rows {
				if len(row.Subagents) > 0 || row.Depth > 0 {
					t.Errorf("child files removed: session %s still shows subagents %v (depth %d)", row.Key, row.Subagents, row.Depth)
				}
			}
		})
	}
}

// checkSessionTree checks the session report's subagent tree against the
// manifest's runs.
func checkSessionTree(t *testing.T, r *Report, m *synth.Manifest) {
	t.Helper()
	rows := map[string]*Row{}
	pos := map[string]int{}
	for i := range r.Rows {
		rows[r.Rows[i].Key] = &r.Rows[i]
		pos[r.Rows[i].Key] = i
	}
	kids := map[string][]string{}
	for _, run := range m.SubagentRuns {
		for _, c := range run.Children {
			if c.Present {
				kids[run.ParentSessionID] = append(kids[run.ParentSessionID], c.SessionID)
			}
		}
	}
	for parent, cs := range kids {
		p := rows[parent]
		if p == nil {
			t.Errorf("parent %s has no session row", parent)
			continue
		}
		if len(p.Subagents) != len(cs) || p.WithSubagents == nil {
			t.Errorf("parent %s: subagents %v, manifest %v", parent, p.Subagents, cs)
			continue
		}
		with := p.Usage
		for _, c := range cs {
			cr := rows[c]
			if cr == nil || cr.Depth != p.Depth+1 || pos[c] <= pos[parent] {
				t.Errorf("child %s is not under its parent %s", c, parent)
				continue
			}
			if cr.Session == nil || cr.Session.ParentSessionID != parent {
				t.Errorf("child %s: session info %+v", c, cr.Session)
			}
			with.add(cr.Usage)
		}
		if with.Tokens != p.WithSubagents.Tokens || relDiff(with.Cost, p.WithSubagents.Cost) > 1e-12 {
			t.Errorf("parent %s: with subagents %+v, own + children %+v", parent, p.WithSubagents.Tokens, with.Tokens)
		}
	}
	var top Usage
	for _, row := range r.Rows {
		if row.Depth > 0 {
			continue
		}
		if row.WithSubagents != nil {
			top.add(*row.WithSubagents)
		} else {
			top.add(row.Usage)
		}
	}
	if top.Tokens != r.Totals.Tokens || relDiff(top.Cost, r.Totals.Cost) > 1e-9 {
		t.Errorf("top-level sessions with their subagents add up to %+v $%.9f, the total is %+v $%.9f", top.Tokens, top.Cost, r.Totals.Tokens, r.Totals.Cost)
	}
}
