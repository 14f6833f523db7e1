package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// usageSink is the DuckDB sink in ModeUsage.
var usageSink = sink{
	name: "duckdb (usage mode)",
	options: func(out string) Options {
		o := sinks[0].options(out)
		o.Mode = ModeUsage
		return o
	},
	open: sinks[0].open,
}

// sharedTables are the tables both modes keep.
var sharedTables = []*Table{FilesTable, SessionsTable, UsageTable, IngestIssuesTable}

// toolUsesOfFull is what tool_uses holds, computed from a full export's
// content_blocks and entries, with paths for file ids.
const toolUsesOfFull = `SELECT f.path, b.entry_index, b.block_index, e.timestamp, coalesce(b.block_type = 'toolCall', false),
	coalesce(e.role = 'toolResult' AND b.tool_call_id IS NOT NULL, false), b.tool_call_id,
	b.tool_name, e.provider, e.model_id, b.byte_size, b.is_error, e.fork_copy_of, e.copy_key, e.content_key,
	e.fork_copy_of IS NOT NULL
FROM content_blocks b JOIN entries e USING (file_id, entry_index) JOIN files f USING (file_id)
WHERE b.block_type = 'toolCall' OR (e.role = 'toolResult' AND b.tool_call_id IS NOT NULL)
ORDER BY f.path, b.entry_index, b.block_index`

// toolUsesOfUsage is the same from tool_uses, fork_copy_of worked out
// with window functions as the tools report did before schema 8, and the
// stored fork_copy last.
const toolUsesOfUsage = `WITH o AS (
  SELECT file_id, session_id, row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path) AS ord FROM sessions
), c AS (
  SELECT t.*,
         first_value(t.file_id) OVER a AS a_file, first_value(o.ord) OVER a AS a_ord, first_value(o.session_id) OVER a AS a_session,
         CASE WHEN t.content_key IS NOT NULL THEN first_value(t.file_id) OVER b END AS b_file,
         CASE WHEN t.content_key IS NOT NULL THEN first_value(o.ord) OVER b END AS b_ord,
         CASE WHEN t.content_key IS NOT NULL THEN first_value(o.session_id) OVER b END AS b_session
  FROM tool_uses t JOIN o USING (file_id)
  WINDOW a AS (PARTITION BY t.copy_key ORDER BY o.ord, t.entry_index),
         b AS (PARTITION BY t.content_key ORDER BY o.ord, t.entry_index)
)
SELECT f.path, c.entry_index, c.block_index, c.timestamp, c.is_call, c.is_result, c.tool_call_id,
	c.tool_name, c.provider, c.model_id, c.byte_size, c.is_error,
	CASE WHEN a_file <> c.file_id AND (b_file IS NULL OR b_file = c.file_id OR a_ord <= b_ord) THEN a_session
	     WHEN b_file <> c.file_id THEN b_session END,
	c.copy_key, c.content_key, c.fork_copy
FROM c JOIN files f USING (file_id)
ORDER BY f.path, c.entry_index, c.block_index`

// TestUsageModeAgreesWithFull: over the generated home and the view
// fixture, a ModeUsage database has exactly the files, sessions, usage and
// ingest_issues rows of a full export, tool_uses holds exactly the tool
// call and result blocks of the full export with their entries' columns
// (fork copies included; tool_uses.fork_copy exactly where the full
// export has entries.fork_copy_of), every view gives the same rows, and entries and
// content_blocks are not there.
func TestUsageModeAgreesWithFull(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := generatedHome(t)
	for name, roots := range map[string][]string{"generated home": {home}, "view fixture": viewFixture} {
		t.Run(name, func(t *testing.T) {
			fullOut, usageOut := t.TempDir(), t.TempDir()
			runExport(t, sinks[0], fullOut, roots, func(o *Options) { o.NoContent = true })
			sum := runExport(t, usageSink, usageOut, roots, nil)
			if sum.Mode != ModeUsage || sum.Rebuilt != "new database" {
				t.Errorf("summary mode %q, rebuilt %q", sum.Mode, sum.Rebuilt)
			}
			var names []string
			for _, tc := range sum.Tables {
				names = append(names, tc.Table)
			}
			if d := cmp.Diff([]string{"files", "sessions", "usage", "ingest_issues", "tool_uses"}, names); d != "" {
				t.Errorf("summary tables (-want +got):\n%s", d)
			}
			full, usage := sinks[0].open(t, fullOut), usageSink.open(t, usageOut)
			if d := cmp.Diff(pathChecksumsOf(t, full, sharedTables), pathChecksumsOf(t, usage, sharedTables)); d != "" {
				t.Errorf("shared tables differ (-full +usage):\n%s", d)
			}
			want, got := queryStrings(t, full, toolUsesOfFull), queryStrings(t, usage, toolUsesOfUsage)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tool_uses (-full +usage):\n%s", d)
			}
			if len(got) == 0 {
				t.Fatal("no tool_uses rows: the fixture proves nothing")
			}
			if name == "generated home" && !slicesContains(queryStrings(t, full, "SELECT count(*) > 0 FROM entries e JOIN content_blocks b USING (file_id, entry_index) WHERE e.fork_copy_of IS NOT NULL AND b.block_type = 'toolCall'"), "true") {
				t.Error("no tool call is a fork copy: the fixture proves less than it says")
			}
			for _, v := range modeViews(ModeFull) {
				q := viewQueries[v.Name]
				if q == "" {
					q = "SELECT * FROM " + v.Name
				}
				if d := cmp.Diff(queryStrings(t, full, q), queryStrings(t, usage, q)); d != "" {
					t.Errorf("view %s (-full +usage):\n%s", v.Name, d)
				}
			}
			for _, missing := range []string{TableEntries, TableContentBlocks} {
				if _, err := usage.Exec("SELECT count(*) FROM " + missing); err == nil || !strings.Contains(err.Error(), "does not exist") {
					t.Errorf("%s in a usage-mode database: err = %v, want it missing", missing, err)
				}
			}
			if mode, ok, err := ReadMode(context.Background(), usage); err != nil || !ok || mode != ModeUsage {
				t.Errorf("ReadMode(usage) = %q, %v, %v", mode, ok, err)
			}
			if mode, ok, err := ReadMode(context.Background(), full); err != nil || !ok || mode != ModeFull {
				t.Errorf("ReadMode(full) = %q, %v, %v", mode, ok, err)
			}
		})
	}
}

// TestUsageModeIncremental: in ModeUsage an append, a deletion and a new
// file re-read only those files, and the result is what a fresh ModeUsage
// export of the same files gives.
func TestUsageModeIncremental(t *testing.T) {
	src, _ := generatedHome(t)
	home := copyTree(t, src)
	out := t.TempDir()
	runExport(t, usageSink, out, []string{home}, nil)
	db := usageSink.open(t, out)
	var victim, gone string
	queryOne(t, db, `SELECT path FROM files WHERE status = 'current' ORDER BY path LIMIT 1`, &victim)
	queryOne(t, db, `SELECT path FROM files WHERE status = 'needs_upgrade' ORDER BY path DESC LIMIT 1`, &gone)
	closeDB(t, db)
	appendAssistant(t, victim, "ffff0001", 1234, 56)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(home, ".prime", "agent", "sessions", "0c0c0c0c-1111-4222-8333-444455556666.jsonl")
	writeFile(t, fresh, `{"type":"session","version":3,"id":"0c0c0c0c-1111-4222-8333-444455556666","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/dev/new"}`+"\n"+
		assistantLine("ffff0002", "null", "2026-05-01T10:00:01.000Z", 1000, 10)+"\n")
	sum := runExport(t, usageSink, out, []string{home}, nil)
	if sum.Read != 2 || sum.Removed != 1 || sum.Rebuilt != "" {
		t.Errorf("second run read %d files, removed %d, rebuilt %q; want 2, 1, none", sum.Read, sum.Removed, sum.Rebuilt)
	}
	again := t.TempDir()
	runExport(t, usageSink, again, []string{home}, nil)
	if d := cmp.Diff(pathChecksumsOf(t, usageSink.open(t, again), UsageTables), pathChecksumsOf(t, usageSink.open(t, out), UsageTables)); d != "" {
		t.Errorf("incremental usage-mode export differs from a fresh one (-fresh +incremental):\n%s", d)
	}
}

// TestModeSwitchRebuilds: an export over a report's usage-mode database
// reads every file again and leaves a full export; a report's ingest over
// a full export makes it a usage-mode database again. A usage-mode export
// has no Parquet.
func TestModeSwitchRebuilds(t *testing.T) {
	dir := filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home")
	out := t.TempDir()
	runExport(t, usageSink, out, []string{dir}, nil)
	sum := runExport(t, sinks[0], out, []string{dir}, nil)
	if sum.Rebuilt != "mode" || sum.Read != 2 || sum.Mode != ModeFull {
		t.Errorf("full export over a usage-mode database: rebuilt %q, read %d, mode %q; want mode, 2, full", sum.Rebuilt, sum.Read, sum.Mode)
	}
	db := sinks[0].open(t, out)
	var entries, tools int64
	queryOne(t, db, "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'tool_uses')", &entries, &tools)
	if entries == 0 || tools != 0 {
		t.Errorf("after the full export: %d entries, tool_uses tables %d; want entries and no tool_uses", entries, tools)
	}
	closeDB(t, db)
	if sum := runExport(t, usageSink, out, []string{dir}, nil); sum.Rebuilt != "mode" || sum.Read != 2 {
		t.Errorf("usage-mode ingest over a full export: rebuilt %q, read %d", sum.Rebuilt, sum.Read)
	}
	// A sessions-etl from before the usage mode knows only SchemaVersion:
	// it must find another version here, and rebuild rather than update
	// tables that are not there.
	db = usageSink.open(t, out)
	var version string
	queryOne(t, db, "SELECT value FROM _sessions_etl WHERE key = 'schema_version'", &version)
	if version == fmt.Sprint(SchemaVersion) {
		t.Errorf("a usage-mode database records schema version %s, that of a full export", version)
	}
	closeDB(t, db)
	if sum := runExport(t, usageSink, out, []string{dir}, nil); sum.Rebuilt != "" || sum.Read != 0 || sum.Changed {
		t.Errorf("unchanged usage-mode re-run: rebuilt %q, read %d, changed %v", sum.Rebuilt, sum.Read, sum.Changed)
	}

	rts, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Roots: rts, Mode: ModeUsage, ParquetDir: filepath.Join(t.TempDir(), "pq")})
	if !errors.Is(err, ErrUsageModeParquet) {
		t.Errorf("usage mode with Parquet: err = %v, want ErrUsageModeParquet", err)
	}
	if _, err := Run(context.Background(), Options{Roots: rts, Mode: "lean", DuckDBPath: filepath.Join(t.TempDir(), "x.duckdb")}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
