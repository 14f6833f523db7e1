//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableDefaultRoots: default roots whose stat fails other than
// with "does not exist" (here ~/.pi is a link to itself, ELOOP, which root
// also gets; a ~/.pi of mode 000 gives EACCES to other users) are not
// missing: validate, migrate, import, export and report exit 1 and name
// them unreadable, "looked in" says "(unreadable)", and report keeps the
// usage an earlier run read from the files under them.
func TestUnreadableDefaultRoots(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	home := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(reportCases, "c14-atomic-v4-billed-usage-kinds", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pi := filepath.Join(home, ".pi")
	writeTestFile(t, filepath.Join(pi, "agent", "sessions", "--home-dev-p--", "s.jsonl"), string(raw))
	code, out, errOut := runReportCLI(t, home, "report", "daily", "--tz", "UTC", "--json")
	if code != ExitOK {
		t.Fatalf("readable: exit %d\n%s", code, errOut)
	}
	before := decodeReport(t, out).Totals.InputTokens
	if before == 0 {
		t.Fatal("readable: no usage")
	}

	away := filepath.Join(home, "pi-away")
	if err := os.Rename(pi, away); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pi, pi); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(pi, "agent", "sessions")
	if code, out, _ := runCLI(t, home, "validate"); code != ExitFailed || !strings.Contains(out, sessions+": error unreadable: stat: ") {
		t.Errorf("validate: exit %d, want 1 naming %s unreadable:\n%s", code, sessions, out)
	}
	for _, cmd := range [][]string{{"import", "--dry-run"}} {
		if code, out, errOut := runCLI(t, home, cmd...); code != ExitFailed || !strings.Contains(out+errOut, sessions) {
			t.Errorf("%v: exit %d, want 1 naming %s:\n%s%s", cmd, code, sessions, out, errOut)
		}
	}
	// migrate without PATH covers Atomic stores only (SPEC.md §2.3a): the
	// pi roots are not its business, readable or not.
	if code, out, errOut := runCLI(t, home, "migrate", "--dry-run"); strings.Contains(out+errOut, sessions) || !strings.Contains(errOut, "'sessions-etl import'") {
		t.Errorf("migrate: exit %d, want the pi roots left to import:\n%s%s", code, out, errOut)
	}
	db := filepath.Join(t.TempDir(), "x.duckdb")
	if code, out, _ := runCLI(t, home, "export", "--duckdb", db); code != ExitFailed || !strings.Contains(out, "unreadable           "+sessions) {
		t.Errorf("export: exit %d, want 1 naming %s:\n%s", code, sessions, out)
	}
	if code, out, _ := runCLI(t, home, "query", "--duckdb", db, "--csv", "SELECT path, status FROM rejected_files"); code != ExitOK ||
		out != "path,status\n"+filepath.Join(pi, "agent")+",unreadable\n"+sessions+",unreadable\n" {
		t.Errorf("export's rejected_files: exit %d, %q", code, out)
	}
	for _, what := range []string{"unreadable", "unreadable, unchanged re-run"} {
		code, out, errOut = runReportCLI(t, home, "report", "daily", "--tz", "UTC", "--json")
		if code != ExitOK || !strings.Contains(errOut, "2 files not used (2 unreadable) — see: sessions-etl validate\n") ||
			!strings.Contains(out, `"path": "`+sessions+`"`) ||
			!strings.Contains(errOut, "1 file under the paths that could not be read kept the usage an earlier run read") {
			t.Errorf("report, %s: exit %d, want 0 listing %s in files.rejected, and the file kept:\n%s", what, code, sessions, errOut)
		}
		if got := decodeReport(t, out).Totals.InputTokens; got != before {
			t.Errorf("report, %s: input tokens %d, want %d (the rows of the file under the unreadable root kept)", what, got, before)
		}
	}

	// A new report database: nothing found, and the roots are not "missing".
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	code, _, errOut = runReportCLI(t, home, "report", "daily", "--tz", "UTC")
	if code != ExitOK || !strings.Contains(errOut, "looked in: ~/.pi/agent/sessions (unreadable), ~/.pi/agent/*.jsonl (unreadable), ~/.atomic/agent/sessions (missing)") {
		t.Errorf("report, new database: exit %d, want 0 and the pi roots unreadable:\n%s", code, errOut)
	}

	// Readable again: the kept rows are those of the unchanged file.
	if err := os.Remove(pi); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(away, pi); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
	code, out, errOut = runReportCLI(t, home, "report", "daily", "--tz", "UTC", "--json")
	if got := decodeReport(t, out).Totals.InputTokens; code != ExitOK || got != before {
		t.Errorf("report, readable again: exit %d, input tokens %d; want 0, %d\n%s", code, got, before, errOut)
	}
}
