package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/export"
)

func c14Home(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	b, err := os.ReadFile("../../testdata/cases/c14-atomic-v4-billed-usage-kinds/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	writeSession(t, filepath.Join(home, ".atomic", "agent", "sessions", "--w--", "s.jsonl"), string(b))
	return home
}

// TestReportRebuildsInvalidCache (finding 4): a report cache that is not a
// DuckDB database (the 0-byte file a full disk left) is rebuilt, with a
// note, instead of failing every later report.
func TestReportRebuildsInvalidCache(t *testing.T) {
	home := c14Home(t)
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	db, err := export.DefaultDBPath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReportCLI(t, home, "report", "daily", "--tz", "UTC", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "note: the report cache "+db+" was not a valid DuckDB database") {
		t.Errorf("no note on stderr:\n%s", errOut)
	}
	if got := decodeReport(t, out).Totals.InputTokens; got == 0 {
		t.Errorf("no usage after the rebuild")
	}
	if ok, err := export.IsDatabaseFile(db); !ok || err != nil {
		t.Errorf("cache after the rebuild: %v %v", ok, err)
	}
}

// TestExportFullDiskLeavesNoBrokenDatabase (finding 4): on a file system
// that is full while the DuckDB file is created, export fails and leaves
// no file at the database path (nor a temporary one); once there is space,
// the next export succeeds. A real full tmpfs: needs root (CI runs as root).
func TestExportFullDiskLeavesNoBrokenDatabase(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("not root: cannot mount a small tmpfs; checking a database created on a normal disk instead")
		db := filepath.Join(t.TempDir(), "x.duckdb")
		if code, out, errOut := runCLI(t, c14Home(t), "export", "--duckdb", db); code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if ok, err := export.IsDatabaseFile(db); !ok {
			t.Fatalf("not a database: %v", err)
		}
		return
	}
	for _, size := range []string{"4k", "48k"} {
		t.Run(size, func(t *testing.T) {
			mnt := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
				t.Fatalf("mount tmpfs: %v %s", err, out)
			}
			defer exec.Command("umount", mnt).Run()
			home := c14Home(t)
			db := filepath.Join(mnt, "x.duckdb")
			code, out, errOut := runCLI(t, home, "export", "--duckdb", db)
			if code == ExitOK {
				t.Fatalf("export on a %s file system succeeded?\n%s%s", size, out, errOut)
			}
			ents, _ := os.ReadDir(mnt)
			for _, e := range ents {
				switch {
				case strings.HasPrefix(e.Name(), ".sessions-etl-"):
					t.Errorf("temporary file left: %s", e.Name())
				case e.Name() == "x.duckdb":
					if ok, err := export.IsDatabaseFile(db); !ok {
						t.Errorf("an invalid database left at %s (%v)", db, err)
					}
				}
			}
			if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
				t.Fatalf("remount: %v %s", err, out)
			}
			code, out, errOut = runCLI(t, home, "export", "--duckdb", db)
			if code != ExitOK {
				t.Fatalf("export with space again: exit %d\n%s%s", code, out, errOut)
			}
			if ok, err := export.IsDatabaseFile(db); !ok {
				t.Errorf("not a database: %v", err)
			}
		})
	}
}
