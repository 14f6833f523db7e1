package export

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadInfoRoots: a database records the roots its last run read
// (absolute), so that `query` can say which database holds which paths.
func TestReadInfoRoots(t *testing.T) {
	a := filepath.Join(casesDir, "c13-prime-child-usage")
	b := filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds")
	out := t.TempDir()
	info := func() DBInfo {
		t.Helper()
		db := sinks[0].open(t, out)
		defer closeDB(t, db)
		info, ok, err := ReadInfo(context.Background(), db)
		if err != nil || !ok {
			t.Fatalf("ReadInfo: %v, %v", ok, err)
		}
		return info
	}
	abs := func(p string) string {
		p, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	runExport(t, sinks[0], out, []string{b, a, a}, nil)
	if got, want := info(), (DBInfo{Mode: ModeFull, Roots: []string{abs(a), abs(b)}}); !cmp.Equal(got, want) {
		t.Errorf("ReadInfo = %+v, want %+v", got, want)
	}
	// Fewer roots: recorded, even though only rows are removed.
	runExport(t, sinks[0], out, []string{a}, nil)
	if got := info().Roots; !cmp.Equal(got, []string{abs(a)}) {
		t.Errorf("roots after the second run = %v, want %v", got, []string{abs(a)})
	}
}

// TestOlderRulesRebuilt: a database written under the previous rules
// (schema version 1: copies found by timestamps and tokens across entry
// ids, session summaries given a model) is rebuilt from the files, so its
// wrong numbers do not survive an unchanged re-run.
func TestOlderRulesRebuilt(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "a.jsonl"), v4Session("50000000-0000-4000-8000-000000000001", "2026-03-01T09:00:00.000Z", "a1", "a2"))
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{home}, nil)
	// What the previous version left: one of the two records taken for a
	// copy of the other, and its schema version.
	db, err := OpenDB(filepath.Join(out, "export.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE usage SET counted = false, duplicate_of_session_id = session_id WHERE entry_id = 'a2'",
		"UPDATE _sessions_etl SET value = '1' WHERE key = 'schema_version'",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	closeDB(t, db)
	sum := runExport(t, sinks[0], out, []string{home}, nil)
	if sum.Rebuilt != "schema version" || sum.Read != 1 {
		t.Errorf("re-run over a schema version 1 database: rebuilt %q, read %d; want every file read again", sum.Rebuilt, sum.Read)
	}
	rdb := sinks[0].open(t, out)
	var counted int64
	queryOne(t, rdb, "SELECT count(*) FROM usage WHERE counted", &counted)
	var version string
	queryOne(t, rdb, "SELECT value FROM _sessions_etl WHERE key = 'schema_version'", &version)
	if counted != 2 || version != fmt.Sprint(SchemaVersion) {
		t.Errorf("after the rebuild: %d counted records, schema version %s; want 2, %d", counted, version, SchemaVersion)
	}
}
