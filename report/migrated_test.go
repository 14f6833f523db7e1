package report

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/importer"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/migrate"
	sessionid "github.com/sessions-etl/sessions-etl/session"
)

// TestTotalsSurviveMigrateAndImport: migrating a home in place, or
// importing it into a store reported next to it, changes no total (SPEC.md
// §4: copies count once). The generated home has v1 forks of v1 parents:
// migration gives their shared records different derived ids (SPEC.md
// §2.1), which must still be recognized as one record each; the same for
// the tool calls of the tools report.
func TestTotalsSurviveMigrateAndImport(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := synthFixture(t)
	type totals struct {
		usage Usage
		tools ToolRow
	}
	measure := func(paths ...string) totals {
		t.Helper()
		db := filepath.Join(t.TempDir(), "r.duckdb")
		rs := reportsOn(t, db, paths, []Kind{Daily, Tools}, nil)
		return totals{rs[0].Totals, rs[1].ToolTotals}
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
// (SPEC.md §2.1), which are no ids of the fork's own, and a fork of that
// fork copies them again; every copy still counts once, records and tool
// calls alike (SPEC.md §4), next to the migrated parent or next to its v1
// original, in the report's database and in a full export.
func TestForkOfMigratedSession(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	const v1Parent = `{"type":"session","id":"p-1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":1735689601000}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"hi"}],"isError":false,"timestamp":1735689602000}}
`
	migrated := filepath.Join(t.TempDir(), "parent.jsonl")
	writeFile(t, migrated, v1Parent)
	roots, err := ingest.PathRoots([]string{migrated})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if _, err := migrate.Run(context.Background(), migrate.Options{Roots: roots, Workers: 1, RunsDir: state, StateDir: state},
		func(migrate.FileResult) error { return nil }); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(migrated)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	last := sessionid.DerivedEntryID("p-1", 2, 0)
	if !strings.Contains(lines[0], `"version":4`) || !strings.Contains(lines[2], `"id":"`+last+`"`) {
		t.Fatalf("parent not migrated as expected:\n%s", raw)
	}
	own := func(id, parent, day string, input int) string {
		return `{"type":"message","id":"` + id + `","parentId":"` + parent + `","timestamp":"2025-01-0` + day + `T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":` + strconv.Itoa(input) + `,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":1735776001000}}` + "\n"
	}
	// g-1 forks the migrated parent; h-1 forks g-1 (its header names g-1,
	// not the session the copied ids were derived for).
	child := `{"type":"session","version":4,"id":"g-1","createdAt":"2025-01-02T00:00:00.000Z","cwd":"/w","parentSessionId":"p-1"}` + "\n" +
		lines[1] + lines[2] + own("aaaa0001", last, "2", 7)
	grandchild := `{"type":"session","version":4,"id":"h-1","createdAt":"2025-01-03T00:00:00.000Z","cwd":"/w","parentSessionId":"g-1"}` + "\n" +
		strings.Join(strings.SplitAfter(child, "\n")[1:], "") + own("bbbb0001", "aaaa0001", "3", 20)

	for _, parent := range []struct{ name, text string }{{"migrated parent", string(raw)}, {"v1 parent", v1Parent}} {
		t.Run(parent.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "parent.jsonl"), parent.text)
			writeFile(t, filepath.Join(dir, "child.jsonl"), child)
			writeFile(t, filepath.Join(dir, "grandchild.jsonl"), grandchild)
			full := filepath.Join(t.TempDir(), "export.duckdb")
			roots, err := ingest.PathRoots([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := export.Run(context.Background(), export.Options{Roots: roots, Workers: 2, DuckDBPath: full}); err != nil {
				t.Fatal(err)
			}
			for _, db := range []string{filepath.Join(t.TempDir(), "r.duckdb"), full} {
				r := runOnDB(t, Daily, db, []string{dir}, nil)
				if r.Totals.Records != 3 || r.Totals.Input != 127 {
					t.Errorf("%s: totals %+v, want 3 records and 127 input tokens (the copies once)", filepath.Base(db), r.Totals.Tokens)
				}
				tools := runOnDB(t, Tools, db, []string{dir}, nil)
				if tools.ToolTotals.Calls != 1 || tools.ToolTotals.Results != 1 {
					t.Errorf("%s: tools %d calls, %d results; want 1 and 1 (the copies once)", filepath.Base(db), tools.ToolTotals.Calls, tools.ToolTotals.Results)
				}
			}
		})
	}
}
