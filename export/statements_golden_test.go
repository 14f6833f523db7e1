package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/queries"
)

// statementFixture adds to the view fixture what the derive statements
// need to show their work: a parent resolved by path (c05/c19), forks
// (c07), a subagent roll-up and a parallel run read in part (c24, x11),
// project labels that collide (c29) and a fork that copies tool calls
// (report/testdata/tools).
var statementFixture = append(append([]string(nil), viewFixture...),
	filepath.Join(casesDir, "c19-unresolved-parent"),
	filepath.Join(casesDir, "c24-subagent-rollup"),
	filepath.Join(casesDir, "x11-parallel-rollup-in-part"),
	filepath.Join(casesDir, "c29-project-labels"),
	filepath.Join("..", "report", "testdata", "tools"),
)

// statementProbes show, for each statement of queries/export.sql, what it
// derives, as rows of the table it writes (ids rather than paths, so the
// goldens do not depend on where the fixture lies). usage selects the
// usage-mode database (the statements only that mode runs).
var statementProbes = map[string]struct {
	usage bool
	q     string
}{
	"session_order": {false, `SELECT session_id, ord FROM session_order ORDER BY ord`}, // after the statement itself (a temporary table)
	"derive_fork_copies": {false, `SELECT s.session_id, e.entry_index, e.entry_id, e.fork_copy_of
		FROM entries e JOIN sessions s USING (file_id) 
		WHERE e.fork_copy_of IS NOT NULL ORDER BY ALL`},
	"derive_tool_uses_fork_copy": {true, `SELECT s.session_id, t.entry_index, t.fork_copy, count(*) AS blocks
		FROM tool_uses t JOIN sessions s USING (file_id) GROUP BY ALL ORDER BY ALL`},
	"usage_mode_tool_calls": {true, `SELECT * FROM tool_calls ORDER BY ALL`},
	"derive_counted": {false, `SELECT s.session_id, u.entry_index, u.rollup_part, u.kind, u.counted, u.duplicate_of_session_id
		FROM usage u JOIN sessions s USING (file_id) ORDER BY ALL`},
	"resolve_parents": {false, `SELECT session_id, parent_session_id, parent_resolved_by FROM sessions
		WHERE parent_session_path IS NOT NULL OR parent_session_id IS NOT NULL ORDER BY ALL`},
	"apply_cost_mode": {false, `SELECT s.session_id, u.entry_index, u.rollup_part, u.cost_source, u.cost_total
		FROM usage u JOIN sessions s USING (file_id) ORDER BY ALL`},
	"derive_project_labels": {false, `SELECT DISTINCT cwd, project FROM sessions ORDER BY ALL`},
	"derive_rollups": {false, `SELECT s.session_id, u.entry_index, u.rollup_part, replace(u.rollup_of_session_id, chr(10), ',') AS rollup_of, u.rollup_covered
		FROM usage u JOIN sessions s USING (file_id)
		WHERE u.rollup_of_session_id IS NOT NULL OR u.rollup_covered OR u.rollup_part IS NOT NULL ORDER BY ALL`},
	"derive_rollup_rest": {false, `SELECT s.session_id, u.entry_index, u.input, u.output, u.cache_read, u.cache_write, u.cost_total, u.counted
		FROM usage u JOIN sessions s USING (file_id) WHERE u.rollup_part = 0 ORDER BY ALL`},
}

// TestExportStatementsGolden: every statement of queries/export.sql has a
// probe, and each probe's result over the fixture (both modes) equals
// testdata/export/statements/<name>.golden. The goldens were written with
// -update and read by hand; a change to a statement shows here as a diff
// of what it derives. A new statement without a probe fails the test.
func TestExportStatementsGolden(t *testing.T) {
	out, outUsage := t.TempDir(), t.TempDir()
	runExport(t, sinks[0], out, statementFixture, nil)
	runExport(t, usageSink, outUsage, statementFixture, nil)
	full, usage := sinks[0].open(t, out), usageSink.open(t, outUsage)
	for _, st := range queries.ExportStatements() {
		t.Run(st.Name, func(t *testing.T) {
			p, ok := statementProbes[st.Name]
			if !ok {
				t.Fatalf("statement %s (queries/export.sql:%d) has no probe in statementProbes", st.Name, st.Line)
			}
			db := full
			if p.usage {
				db = usage
			}
			if st.Name == "session_order" {
				if _, err := db.Exec(st.SQL); err != nil {
					t.Fatal(err)
				}
			}
			got := renderQuery(t, db, p.q)
			path := filepath.Join("..", "testdata", "export", "statements", st.Name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./export -run TestExportStatementsGolden -update, then read the file)", err)
			}
			if d := cmp.Diff(string(raw), got); d != "" {
				t.Errorf("%s (-golden +got):\n%s", st.Name, d)
			}
		})
	}
	if len(statementProbes) != len(queries.ExportStatements()) {
		t.Errorf("%d probes for %d statements: remove the probes of statements that are gone", len(statementProbes), len(queries.ExportStatements()))
	}
}
