package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/importer"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/migrate"
)

// TestTotalsSurviveMigrateAndImport: migrating a home in place, or
// importing it into a store reported next to it, changes no total (SPEC.md
// §4: copies count once). The generated home has v1 forks of v1 parents:
// migration gives their shared records different derived ids (SPEC.md
// §2.1), which must still be recognized as one record each; the same for
// the tool calls of the tools report.
func TestTotalsSurviveMigrateAndImport(t *testing.T) {
	home, _ := synthFixture(t)
	type totals struct {
		usage Usage
		tools ToolRow
	}
	measure := func(paths ...string) totals {
		t.Helper()
		db := filepath.Join(t.TempDir(), "r.duckdb")
		return totals{runOnDB(t, Daily, db, paths, nil).Totals, runOnDB(t, Tools, db, paths, nil).ToolTotals}
	}
	want := measure(home)
	if want.usage.Records == 0 || want.tools.Calls == 0 {
		t.Fatalf("the generated home has no usage (%d records) or no tool calls (%d)", want.usage.Records, want.tools.Calls)
	}
	check := func(what string, got totals) {
		t.Helper()
		if got.usage.Tokens != want.usage.Tokens || relDiff(got.usage.Cost, want.usage.Cost) > 1e-9 {
			t.Errorf("%s: usage %+v cost %.9f, before %+v cost %.9f", what, got.usage.Tokens, got.usage.Cost, want.usage.Tokens, want.usage.Cost)
		}
		if g, w := got.tools, want.tools; g.Calls != w.Calls || g.Results != w.Results || g.Errors != w.Errors || g.OutputBytes != w.OutputBytes {
			t.Errorf("%s: tools %+v, before %+v", what, got.tools, want.tools)
		}
	}

	migrated := copyTree(t, home)
	roots, err := ingest.PathRoots([]string{migrated})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	sum, err := migrate.Run(context.Background(), migrate.Options{Roots: roots, Workers: 2, RunsDir: state, StateDir: state}, func(migrate.FileResult) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if sum.ByResult["upgraded"] == 0 {
		t.Fatalf("migrate upgraded nothing: %+v", sum.ByResult)
	}
	check("after migrate", measure(migrated))

	store := filepath.Join(t.TempDir(), "store")
	roots, err = ingest.PathRoots([]string{home})
	if err != nil {
		t.Fatal(err)
	}
	isum, err := importer.Run(context.Background(), importer.Options{Sources: roots, Target: store, Workers: 2, RunsDir: state, StateDir: state}, func(importer.Result) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if isum.ByResult["imported"] == 0 {
		t.Fatalf("import imported nothing: %+v", isum.ByResult)
	}
	check("home next to its import", measure(home, store))
	check("migrated home next to the import", measure(migrated, store))
}

// TestForkOfMigratedSession: an Atomic fork of a migrated v1 session copies
// the parent's entries with the ids migration derived for the parent
// (SPEC.md §2.1), which are no ids of the fork's own; its copies still
// count once, records and tool calls alike (SPEC.md §4).
func TestForkOfMigratedSession(t *testing.T) {
	dir := t.TempDir()
	parent := filepath.Join(dir, "parent.jsonl")
	writeFile(t, parent, `{"type":"session","id":"p-1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":1735689601000}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"hi"}],"isError":false,"timestamp":1735689602000}}
`)
	roots, err := ingest.PathRoots([]string{parent})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if _, err := migrate.Run(context.Background(), migrate.Options{Roots: roots, Workers: 1, RunsDir: state, StateDir: state},
		func(migrate.FileResult) error { return nil }); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(parent)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if !strings.Contains(lines[0], `"version":4`) || !strings.Contains(lines[2], `"id":"`+migrate.DerivedEntryID("p-1", 2, 0)+`"`) {
		t.Fatalf("parent not migrated as expected:\n%s", raw)
	}
	fork := `{"type":"session","version":4,"id":"f-1","createdAt":"2025-01-02T00:00:00.000Z","cwd":"/w","parentSessionId":"p-1"}` + "\n" +
		lines[1] + lines[2] +
		`{"type":"message","id":"ffff0001","parentId":"` + migrate.DerivedEntryID("p-1", 2, 0) + `","timestamp":"2025-01-02T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":7,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":1735776001000}}` + "\n"
	writeFile(t, filepath.Join(dir, "fork.jsonl"), fork)

	db := filepath.Join(t.TempDir(), "r.duckdb")
	r := runOnDB(t, Daily, db, []string{dir}, nil)
	if r.Totals.Records != 2 || r.Totals.Input != 107 {
		t.Errorf("totals %+v, want 2 records and 107 input tokens (the fork's copy once)", r.Totals.Tokens)
	}
	tools := runOnDB(t, Tools, db, []string{dir}, nil)
	if tools.ToolTotals.Calls != 1 || tools.ToolTotals.Results != 1 {
		t.Errorf("tools %d calls, %d results; want 1 and 1 (the fork's copy once)", tools.ToolTotals.Calls, tools.ToolTotals.Results)
	}
}
