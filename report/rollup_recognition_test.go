package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRollupRecognitionSessions reads ../testdata/subagent-links (its
// README.md gives every figure) through the report cache: a roll-up named
// only by its tool call (P1 → C1, C1 pointing back) and one naming two
// children in details.results[] (P3 → C3a, C3b) put their children under
// the parent and are not counted; P2's tool call names a session that does
// not point back (its roll-up counts); P4's chain has a child that was read
// (C4a, under P4) and one that was not: the roll-up counts less C4a's own
// usage (its rest, 700 of 900 input tokens). Then, in the same cache,
// C3b's file goes (P3's roll-up counts C3b's part, 300 input tokens from
// its details.results[] item; C3a still counts through its own records:
// spend unchanged, C3a alone under P3) and C1's file goes (P1's roll-up
// counts: spend unchanged). No spend is ever counted twice.
func TestRollupRecognitionSessions(t *testing.T) {
	const (
		p1, c1, p2      = "5a000001-4e5f-4a6b-8c7d-5a0000000001", "5a000002-4e5f-4a6b-8c7d-5a0000000002", "5a000003-4e5f-4a6b-8c7d-5a0000000003"
		p3, c3a, c3b    = "5a000005-4e5f-4a6b-8c7d-5a0000000005", "5a000006-4e5f-4a6b-8c7d-5a0000000006", "5a000007-4e5f-4a6b-8c7d-5a0000000007"
		p4, c4a         = "5a000008-4e5f-4a6b-8c7d-5a0000000008", "5a000009-4e5f-4a6b-8c7d-5a0000000009"
		dir             = ".pi/agent/sessions/--home-dev-app--/"
		c1File, c3bFile = dir + "2025-11-05T10-00-05-000Z_" + c1 + ".jsonl", dir + "2025-11-07T10-00-06-000Z_" + c3b + ".jsonl"
	)
	home := copyTree(t, "../testdata/subagent-links")
	db := filepath.Join(t.TempDir(), "r.duckdb")
	check := func(label string, records, input int64, cost float64, tree map[string][]string) {
		t.Helper()
		r := runOnDB(t, Session, db, []string{home}, nil)
		if r.Totals.Records != records || r.Totals.Input != input || relDiff(r.Totals.Cost, cost) > 1e-12 {
			t.Errorf("%s: %d records, input %d, $%.9f; want %d, %d, $%.9f", label, r.Totals.Records, r.Totals.Input, r.Totals.Cost, records, input, cost)
		}
		got := map[string][]string{}
		depth := map[string]int{}
		for _, row := range r.Rows {
			depth[row.Key] = row.Depth
			if len(row.Subagents) == 0 {
				continue
			}
			got[row.Key] = row.Subagents
			with := row.Usage
			for _, c := range row.Subagents {
				for _, cr := range r.Rows {
					if cr.Key == c {
						with.add(cr.Usage)
					}
				}
			}
			if row.WithSubagents == nil || row.WithSubagents.Tokens != with.Tokens {
				t.Errorf("%s: %s with subagents %+v, own + children %+v", label, row.Key, row.WithSubagents, with.Tokens)
			}
		}
		if len(got) != len(tree) {
			t.Errorf("%s: parents %v, want %v", label, got, tree)
		}
		for p, cs := range tree {
			if !slices.Equal(got[p], cs) {
				t.Errorf("%s: %s has subagents %v, want %v", label, p, got[p], cs)
			}
			for _, c := range cs {
				if depth[c] != 1 {
					t.Errorf("%s: %s at depth %d, want 1 (under %s)", label, c, depth[c], p)
				}
			}
		}
		for _, p := range []string{p2} {
			if depth[p] != 0 || got[p] != nil {
				t.Errorf("%s: %s at depth %d with subagents %v; want a top-level row without", label, p, depth[p], got[p])
			}
		}
	}
	check("all files", 11, 5200, 0.0052, map[string][]string{p1: {c1}, p3: {c3a, c3b}, p4: {c4a}})
	if err := os.Remove(filepath.Join(home, filepath.FromSlash(c3bFile))); err != nil {
		t.Fatal(err)
	}
	check("C3b removed", 11, 5200, 0.0052, map[string][]string{p1: {c1}, p3: {c3a}, p4: {c4a}})
	if err := os.Remove(filepath.Join(home, filepath.FromSlash(c1File))); err != nil {
		t.Fatal(err)
	}
	check("C1 removed too", 11, 5200, 0.0052, map[string][]string{p3: {c3a}, p4: {c4a}})
}
