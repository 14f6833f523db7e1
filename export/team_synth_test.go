package export

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/synth"
)

var teamSeed = flag.Uint64("team-seed", 15, "seed of the team synth of TestTeamSynthTotals")

// TestTeamSynthTotals: a team synth's machines export into one root; the
// counted totals of OpenRoots (report --from) and of the root's views.sql
// run by DuckDB itself, in UTC and another zone, equal the manifest's
// union (SPEC.md §4 across machines).
//
// With subagents (synth --subagents), the team holds subagent runs whose
// parent is on one machine and a child file only on another: the roll-up
// is counted once across the union (SPEC.md §4, §7.3), not on the parent's
// machine as well as through the child's records.
func TestTeamSynthTotals(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	for _, sub := range []bool{false, true} {
		t.Run(fmt.Sprint("subagents=", sub), func(t *testing.T) { testTeamSynthTotals(t, sub) })
	}
}

func testTeamSynthTotals(t *testing.T, subagents bool) {
	t.Logf("team synth seed %d (-team-seed)", *teamSeed)
	out := filepath.Join(t.TempDir(), "team")
	tm, err := synth.GenerateTeam(context.Background(), synth.Options{Out: out, Sessions: 120, Seed: *teamSeed, Workers: 2, Subagents: subagents}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if subagents {
		if n := childrenElsewhere(tm); n == 0 {
			t.Fatalf("seed %d: no subagent child only on another machine than its parent: the team proves nothing", *teamSeed)
		} else {
			t.Logf("%d subagent children only on another machine than their parent", n)
		}
	}
	root, work := t.TempDir(), t.TempDir()
	for _, m := range tm.Machines {
		_, err := os.Stat(filepath.Join(out, m.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := exportMachine(t, root, work, m.Name, PartitionMonth, filepath.Join(out, m.Name), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := tm.Home.Usage.Tokens
	check := func(what string, got synth.Tokens) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %+v; want the manifest's %+v", what, got, want)
		}
	}
	wantMicros := tm.Home.Usage.CostRecordedMicros
	const qc = "SELECT CAST(round(coalesce(sum(recorded_cost_total), 0) * 1e6) AS BIGINT) FROM counted_usage"
	const q = "SELECT count(*), coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0), coalesce(sum(total_tokens), 0) FROM counted_usage"
	db, err := OpenRoots(t.Context(), []string{root}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got synth.Tokens
	queryOne(t, db, q, &got.Records, &got.Input, &got.Output, &got.CacheRead, &got.CacheWrite, &got.TotalTokens)
	var micros int64
	queryOne(t, db, qc, &micros)
	db.Close()
	check("OpenRoots", got)
	if micros != wantMicros {
		t.Errorf("OpenRoots: recorded cost %d µ$; want the manifest's %d", micros, wantMicros)
	}

	views, err := os.ReadFile(filepath.Join(root, ViewsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{"UTC", "Asia/Tokyo"} {
		db := openZone(t, "", zone)
		if _, err := db.Exec("SET file_search_path = '" + root + "'"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(views)); err != nil {
			t.Fatal(err)
		}
		var got synth.Tokens
		queryOne(t, db, q, &got.Records, &got.Input, &got.Output, &got.CacheRead, &got.CacheWrite, &got.TotalTokens)
		check("views.sql in "+zone, got)
		queryOne(t, db, qc, &micros)
		if micros != wantMicros {
			t.Errorf("views.sql in %s: recorded cost %d µ$; want the manifest's %d", zone, micros, wantMicros)
		}
		// Daily totals (UTC days) against the manifest's (one query: each
		// runs the views over the whole root).
		days := map[string]int64{}
		for _, r := range queryStrings(t, db, "SELECT CAST(day AS VARCHAR) || '|' || records FROM daily_usage") {
			d, n, _ := strings.Cut(r, "|")
			days[d], _ = strconv.ParseInt(n, 10, 64)
		}
		for day, tok := range tm.Home.Usage.Daily["UTC"] {
			if days[day] != tok.Records {
				t.Errorf("views.sql in %s: daily_usage %s has %d records; want %d", zone, day, days[day], tok.Records)
			}
		}
	}
}

// childrenElsewhere counts the present subagent children of tm's runs
// that are on no machine holding their parent.
func childrenElsewhere(tm *synth.TeamManifest) int {
	on := map[string]map[string]bool{} // path → machines
	for _, m := range tm.Machines {
		for _, f := range m.Files {
			if on[f] == nil {
				on[f] = map[string]bool{}
			}
			on[f][m.Name] = true
		}
	}
	n := 0
	for _, r := range tm.Home.SubagentRuns {
		for _, c := range r.Children {
			if !c.Present {
				continue
			}
			shared := false
			for m := range on[c.Path] {
				shared = shared || on[r.Parent][m]
			}
			if !shared {
				n++
			}
		}
	}
	return n
}
