package export

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/synth"
)

// treeSums is every regular file under dir (relative path → sha256 and
// mode), for byte-identity checks.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sums[rel] = fmt.Sprintf("%x %v", sha256.Sum256(b), fi.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// machineSums is treeSums of machine m's directory of every table.
func machineSums(t *testing.T, root, m string) map[string]string {
	t.Helper()
	all := map[string]string{}
	for _, tb := range Tables {
		for rel, s := range treeSums(t, filepath.Join(root, tb.Name, "machine="+m)) {
			all[filepath.Join(tb.Name, rel)] = s
		}
	}
	return all
}

// rootState is what a reader of a shared root sees of one machine: per
// table, its partition directories, row count and (usage) token sums, read
// by DuckDB from the Parquet files with hive partitioning.
type rootState struct {
	tables  map[string]string // table → "partitions|rows[|sums]"
	counted synth.Tokens      // m's counted usage
}

func readRootState(t *testing.T, db *sql.DB, root, m string) (rootState, error) {
	t.Helper()
	st := rootState{tables: map[string]string{}}
	for _, tb := range Tables {
		glob := strings.ReplaceAll(filepath.Join(root, tb.Name, "**", "*.parquet"), "'", "''")
		src := "read_parquet('" + glob + "', hive_partitioning = true, union_by_name = true)"
		var rows int64
		if err := db.QueryRow("SELECT count(*) FROM " + src + " WHERE machine = '" + m + "'").Scan(&rows); err != nil {
			return st, fmt.Errorf("%s: %w", tb.Name, err)
		}
		ents, err := os.ReadDir(filepath.Join(root, tb.Name, "machine="+m))
		if err != nil {
			return st, err
		}
		var parts []string
		for _, e := range ents {
			parts = append(parts, e.Name())
		}
		sort.Strings(parts)
		s := fmt.Sprintf("%s|%d", strings.Join(parts, ","), rows)
		if tb.Name == TableUsage {
			var c synth.Tokens
			q := "SELECT count(*), coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0), coalesce(sum(total_tokens), 0) FROM " +
				src + " WHERE machine = '" + m + "' AND counted"
			if err := db.QueryRow(q).Scan(&c.Records, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.TotalTokens); err != nil {
				return st, fmt.Errorf("%s: %w", tb.Name, err)
			}
			st.counted = c
			s += fmt.Sprintf("|%+v", c)
		}
		st.tables[tb.Name] = s
	}
	return st, nil
}

// TestSharedRootExportKilled kills `sessions-etl export --parquet ROOT
// --partition-by month --machine m1` (a real process) with SIGKILL at
// random moments: uniformly over a run, and as often within its publish
// phase (after its staging directory appears). Machine m1 had exported an
// older home before, machine m2 another one. After every kill the root is
// readable by DuckDB's read_parquet over every table with hive
// partitioning; m2's directories are byte-identical; each of m1's tables is
// either the previous complete export or the new complete one (its
// partitions, row count and, for usage, its counted totals, which equal
// the old or the new home's synth manifest), never a mix. The tables are
// swapped one by one, so they may be from both exports: report --from's
// loading (OpenRoots) then refuses (ErrMixedExports, naming m1), and
// otherwise answers from the old or the new export of m1 whole (its
// counted usage, joined with its sessions, is the old or the new home's).
// A final uninterrupted run succeeds, publishes the new export and leaves
// nothing in ROOT/.staging.
//
// Checked against a publish that is not atomic (each table's COPY written
// in place into ROOT/<table>/machine=m1 instead of staged and swapped): the
// full test fails at its first kill inside the publish phase (a reader
// finds a truncated part file, or a table with some months only); -short
// (6 kills) failed with each of seeds 1, 2, 4 and 5 (with 4 kills, 1 seed
// of 3), and again with its homes halved (30, 80 and 15 sessions).
func TestSharedRootExportKilled(t *testing.T) {
	seed := testkit.Seed(t)
	rng := rand.New(rand.NewPCG(15, seed)) // the kill times; -seed replays them
	retries := openRetries
	openRetries = 0 // a killed export's tables stay mixed: no wait
	t.Cleanup(func() { openRetries = retries })
	work := t.TempDir()
	bin := testkit.BuildCLI(t)
	gen := func(name string, sessions int, seed uint64) (string, *synth.Manifest) {
		home := filepath.Join(work, name)
		man, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: sessions, Seed: seed, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return home, man
	}
	// Under -short (the inner loop) the homes are half the size: a run
	// is shorter, its publish phase as long (the same months and tables).
	size := 2
	if testing.Short() {
		size = 1
	}
	oldHome, oldMan := gen("old", 30*size, 31)
	newHome, newMan := gen("new", 80*size, 32)
	m2Home, _ := gen("m2", 15*size, 33)
	if oldMan.Usage.Tokens == newMan.Usage.Tokens {
		t.Fatal("the two homes have the same totals: the test cannot tell them apart")
	}

	command := func(home, root, workDir, machine string) *exec.Cmd {
		cmd := exec.Command(bin, "export", home, "--parquet", root, "--partition-by", PartitionMonth,
			"--machine", machine, "--work-dir", workDir, "--workers", "2", "--quiet")
		cmd.Env = append(os.Environ(), "HOME="+work, "XDG_STATE_HOME="+filepath.Join(work, "state"),
			"XDG_CACHE_HOME="+filepath.Join(work, "cache"))
		return cmd
	}
	run := func(cmd *exec.Cmd) {
		t.Helper()
		if out, err := cmd.CombinedOutput(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 { // 1: the home holds damaged files
				t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
			}
		}
	}
	db := openZone(t, "", "UTC")

	// The root before: m2, then m1's older home.
	root := filepath.Join(work, "root")
	wd := filepath.Join(work, "wd")
	run(command(m2Home, root, filepath.Join(wd, "m2"), "m2"))
	run(command(oldHome, root, filepath.Join(wd, "m1"), "m1"))
	m2Sums := machineSums(t, root, "m2")
	oldState, err := readRootState(t, db, root, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if oldState.counted != oldMan.Usage.Tokens {
		t.Fatalf("m1's first export counts %+v; want the manifest's %+v", oldState.counted, oldMan.Usage.Tokens)
	}
	pristine := filepath.Join(work, "pristine")
	testkit.CopyTree(t, work+"/root", pristine+"/root")
	testkit.CopyTree(t, wd, pristine+"/wd")
	restore := func() {
		t.Helper()
		for _, d := range []string{root, wd} {
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
		}
		testkit.CopyTree(t, pristine+"/root", root)
		testkit.CopyTree(t, pristine+"/wd", wd)
	}

	// The new export, complete, timed: its publish phase begins when its
	// staging directory appears.
	staged := func() bool {
		left, _ := filepath.Glob(filepath.Join(root, StagingDir, "machine=m1-*"))
		return len(left) > 0
	}
	cmd := command(newHome, root, filepath.Join(wd, "m1"), "m1")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var publishAt time.Duration
	for publishAt == 0 {
		select {
		case <-done:
			publishAt = time.Since(start)
			done <- nil
		case <-time.After(2 * time.Millisecond):
			if staged() {
				publishAt = time.Since(start)
			}
		}
	}
	<-done
	full := time.Since(start)
	newState, err := readRootState(t, db, root, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if newState.counted != newMan.Usage.Tokens {
		t.Fatalf("m1's new export counts %+v; want the manifest's %+v", newState.counted, newMan.Usage.Tokens)
	}
	for _, tb := range Tables {
		if oldState.tables[tb.Name] == newState.tables[tb.Name] {
			t.Fatalf("table %s reads the same in both exports (%s): the test cannot tell them apart", tb.Name, newState.tables[tb.Name])
		}
	}
	t.Logf("kill seed %d; a complete run takes %v, its publish phase from %v", seed, full, publishAt)
	restore()

	// Each run starts from the old root; a run that got to the end is
	// undone by restoring it.
	minKills, maxKills, minPartial := 30, 100, 15
	if testing.Short() {
		minKills, maxKills, minPartial = 6, 15, 3
	}
	killed, partial, inPublish := 0, 0, 0
	for i := 0; i < maxKills && (i < minKills || partial < minPartial); i++ {
		cmd := command(newHome, root, filepath.Join(wd, "m1"), "m1")
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var when string
		if i%2 == 0 {
			d := time.Duration(rng.Int64N(int64(full) + 1))
			when = fmt.Sprintf("at %v", d)
			time.Sleep(d)
		} else {
			// Within the publish phase: wait for the staging directory.
			deadline := time.Now().Add(3 * full)
			for !staged() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			d := time.Duration(rng.Int64N(int64(full-publishAt) + 1))
			when = fmt.Sprintf("%v after staging", d)
			time.Sleep(d)
		}
		if testkit.Kill(t, cmd) {
			killed++
		}
		got, err := readRootState(t, db, root, "m1")
		if err != nil {
			t.Fatalf("after kill %d (%s): the root is not readable: %v", i, when, err)
		}
		nNew := 0
		var mixed []string
		for _, tb := range Tables {
			switch got.tables[tb.Name] {
			case newState.tables[tb.Name]:
				nNew++
			case oldState.tables[tb.Name]:
			default:
				mixed = append(mixed, fmt.Sprintf("%s: %s (old %s, new %s)", tb.Name, got.tables[tb.Name], oldState.tables[tb.Name], newState.tables[tb.Name]))
			}
		}
		if len(mixed) > 0 {
			t.Fatalf("after kill %d (%s): m1's tables are neither the old nor the new export:\n%s", i, when, strings.Join(mixed, "\n"))
		}
		if got.counted != oldMan.Usage.Tokens && got.counted != newMan.Usage.Tokens {
			t.Fatalf("after kill %d (%s): m1 counts %+v; want the old home's %+v or the new one's %+v", i, when, got.counted, oldMan.Usage.Tokens, newMan.Usage.Tokens)
		}
		if d := diffSums(m2Sums, machineSums(t, root, "m2")); d != "" {
			t.Fatalf("after kill %d (%s): m2's partition changed:\n%s", i, when, d)
		}
		// report --from (OpenRoots) answers only from one export of m1:
		// the old or the new one whole, else it refuses.
		fromDB, ferr := OpenRoots(t.Context(), []string{root}, "")
		switch {
		case nNew == 0 || nNew == len(Tables):
			if ferr != nil {
				t.Fatalf("after kill %d (%s): OpenRoots: %v", i, when, ferr)
			}
			want := oldMan.Usage.Tokens
			if nNew > 0 {
				want = newMan.Usage.Tokens
			}
			var c synth.Tokens
			queryOne(t, fromDB, "SELECT count(*), coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0), coalesce(sum(total_tokens), 0) FROM usage u JOIN sessions s USING (file_id) WHERE u.machine = 'm1' AND u.counted",
				&c.Records, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.TotalTokens)
			fromDB.Close()
			if c != want {
				t.Fatalf("after kill %d (%s): OpenRoots counts %+v for m1; want %+v", i, when, c, want)
			}
		case !errors.Is(ferr, ErrMixedExports) || !strings.Contains(ferr.Error(), "machine m1"):
			if ferr == nil {
				fromDB.Close()
			}
			t.Fatalf("after kill %d (%s): %d of %d tables new, OpenRoots: %v; want ErrMixedExports naming m1", i, when, nNew, len(Tables), ferr)
		}
		t.Logf("kill %2d (%s): %d of %d tables new", i, when, nNew, len(Tables))
		if nNew < len(Tables) {
			partial++
		}
		if nNew > 0 {
			inPublish++
		}
		if nNew == len(Tables) {
			restore()
		}
	}
	t.Logf("%d runs killed, %d with work left, %d after a table was swapped", killed, partial, inPublish)
	if partial < minPartial {
		t.Errorf("only %d kills interrupted an export with work left", partial)
	}
	if killed < minKills*3/4 {
		t.Fatalf("only %d of %d runs were killed while running (a run takes %v)", killed, minKills, full)
	}

	// A final run completes the job and removes what the killed ones left.
	run(command(newHome, root, filepath.Join(wd, "m1"), "m1"))
	got, err := readRootState(t, db, root, "m1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables {
		if got.tables[tb.Name] != newState.tables[tb.Name] {
			t.Errorf("after the final run, %s: %s; want %s", tb.Name, got.tables[tb.Name], newState.tables[tb.Name])
		}
	}
	if got.counted != newMan.Usage.Tokens {
		t.Errorf("after the final run m1 counts %+v; want the manifest's %+v", got.counted, newMan.Usage.Tokens)
	}
	if d := diffSums(m2Sums, machineSums(t, root, "m2")); d != "" {
		t.Errorf("after the final run m2's partition changed:\n%s", d)
	}
	if left, err := os.ReadDir(filepath.Join(root, StagingDir)); err != nil || len(left) > 0 {
		t.Errorf("staging after the final run: %v %v", left, err)
	}
}

func diffSums(want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if got[k] != v {
			d = append(d, fmt.Sprintf("%s: %q, was %q", k, got[k], v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, k+": new")
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}
