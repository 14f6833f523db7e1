package export

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenRootsCached: the cache answers as the roots do, is used again
// while the root is unchanged (the second open is the read-only cache
// file), and is rebuilt when a machine is added or re-exported.
func TestOpenRootsCached(t *testing.T) {
	ctx := context.Background()
	root, work, cache := t.TempDir(), t.TempDir(), t.TempDir()
	// machineHome(k) holds k+2 records with input 100 + 100+1 + … + 100+k+1.
	records := func() (n, in int64) {
		t.Helper()
		db, err := OpenRootsCached(ctx, []string{root}, cache, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		queryOne(t, db, "SELECT count(*), sum(input) FROM usage WHERE counted", &n, &in)
		return n, in
	}
	check := func(step string, wantN, wantIn int64) {
		t.Helper()
		if n, in := records(); n != wantN || in != wantIn {
			t.Errorf("%s: %d records, input %d; want %d, %d", step, n, in, wantN, wantIn)
		}
	}
	if err := exportMachine(t, root, work, "a", PartitionMonth, machineHome(t, 1), nil); err != nil {
		t.Fatal(err)
	}
	check("machine a", 3, 100+101+102)
	caches, _ := filepath.Glob(filepath.Join(cache, "from-*.duckdb"))
	if len(caches) != 1 {
		t.Fatalf("cache files %v; want one", caches)
	}
	st1, err := os.Stat(caches[0])
	if err != nil {
		t.Fatal(err)
	}
	// Unchanged root: the cache file itself, read-only.
	db, err := OpenRootsCached(ctx, []string{root}, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE probe (x INTEGER)"); err == nil {
		t.Error("the second open of an unchanged root is writable: not the cache")
	}
	db.Close()
	if st2, err := os.Stat(caches[0]); err != nil || !os.SameFile(st1, st2) || !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("the cache was rewritten for an unchanged root")
	}
	if err := exportMachine(t, root, work, "b", PartitionMonth, machineHome(t, 2), nil); err != nil {
		t.Fatal(err)
	}
	check("machines a, b", 3+4, 100+101+102+100+101+102+103)
	// Machine a re-exported from another home.
	if err := exportMachine(t, root, work, "a", PartitionMonth, machineHome(t, 3), nil); err != nil {
		t.Fatal(err)
	}
	check("a re-exported", 5+4, 100+101+102+103+104+100+101+102+103)
	if left, _ := filepath.Glob(filepath.Join(cache, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left in the cache directory: %v", left)
	}
	// No cache directory: the roots are read into memory.
	db, err = OpenRootsCached(ctx, []string{root}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	queryOne(t, db, "SELECT count(*) FROM usage WHERE counted", &n)
	db.Close()
	if n != 9 {
		t.Errorf("in memory: %d records; want 9", n)
	}
}
