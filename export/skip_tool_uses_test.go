package export

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSkipToolUses: a ModeUsage database made with SkipToolUses has the
// files, sessions, usage and ingest_issues rows of one made without (so
// every report but tools gives the same numbers), an empty tool_uses and
// no_tool_uses in its state; it stays so on later runs with SkipToolUses,
// a run without rebuilds it with the rows a fresh database has, and from
// then on a run with SkipToolUses keeps them. ReadsSkippedToolUses is true
// exactly for a query of tool_uses or tool_calls in a database without them.
func TestSkipToolUses(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := generatedHome(t)
	roots := []string{home}
	skip := func(o *Options) { o.SkipToolUses = true }
	skipped, plain := t.TempDir(), t.TempDir()
	if sum := runExport(t, usageSink, skipped, roots, skip); sum.Rebuilt != "new database" {
		t.Errorf("first run: rebuilt %q, want new database", sum.Rebuilt)
	}
	runExport(t, usageSink, plain, roots, nil)

	state := func(out string) (tools int64, marker string) {
		t.Helper()
		db := usageSink.open(t, out)
		defer closeDB(t, db)
		queryOne(t, db, "SELECT (SELECT count(*) FROM tool_uses), coalesce((SELECT value FROM _sessions_etl WHERE key = 'no_tool_uses'), '')",
			&tools, &marker)
		return tools, marker
	}
	checksums := func(out string, tables []*Table) map[string]string {
		t.Helper()
		db := usageSink.open(t, out)
		defer closeDB(t, db)
		return pathChecksumsOf(t, db, tables)
	}
	if n, m := state(skipped); n != 0 || m != "true" {
		t.Errorf("made with SkipToolUses: %d tool_uses rows, no_tool_uses %q; want 0, true", n, m)
	}
	if n, m := state(plain); n == 0 || m != "" {
		t.Fatalf("made without SkipToolUses: %d tool_uses rows, no_tool_uses %q; want rows and no marker", n, m)
	}
	if d := cmp.Diff(checksums(plain, sharedTables), checksums(skipped, sharedTables)); d != "" {
		t.Errorf("shared tables differ (-without +with SkipToolUses):\n%s", d)
	}

	ctx := context.Background()
	db := usageSink.open(t, skipped)
	for q, want := range map[string]bool{
		"SELECT count(*) FROM tool_calls":                              true,
		"SELECT * FROM usage u JOIN TOOL_USES t USING (file_id)":       true,
		"SELECT sum(total_tokens) FROM usage":                          false,
		"WITH tool_uses AS (SELECT 1 AS x) SELECT x FROM tool_uses":    false,
		"SELECT 'tool_uses' AS name":                                   false,
		"SELECT count(*) FROM (SELECT * FROM tool_uses) WHERE is_call": true,
	} {
		if got, err := ReadsSkippedToolUses(ctx, db, q); err != nil || got != want {
			t.Errorf("ReadsSkippedToolUses(%q) = %v, %v; want %v", q, got, err, want)
		}
	}
	closeDB(t, db)
	db = usageSink.open(t, plain)
	if got, err := ReadsSkippedToolUses(ctx, db, "SELECT count(*) FROM tool_calls"); err != nil || got {
		t.Errorf("ReadsSkippedToolUses on a database with tool_uses = %v, %v; want false", got, err)
	}
	closeDB(t, db)

	if sum := runExport(t, usageSink, skipped, roots, skip); sum.Rebuilt != "" || sum.Read != 0 {
		t.Errorf("unchanged re-run with SkipToolUses: rebuilt %q, read %d; want none, 0", sum.Rebuilt, sum.Read)
	}
	if n, m := state(skipped); n != 0 || m != "true" {
		t.Errorf("after an unchanged re-run: %d tool_uses rows, no_tool_uses %q; want 0, true", n, m)
	}
	if sum := runExport(t, usageSink, skipped, roots, nil); sum.Rebuilt != "tool_uses" {
		t.Errorf("run without SkipToolUses: rebuilt %q, want tool_uses", sum.Rebuilt)
	}
	if d := cmp.Diff(checksums(plain, UsageTables), checksums(skipped, UsageTables)); d != "" {
		t.Errorf("rebuilt with tool_uses differs from a fresh database (-fresh +rebuilt):\n%s", d)
	}
	if _, m := state(skipped); m != "" {
		t.Errorf("after the rebuild: no_tool_uses %q, want none", m)
	}
	if sum := runExport(t, usageSink, skipped, roots, skip); sum.Rebuilt != "" {
		t.Errorf("SkipToolUses over a database with tool_uses: rebuilt %q, want none", sum.Rebuilt)
	}
	if d := cmp.Diff(checksums(plain, UsageTables), checksums(skipped, UsageTables)); d != "" {
		t.Errorf("SkipToolUses dropped kept tool_uses (-fresh +kept):\n%s", d)
	}
}
