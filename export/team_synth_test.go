package export

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/synth"
)

var teamSeed = flag.Uint64("team-seed", 15, "seed of the team synth of TestTeamSynthTotals")

// TestTeamSynthTotals: a team synth's machines export into one root; the
// counted totals of OpenRoots (report --from) and of the root's views.sql
// run by DuckDB itself, in UTC and another zone, equal the manifest's
// union (SPEC.md §4 across machines).
func TestTeamSynthTotals(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	t.Logf("team synth seed %d (-team-seed)", *teamSeed)
	out := filepath.Join(t.TempDir(), "team")
	tm, err := synth.GenerateTeam(context.Background(), synth.Options{Out: out, Sessions: 120, Seed: *teamSeed, Workers: 2}, 4)
	if err != nil {
		t.Fatal(err)
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
	const q = "SELECT count(*), coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0), coalesce(sum(total_tokens), 0) FROM counted_usage"
	db, err := OpenRoots(t.Context(), []string{root}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got synth.Tokens
	queryOne(t, db, q, &got.Records, &got.Input, &got.Output, &got.CacheRead, &got.CacheWrite, &got.TotalTokens)
	db.Close()
	check("OpenRoots", got)

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
		// Daily totals (UTC days) against the manifest's, read in one
		// query (a day the view lacks has 0 records).
		days := map[string]int64{}
		rows, err := db.Query("SELECT CAST(day AS VARCHAR), sum(records) FROM daily_usage GROUP BY ALL")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var day string
			var n int64
			if err := rows.Scan(&day, &n); err != nil {
				t.Fatal(err)
			}
			days[day] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for day, tok := range tm.Home.Usage.Daily["UTC"] {
			if n := days[day]; n != tok.Records {
				t.Errorf("views.sql in %s: daily_usage %s has %d records; want %d", zone, day, n, tok.Records)
			}
		}
	}
}
