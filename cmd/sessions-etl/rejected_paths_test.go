//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadablePathExit1: a path that cannot be read (here a FIFO named
// on the command line, which validate reports as error unreadable) makes
// report and export exit 1 and name it, like validate: report in its
// stderr note, also on an unchanged second run; export in its summary.
// Once a session file is there instead, report exits 0.
func TestUnreadablePathExit1(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	good := filepath.Join(reportCases, "c14-atomic-v4-billed-usage-kinds")
	fifo := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, t.TempDir(), "validate", good, fifo); code != ExitFailed || !strings.Contains(out, fifo) {
		t.Fatalf("validate: exit %d, want 1 naming %s:\n%s", code, fifo, out)
	}
	home := t.TempDir()
	for _, what := range []string{"first run", "unchanged re-run"} {
		code, out, errOut := runReportCLI(t, home, "report", "daily", "--tz", "UTC", good, fifo)
		if code != ExitOK {
			t.Errorf("report, %s: exit %d, want 0 (a report is a reader)\nstderr: %s", what, code, errOut)
		}
		if !strings.Contains(errOut, "1 file not used (1 unreadable) — see: sessions-etl validate\n") {
			t.Errorf("report, %s: stderr does not say a file was unreadable:\n%s", what, errOut)
		}
		if !strings.Contains(out, "Total") {
			t.Errorf("report, %s: no report of the readable file:\n%s", what, out)
		}
	}
	db := filepath.Join(t.TempDir(), "x.duckdb")
	code, out, errOut := runCLI(t, t.TempDir(), "export", "--duckdb", db, good, fifo)
	if code != ExitFailed || !strings.Contains(out, "  unreadable           "+fifo+": unreadable (not a regular file)") {
		t.Errorf("export: exit %d, want 1 naming %s:\n%s\n%s", code, fifo, out, errOut)
	}
	code, out, _ = runCLI(t, t.TempDir(), "query", "--duckdb", db, "--csv", "SELECT path, status FROM rejected_files")
	if code != ExitOK || out != "path,status\n"+fifo+",unreadable\n" {
		t.Errorf("rejected_files: exit %d, %q", code, out)
	}

	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(reportCases, "c02-final-record-without-newline", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, fifo, string(raw))
	if code, _, errOut := runReportCLI(t, home, "report", "daily", "--tz", "UTC", good, fifo); code != ExitOK || strings.Contains(errOut, "not used") {
		t.Errorf("report, readable again: exit %d, want 0\nstderr: %s", code, errOut)
	}
}
