package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// teamSession is a v4 session file with one assistant record per
// timestamp (input 100 + i, output 10).
func teamSession(id string, stamps ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":4,"id":%q,"createdAt":%q,"cwd":"/w/p"}`+"\n", id, stamps[0])
	parent := "null"
	for i, ts := range stamps {
		eid := fmt.Sprintf("e%s%02d", id[:8], i)
		b.WriteString(assistantLine(eid, parent, ts, int64(100+i), 10) + "\n")
		parent = `"` + eid + `"`
	}
	return b.String()
}

// machineHome writes a home for machine k: session k with one record in
// March 2026 and k+1 in April 2026 (k+2 records in all).
func machineHome(t *testing.T, k int) string {
	home := t.TempDir()
	stamps := []string{"2026-03-15T12:00:00.000Z"}
	for i := 0; i <= k; i++ {
		stamps = append(stamps, fmt.Sprintf("2026-04-%02dT08:00:00.000Z", i+1))
	}
	writeFile(t, filepath.Join(home, "s.jsonl"), teamSession(fmt.Sprintf("%08d-0000-4000-8000-000000000000", k), stamps...))
	return home
}

// exportMachine exports home as machine m into the shared root.
func exportMachine(t *testing.T, root, work, m, by string, home string, tweak func(*Options)) error {
	t.Helper()
	rts, err := pathRoots(home)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Roots: rts, Workers: 2, ParquetDir: root, Machine: m, PartitionBy: by, WorkDir: filepath.Join(work, m)}
	if tweak != nil {
		tweak(&opts)
	}
	_, err = Run(context.Background(), opts)
	return err
}

// rawDuckDB is duckdb-go's own connector, not this package's: what a data
// person's DuckDB does with the root.
func rawDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// machineRecords reads the usage dataset of the root with hive
// partitioning: records per machine and month.
func machineRecords(t *testing.T, root string) []string {
	t.Helper()
	db := rawDuckDB(t)
	return queryStrings(t, db, "SELECT machine, month, count(*), sum(input) FROM read_parquet('"+
		filepath.Join(root, "usage", "**", "*.parquet")+"', hive_partitioning=true) GROUP BY ALL ORDER BY ALL")
}

// wantRecords is machineRecords' answer for machines m0…m(n-1) of
// machineHome, each given as (machine name, k).
func wantRecords(ms map[string]int) []string {
	var out []string
	for m, k := range ms {
		out = append(out, fmt.Sprintf("%s|2026-03|1|100", m))
		in := 0
		for i := 1; i <= k+1; i++ {
			in += 100 + i
		}
		out = append(out, fmt.Sprintf("%s|2026-04|%d|%d", m, k+1, in))
	}
	sort.Strings(out)
	return out
}

func checkRoot(t *testing.T, root string, ms map[string]int) {
	t.Helper()
	got, want := machineRecords(t, root), wantRecords(ms)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("usage per machine and month:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for m := range ms {
		parts, _ := filepath.Glob(filepath.Join(root, "usage", "machine="+m, "month=2026-04", "part-*.parquet"))
		if len(parts) == 0 {
			t.Errorf("no usage/machine=%s/month=2026-04/part-*.parquet", m)
		}
		for _, tb := range Tables {
			if fi, err := os.Stat(filepath.Join(root, tb.Name, "machine="+m)); err != nil || !fi.IsDir() {
				t.Errorf("%s/machine=%s: %v", tb.Name, m, err)
			}
		}
	}
	// Every table reads with hive partitioning; the files do not repeat
	// the partition columns.
	db := rawDuckDB(t)
	for _, tb := range Tables {
		var n int64
		queryOne(t, db, "SELECT count(DISTINCT machine) FROM read_parquet('"+filepath.Join(root, tb.Name, "**", "*.parquet")+"', hive_partitioning=true, union_by_name=true)", &n)
		if tb != IngestIssuesTable && tb != ContentBlocksTable && n != int64(len(ms)) {
			t.Errorf("%s: %d machines; want %d", tb.Name, n, len(ms))
		}
	}
	var sessions int64
	queryOne(t, db, "SELECT count(*) FROM read_parquet('"+filepath.Join(root, "sessions", "**", "*.parquet")+"', hive_partitioning=true)", &sessions)
	if sessions != int64(len(ms)) {
		t.Errorf("%d sessions; want %d", sessions, len(ms))
	}
}

// TestSharedRootMachines: two and five machines export one after another
// into one root partitioned by month; the root reads with DuckDB's hive
// partitioning as the union of their records.
func TestSharedRootMachines(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	for _, n := range []int{2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			root, work := t.TempDir(), t.TempDir()
			ms := map[string]int{}
			for k := range n {
				m := fmt.Sprintf("m%d", k)
				ms[m] = k
				if err := exportMachine(t, root, work, m, PartitionMonth, machineHome(t, k), nil); err != nil {
					t.Fatal(err)
				}
			}
			checkRoot(t, root, ms)
		})
	}
}

// TestSharedRootConcurrent: five machines export into one root at once,
// and one of them twice at once (its lock serialises the two runs).
func TestSharedRootConcurrent(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	root, work := t.TempDir(), t.TempDir()
	ms := map[string]int{}
	homes := map[string]string{}
	for k := range 5 {
		m := fmt.Sprintf("m%d", k)
		ms[m], homes[m] = k, machineHome(t, k)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for m, home := range homes {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- exportMachine(t, root, work, m, PartitionMonth, home, nil) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); errs <- exportMachine(t, root, work, "m2", PartitionMonth, homes["m2"], nil) }()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkRoot(t, root, ms)
}

// TestSharedRootReexport: a machine's re-export replaces its partition
// (a month that no longer has records disappears) and leaves the other
// machines' alone; a run that fails before the swap (a killed run) leaves
// the old partition whole and its staging directory to the next run.
func TestSharedRootReexport(t *testing.T) {
	root, work := t.TempDir(), t.TempDir()
	if err := exportMachine(t, root, work, "a", PartitionMonth, machineHome(t, 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := exportMachine(t, root, work, "b", PartitionMonth, machineHome(t, 1), nil); err != nil {
		t.Fatal(err)
	}
	checkRoot(t, root, map[string]int{"a": 2, "b": 1})

	// a's home now holds only April records of another session.
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "n.jsonl"), teamSession("90000000-0000-4000-8000-000000000000", "2026-04-20T00:00:00.000Z"))
	if err := exportMachine(t, root, work, "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"a|2026-04|1|100", "b|2026-03|1|100", "b|2026-04|2|203"}
	if got := machineRecords(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after a's re-export: %v; want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "usage", "machine=a", "month=2026-03")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a's March partition is still there (%v)", err)
	}

	// A run of a that fails while it writes its partitions.
	writeFile(t, filepath.Join(home, "o.jsonl"), teamSession("91000000-0000-4000-8000-000000000000", "2026-05-01T00:00:00.000Z"))
	failed := errors.New("killed")
	publishFault = func(table string) error {
		if table == TableUsage {
			// What a killed run leaves: a staging directory.
			os.MkdirAll(filepath.Join(root, StagingDir, "machine=a-left"), 0o755)
			return failed
		}
		return nil
	}
	err := exportMachine(t, root, work, "a", PartitionMonth, home, nil)
	publishFault = nil
	if !errors.Is(err, failed) {
		t.Fatalf("export with a fault: %v; want the fault", err)
	}
	if got := machineRecords(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after a failed run: %v; want the old partitions %v", got, want)
	}
	if err := exportMachine(t, root, work, "a", PartitionMonth, home, nil); err != nil {
		t.Fatal(err)
	}
	want = []string{"a|2026-04|1|100", "a|2026-05|1|100", "b|2026-03|1|100", "b|2026-04|2|203"}
	if got := machineRecords(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after the next run: %v; want %v", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(root, StagingDir, "machine=a-*")); len(left) != 0 {
		t.Errorf("staging left over: %v", left)
	}
}

// TestSharedRootPartitionBy: day and source partitions, and the plain
// machine partition.
func TestSharedRootPartitionBy(t *testing.T) {
	for by, want := range map[string][]string{
		PartitionDay:     {"day=2026-03-15", "day=2026-04-01", "day=2026-04-02"},
		PartitionSource:  {"source=custom"},
		PartitionMachine: {"part-*-0.parquet"}, // part-<export id>-0.parquet
	} {
		t.Run(by, func(t *testing.T) {
			root := t.TempDir()
			if err := exportMachine(t, root, t.TempDir(), "a", by, machineHome(t, 1), nil); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(filepath.Join(root, "usage", "machine=a"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, e := range ents {
				if i < len(want) {
					if ok, _ := filepath.Match(want[i], e.Name()); ok {
						got = append(got, want[i])
						continue
					}
				}
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("usage/machine=a holds %v; want %v", got, want)
			}
			var n, in int64
			queryOne(t, rawDuckDB(t), "SELECT count(*), sum(input) FROM read_parquet('"+filepath.Join(root, "usage", "**", "*.parquet")+"', hive_partitioning=true) WHERE machine = 'a'", &n, &in)
			if n != 3 || in != 100+101+102 {
				t.Errorf("%d records, input %d; want 3, 303", n, in)
			}
		})
	}
}

// session writes a v4 session file: header id and createdAt, then the
// records given as (entry id, timestamp, input).
type rec struct {
	id, ts string
	in     int64
}

func sessionFile(id, created string, recs ...rec) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":4,"id":%q,"createdAt":%q,"cwd":"/w/team"}`+"\n", id, created)
	parent := "null"
	for _, r := range recs {
		b.WriteString(assistantLine(r.id, parent, r.ts, r.in, 1) + "\n")
		parent = `"` + r.id + `"`
	}
	return b.String()
}

// TestSharedRootViews: the root's views.sql, run by DuckDB itself (not by
// this package's queries), counts a record held by two machines once: a
// session synced to both, a fork continued on the other machine; a session
// id reused on two machines for different entries counts both. Days are
// UTC whatever the session's zone.
func TestSharedRootViews(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	const (
		s1 = "10000000-0000-4000-8000-000000000001"
		s2 = "20000000-0000-4000-8000-000000000002"
		s3 = "30000000-0000-4000-8000-000000000003"
		s4 = "40000000-0000-4000-8000-000000000004"
	)
	e1 := rec{"e1", "2026-03-01T23:30:00.000Z", 1000} // 2026-03-02 00:30 in Paris
	e2 := rec{"e2", "2026-03-02T10:00:00.000Z", 2000}
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, "s1.jsonl"), sessionFile(s1, "2026-03-01T23:00:00.000Z", e1, e2))
	writeFile(t, filepath.Join(a, "s3.jsonl"), sessionFile(s3, "2026-03-03T00:00:00.000Z", rec{"x1", "2026-03-03T01:00:00.000Z", 30000}))
	// b: the synced copy of s1, a fork of s1 continued on b, s2, and s3's id
	// with a different entry.
	writeFile(t, filepath.Join(b, "s1.jsonl"), sessionFile(s1, "2026-03-01T23:00:00.000Z", e1, e2))
	writeFile(t, filepath.Join(b, "s4.jsonl"), sessionFile(s4, "2026-03-05T00:00:00.000Z", e1, e2, rec{"e3", "2026-03-05T01:00:00.000Z", 400000}))
	writeFile(t, filepath.Join(b, "s2.jsonl"), sessionFile(s2, "2026-03-04T00:00:00.000Z",
		rec{"y1", "2026-03-04T01:00:00.000Z", 5000000}, rec{"y2", "2026-03-04T02:00:00.000Z", 60000000}))
	writeFile(t, filepath.Join(b, "s3.jsonl"), sessionFile(s3, "2026-03-03T00:00:00.000Z", rec{"x2", "2026-03-03T02:00:00.000Z", 700000000}))

	root, work := t.TempDir(), t.TempDir()
	for m, home := range map[string]string{"a": a, "b": b} {
		if err := exportMachine(t, root, work, m, PartitionMonth, home, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The same machines in two roots of their own.
	rootA, rootB := t.TempDir(), t.TempDir()
	if err := exportMachine(t, rootA, t.TempDir(), "a", PartitionDay, a, nil); err != nil {
		t.Fatal(err)
	}
	if err := exportMachine(t, rootB, t.TempDir(), "b", PartitionDay, b, nil); err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{{root}, {rootA, rootB}} {
		db, err := OpenRoots(t.Context(), roots, "")
		if err != nil {
			t.Fatal(err)
		}
		var n, in, files int64
		queryOne(t, db, "SELECT count(*), sum(input) FROM counted_usage", &n, &in)
		queryOne(t, db, "SELECT count(DISTINCT file_id) FROM usage", &files)
		if n != 7 || in != 765433000 || files != 6 {
			t.Errorf("OpenRoots(%d roots): counted_usage %d records, input %d, %d files; want 7, 765433000, 6", len(roots), n, in, files)
		}
		got := queryStrings(t, db, "SELECT machine, count(*) FROM counted_usage GROUP BY ALL ORDER BY ALL")
		if strings.Join(got, ",") != "a|3,b|4" {
			t.Errorf("OpenRoots(%d roots): counted per machine %v; want a|3,b|4", len(roots), got)
		}
		db.Close()
	}
	views, err := os.ReadFile(filepath.Join(root, ViewsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{"UTC", "Europe/Paris"} {
		db := openZone(t, "", zone)
		if _, err := db.Exec("SET file_search_path = '" + root + "'"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(views)); err != nil {
			t.Fatalf("views.sql: %v", err)
		}
		var n, in int64
		queryOne(t, db, "SELECT count(*), sum(input) FROM counted_usage", &n, &in)
		if n != 7 || in != 1000+2000+30000+400000+5000000+60000000+700000000 {
			t.Errorf("%s: counted_usage %d records, input %d; want 7, 765433000", zone, n, in)
		}
		got := queryStrings(t, db, "SELECT machine, records, total_tokens FROM machine_usage ORDER BY machine")
		want := []string{"a|3|33003", "b|4|765400004"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: machine_usage %v; want %v", zone, got, want)
		}
		got = queryStrings(t, db, "SELECT CAST(day AS VARCHAR), records FROM daily_usage ORDER BY day")
		want = []string{"2026-03-01|1", "2026-03-02|1", "2026-03-03|2", "2026-03-04|2", "2026-03-05|1"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: daily_usage %v; want %v", zone, got, want)
		}
		var project string
		queryOne(t, db, "SELECT project || '|' || records FROM project_usage", &project)
		if project != "team|7" {
			t.Errorf("%s: project_usage %s; want team|7", zone, project)
		}
	}
}
