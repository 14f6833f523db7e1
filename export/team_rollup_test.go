package export

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
)

// TestSharedRootRollupChildElsewhere: the home of ../testdata/subagent-links
// (README.md there: counted 11 records, input 5200, output 110, $0.0052,
// computed by hand) dealt to two machines so that subagent children are on
// another machine than their parent's roll-up. Across the union a child
// that was read is never counted twice (SPEC.md §4, §7.3): OpenRoots
// (report --from) and the root's views.sql, run by DuckDB itself, count
// what the whole home counts. Layouts:
//   - apart: every child only on b, every parent only on a: P1's and P3's
//     roll-ups stand for children read on b, P4's is read in part (C4a on b);
//   - both: the children on both machines as well (synced), the parents
//     on a only;
//   - synced parent: P3 and P4 on both machines, their children only on b
//     (the parent's copy on b reads them, its copy on a does not).
func TestSharedRootRollupChildElsewhere(t *testing.T) {
	const dir = subagentLinksDir + "/.pi/agent/sessions/--home-dev-app--"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{} // session id prefix (5a00000N) → file name
	for _, e := range ents {
		i := strings.IndexByte(e.Name(), '_')
		files[e.Name()[i+1:i+9]] = e.Name()
	}
	parents := []string{"5a000001", "5a000003", "5a000004", "5a000005", "5a000008"} // P1, P2 (and C2: no roll-up names it), P3, P4
	children := []string{"5a000002", "5a000006", "5a000007", "5a000009"}            // C1, C3a, C3b, C4a
	layouts := []struct {
		name string
		a, b []string
	}{
		{"apart", parents, children},
		{"both", append(append([]string(nil), parents...), children...), children},
		{"synced parent", parents, append([]string{"5a000005", "5a000008"}, children...)},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			homes := map[string]string{}
			for m, ids := range map[string][]string{"a": l.a, "b": l.b} {
				home := t.TempDir()
				for _, id := range ids {
					raw, err := os.ReadFile(filepath.Join(dir, files[id]))
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(home, ".pi/agent/sessions/--home-dev-app--", files[id]), string(raw))
				}
				homes[m] = home
			}
			root, work := t.TempDir(), t.TempDir()
			for _, m := range []string{"a", "b"} {
				if err := exportMachine(t, root, work, m, PartitionMonth, homes[m], nil); err != nil {
					t.Fatal(err)
				}
			}
			const q = "SELECT count(*), sum(input), sum(output), sum(recorded_cost_total) FROM counted_usage"
			check := func(what string, n, in, out int64, cost float64) {
				t.Helper()
				if n != 11 || in != 5200 || out != 110 || !approx(cost, 0.0052) {
					t.Errorf("%s: counted %d records, input %d, output %d, $%v; want 11, 5200, 110, $0.0052 (the whole home's)",
						what, n, in, out, cost)
				}
			}
			db, err := OpenRoots(t.Context(), []string{root}, "")
			if err != nil {
				t.Fatal(err)
			}
			var n, in, out int64
			var cost float64
			queryOne(t, db, q, &n, &in, &out, &cost)
			check("OpenRoots", n, in, out, cost)
			// P4's rest row, counted once, is the roll-up less C4a's usage.
			got := queryStrings(t, db, "SELECT input, output FROM usage WHERE counted AND rollup_part = 0")
			if strings.Join(got, ",") != "700|10" {
				t.Errorf("OpenRoots: counted rest rows %v; want [700|10]", got)
			}
			db.Close()

			views, err := os.ReadFile(filepath.Join(root, ViewsFile))
			if err != nil {
				t.Fatal(err)
			}
			raw := rawDuckDB(t)
			if _, err := raw.Exec("SET file_search_path = '" + root + "'"); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(string(views)); err != nil {
				t.Fatalf("views.sql: %v", err)
			}
			queryOne(t, raw, q, &n, &in, &out, &cost)
			check("views.sql", n, in, out, cost)
		})
	}
}

// TestSharedRootMixedExports: every part file of a machine's export is
// named with one export id; when a machine's tables are from two exports
// (its sessions from the previous one, as after an export killed between
// two tables' swaps), OpenRoots refuses with ErrMixedExports naming the
// machine and the tables, after waiting; the machine's next export makes
// the root readable again.
func TestSharedRootMixedExports(t *testing.T) {
	retries, wait := openRetries, openRetryWait
	openRetries, openRetryWait = 2, 10*time.Millisecond
	t.Cleanup(func() { openRetries, openRetryWait = retries, wait })
	root, work := t.TempDir(), t.TempDir()
	home := machineHome(t, 1)
	if err := exportMachine(t, root, work, "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	if err := exportMachine(t, root, work, "b", PartitionMonth, machineHome(t, 2), nil); err != nil {
		t.Fatal(err)
	}
	ids := func(m string) map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for _, tb := range Tables {
			filepath.WalkDir(filepath.Join(root, tb.Name, "machine="+m), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					id, ok := ExportIDOf(d.Name())
					if !ok || id == "" {
						t.Errorf("%s: not part-<export id>-<n>.parquet", p)
					}
					out[id] = true
				}
				return err
			})
		}
		return out
	}
	first := ids("a")
	if len(first) != 1 {
		t.Fatalf("machine a's files carry export ids %v; want one", first)
	}
	old := filepath.Join(t.TempDir(), "sessions-a")
	if err := os.Rename(filepath.Join(root, TableSessions, "machine=a"), old); err != nil {
		t.Fatal(err)
	}
	testkit.CopyTree(t, old, filepath.Join(root, TableSessions, "machine=a"))
	appendAssistant(t, filepath.Join(home, "s.jsonl"), "enew0001", 5, 1)
	if err := exportMachine(t, root, work, "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	second := ids("a")
	same := false
	for id := range first {
		same = second[id]
	}
	if len(second) != 1 || same {
		t.Fatalf("machine a's files after a second export carry ids %v (the first: %v); want one new id", second, first)
	}
	db, err := OpenRoots(t.Context(), []string{root}, "")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Its sessions from the first export, the other tables from the second.
	if err := os.RemoveAll(filepath.Join(root, TableSessions, "machine=a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, filepath.Join(root, TableSessions, "machine=a")); err != nil {
		t.Fatal(err)
	}
	db, err = OpenRoots(t.Context(), []string{root}, "")
	if err == nil {
		db.Close()
		t.Fatal("OpenRoots answered from a machine whose tables are from two exports")
	}
	if !errors.Is(err, ErrMixedExports) || !strings.Contains(err.Error(), "machine a:") || !strings.Contains(err.Error(), "sessions from") {
		t.Fatalf("OpenRoots: %v; want ErrMixedExports naming machine a and its sessions", err)
	}
	t.Log(err)
	if err := exportMachine(t, root, work, "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	db, err = OpenRoots(t.Context(), []string{root}, "")
	if err != nil {
		t.Fatalf("after a's next export: %v", err)
	}
	var n int64
	queryOne(t, db, "SELECT count(*) FROM usage WHERE machine = 'a' AND counted", &n)
	db.Close()
	if n != 4 { // machineHome(1): 3 records, and the one appended
		t.Errorf("machine a counts %d records; want 4", n)
	}
}

func TestExportIDOf(t *testing.T) {
	for name, want := range map[string]string{
		"part-20261203T101500Z-1a2b3c4d-0.parquet":  "20261203T101500Z-1a2b3c4d",
		"part-20261203T101500Z-1a2b3c4d-12.parquet": "20261203T101500Z-1a2b3c4d",
		"part-0.parquet": "",
	} {
		if got, ok := ExportIDOf(name); !ok || got != want {
			t.Errorf("ExportIDOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"part-x.parquet", "data.parquet", "part-1-0.json", "part-0"} {
		if _, ok := ExportIDOf(name); ok {
			t.Errorf("ExportIDOf(%q): ok; want not a part file's name", name)
		}
	}
}

// TestSharedRootReadDuringPublish: while machine a exports again and
// again, alternating between two homes (different sessions, 3 and 5
// records), OpenRoots loads the root over and over; every load it answers
// is one of a's exports whole: its usage rows all belong to its sessions
// rows (the same file, the same session id), 3 or 5 of them.
func TestSharedRootReadDuringPublish(t *testing.T) {
	retries, wait := openRetries, openRetryWait
	openRetries, openRetryWait = 100, 20*time.Millisecond
	t.Cleanup(func() { openRetries, openRetryWait = retries, wait })
	root, work := t.TempDir(), t.TempDir()
	homes := []string{machineHome(t, 1), machineHome(t, 3)}
	if err := exportMachine(t, root, work, "a", PartitionMonth, homes[0], nil); err != nil {
		t.Fatal(err)
	}
	rounds := 8
	if testing.Short() {
		rounds = 4
	}
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= rounds; i++ {
			if err := exportMachine(t, root, work, "a", PartitionMonth, homes[i%2], nil); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	loads := 0
	seen := map[int64]bool{}
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		db, err := OpenRoots(t.Context(), []string{root}, "")
		if err != nil {
			t.Fatalf("load %d: %v", loads, err)
		}
		var n, orphans int64
		queryOne(t, db, "SELECT count(*) FROM usage WHERE machine = 'a'", &n)
		queryOne(t, db, `SELECT count(*) FROM usage u LEFT JOIN sessions s USING (file_id)
			WHERE s.session_id IS DISTINCT FROM u.session_id`, &orphans)
		db.Close()
		if (n != 3 && n != 5) || orphans != 0 {
			t.Fatalf("load %d: machine a has %d usage rows, %d not in its sessions; want 3 or 5 of one export, 0", loads, n, orphans)
		}
		seen[n] = true
		loads++
	}
	t.Logf("%d loads during %d exports, saw %v", loads, rounds, seen)
	if len(seen) < 2 {
		t.Errorf("the loads saw only %v: none during a publish", seen)
	}
}
