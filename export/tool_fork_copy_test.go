package export

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/synth"
)

var toolForkSeeds = flag.String("tool-fork-seeds", "", "comma-separated synth seeds for TestToolUsesForkCopyAsWindowQuery (default: 5 and one drawn from the clock)")

// windowForkCopy is how the tools report and the usage-mode tool_calls
// view found the fork copies among tool_uses rows before schema 8 stored
// them (queries/export.sql tool_uses_fork_copy of schema 7, kept here
// verbatim as the reference): a block is a fork copy when the first row of
// its copy_key, or of its content_key, in session order is in another
// file. Rows of files without a sessions row drop out, as they did.
const windowForkCopy = `SELECT t.file_id, t.entry_index, t.block_index,
       first_value(t.file_id) OVER (PARTITION BY t.copy_key ORDER BY o.ord, t.entry_index) <> t.file_id
       OR coalesce(t.content_key IS NOT NULL
                   AND first_value(t.file_id) OVER (PARTITION BY t.content_key ORDER BY o.ord, t.entry_index) <> t.file_id, false) AS fork_copy
FROM tool_uses t
JOIN (SELECT file_id, row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path) AS ord FROM sessions) o USING (file_id)
ORDER BY t.file_id, t.entry_index, t.block_index`

// storedForkCopy is the same from the column the export derives.
const storedForkCopy = `SELECT file_id, entry_index, block_index, fork_copy FROM tool_uses
ORDER BY file_id, entry_index, block_index`

// checkToolForkCopies compares the stored fork_copy of the usage-mode
// database in out with the window query, and returns how many rows it
// compared and how many are fork copies.
func checkToolForkCopies(t *testing.T, out string) (rows, copies int) {
	t.Helper()
	db := usageSink.open(t, out)
	defer closeDB(t, db)
	want, got := queryStrings(t, db, windowForkCopy), queryStrings(t, db, storedForkCopy)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool_uses fork copies (-window query +fork_copy column):\n%s", d)
	}
	for _, r := range got {
		if strings.HasSuffix(r, "|true") {
			copies++
		}
	}
	return len(got), copies
}

// TestToolUsesForkCopyAsWindowQuery: on every shared case, the generated
// home and seeded synth homes (seeds from -tool-fork-seeds, printed),
// tool_uses.fork_copy is exactly what the window query of schema 7 found,
// row for row; also after incremental runs that change which file is the
// oldest holder of copied entries (the original removed, then restored).
func TestToolUsesForkCopyAsWindowQuery(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	ents, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	// The cases have tool blocks but no fork copying them: they check
	// that nothing else is taken for a copy. Each case is a database of
	// its own; under -short all of them are one (one export).
	rows := 0
	var all []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(casesDir, e.Name())
		if testing.Short() {
			all = append(all, dir)
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			out := t.TempDir()
			runExport(t, usageSink, out, []string{dir}, nil)
			n, _ := checkToolForkCopies(t, out)
			rows += n
		})
	}
	if len(all) > 0 {
		t.Run("cases together", func(t *testing.T) {
			out := t.TempDir()
			runExport(t, usageSink, out, all, nil)
			n, _ := checkToolForkCopies(t, out)
			rows += n
		})
	}
	if rows == 0 {
		t.Error("no tool_uses rows in the cases: they prove nothing")
	}

	home, _ := generatedHome(t)
	t.Run("generated home", func(t *testing.T) {
		out := t.TempDir()
		runExport(t, usageSink, out, []string{home}, nil)
		n, copies := checkToolForkCopies(t, out)
		t.Logf("%d tool_uses rows, %d fork copies", n, copies)
		if copies == 0 {
			t.Error("no tool block of the generated home is a fork copy: it proves nothing")
		}
		db := usageSink.open(t, out)
		defer closeDB(t, db)
		// Copies found by content_key only (v1 forks): the second key matters.
		var byContent int
		queryOne(t, db, `SELECT count(*) FROM (`+windowForkCopy+`) w JOIN tool_uses t USING (file_id, entry_index, block_index)
WHERE w.fork_copy AND t.copy_key IN (SELECT copy_key FROM tool_uses GROUP BY copy_key HAVING count(DISTINCT file_id) = 1)`, &byContent)
		t.Logf("%d of them by content_key only", byContent)
		if byContent == 0 {
			t.Error("no tool block of the generated home is a fork copy by content_key only: the second key is not tested")
		}
	})

	t.Run("incremental", func(t *testing.T) {
		h := copyTree(t, home)
		out := t.TempDir()
		runExport(t, usageSink, out, []string{h}, nil)
		// The file holding the most blocks others copy: removing it makes
		// the next oldest holder of each copied entry its original.
		const byPath = `SELECT f.path, t.entry_index, t.block_index, t.fork_copy FROM tool_uses t JOIN files f USING (file_id) ORDER BY 1, 2, 3`
		db := usageSink.open(t, out)
		var victim string
		queryOne(t, db, `WITH o AS (SELECT file_id, row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path) AS ord FROM sessions),
  firsts AS (SELECT arg_min(t.file_id, o.ord) AS file_id FROM tool_uses t JOIN o USING (file_id) GROUP BY t.copy_key HAVING count(DISTINCT t.file_id) > 1)
SELECT f.path FROM firsts JOIN files f USING (file_id) GROUP BY f.path ORDER BY count(*) DESC, f.path LIMIT 1`, &victim)
		before := queryStrings(t, db, byPath)
		closeDB(t, db)
		saved, err := os.ReadFile(victim)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(victim); err != nil {
			t.Fatal(err)
		}
		runExport(t, usageSink, out, []string{h}, nil)
		_, removed := checkToolForkCopies(t, out)
		if err := os.WriteFile(victim, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		runExport(t, usageSink, out, []string{h}, nil)
		_, restored := checkToolForkCopies(t, out)
		db = usageSink.open(t, out)
		after := queryStrings(t, db, byPath)
		closeDB(t, db)
		if d := cmp.Diff(before, after); d != "" {
			t.Errorf("fork_copy by path after removing and restoring %s (-before +after):\n%s", victim, d)
		}
		if removed >= restored {
			t.Errorf("%d fork copies without %s, %d with it; want fewer without it (its copies' next holder is then the original)", removed, victim, restored)
		}
	})

	seeds := testkit.Seeds(t, "tool-fork-seeds", *toolForkSeeds, 5)
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			sessions, short := 60, ""
			if testing.Short() {
				sessions, short = 30, " -short" // a smaller home of the same seed
			}
			t.Logf("seed %d (rerun: go test%s ./export -run TestToolUsesForkCopyAsWindowQuery -tool-fork-seeds %d)", seed, short, seed)
			h := filepath.Join(t.TempDir(), "home")
			if _, err := synth.Generate(context.Background(), synth.Options{Out: h, Sessions: sessions, Seed: seed, Subagents: seed%2 == 1}); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			runExport(t, usageSink, out, []string{h}, nil)
			n, copies := checkToolForkCopies(t, out)
			t.Logf("%d tool_uses rows, %d fork copies", n, copies)
		})
	}
}
