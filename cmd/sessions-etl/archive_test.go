package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestC28HomeArchive is case c28: a pi home as home/, home.tar.gz and
// home.zip. validate over each archive gives the members' verdicts under
// ARCHIVE!/inner/path (exit 0); report daily and session over each of the
// three give the same totals, the fork's copies counted once; migrate
// (and --relayout) refuse an archive with exit 2, leaving it unchanged.
func TestC28HomeArchive(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	caseDir, err := filepath.Abs(filepath.Join(reportCases, "c28-home-archive"))
	if err != nil {
		t.Fatal(err)
	}
	type totals struct {
		Records   int64   `json:"records"`
		Input     int64   `json:"input"`
		Output    int64   `json:"output"`
		CacheRead int64   `json:"cache_read"`
		Cost      float64 `json:"cost"`
		Sessions  int     `json:"sessions"`
	}
	var exp struct {
		ValidateArchive map[string]struct {
			Files map[string]struct {
				Status        string `json:"status"`
				FormatVersion int    `json:"format_version"`
			} `json:"files"`
			Exit int `json:"exit"`
		} `json:"validate_archive"`
		ReportArchive map[string]json.RawMessage `json:"report_archive"`
		Migrate       map[string]struct {
			Exit   int    `json:"exit"`
			SHA256 string `json:"archive_sha256_unchanged"`
		} `json:"migrate_archive"`
	}
	raw, err := os.ReadFile(filepath.Join(caseDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.ValidateArchive) != 2 {
		t.Fatal("expected.json: two archives")
	}
	// The archives are named as given on the command line (relative,
	// from the case directory): ARCHIVE!/inner/path keeps ARCHIVE so, in
	// --json, in the text output and in export's files.path.
	t.Chdir(caseDir)
	for name, want := range exp.ValidateArchive {
		code, out, errOut := runEnvCLI(t, t.TempDir(), nil, "validate", "--json", name)
		if code != want.Exit {
			t.Errorf("validate %s: exit %d, want %d\n%s", name, code, want.Exit, errOut)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v jsonFileVerdict
			if json.Unmarshal([]byte(line), &v) == nil && v.Path != "" {
				got[v.Path] = v.Status
				if v.FormatVersion == nil || *v.FormatVersion != 3 || v.Source != "pi" {
					t.Errorf("validate %s: %s: version %v source %s", name, v.Path, v.FormatVersion, v.Source)
				}
			}
		}
		if len(got) != len(want.Files) {
			t.Errorf("validate %s: %v", name, got)
		}
		for p, w := range want.Files {
			if got[p] != w.Status {
				t.Errorf("validate %s: %s = %q, want %q", name, p, got[p], w.Status)
			}
		}
		// The same archive given by an absolute path is shown so.
		abs := filepath.Join(caseDir, name)
		_, out, _ = runEnvCLI(t, t.TempDir(), nil, "validate", "--json", abs)
		for p := range want.Files {
			if !strings.Contains(out, `"path":"`+abs+strings.TrimPrefix(p, name)+`"`) {
				t.Errorf("validate %s: no verdict for %s", abs, abs+strings.TrimPrefix(p, name))
			}
		}
		// Text: a damaged copy (and its member, for a tar.gz: a zip cut
		// short has no member list) is named as given.
		bad := "bad-" + name
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, bad), truncatedCopy(t, name), 0o600); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(caseDir, filepath.Join(work, bad))
		if err != nil {
			t.Fatal(err)
		}
		_, out, errOut = runEnvCLI(t, t.TempDir(), nil, "validate", rel)
		named := "\n  " + rel
		if strings.HasSuffix(name, ".tar.gz") {
			named += "!/.pi/"
		}
		if !strings.Contains(out, named) || strings.Contains(out, "\n  "+work) {
			t.Errorf("validate %s (text): the problem is not named %q:\n%s%s", rel, named, out, errOut)
		}

		// export's files.path.
		db := filepath.Join(t.TempDir(), "x.duckdb")
		if code, _, errOut := runEnvCLI(t, t.TempDir(), nil, "export", "--duckdb", db, name); code != ExitOK {
			t.Fatalf("export %s: exit %d\n%s", name, code, errOut)
		}
		code, out, errOut = runEnvCLI(t, t.TempDir(), nil, "query", "--duckdb", db, "--csv", "SELECT path FROM files ORDER BY path")
		var paths []string
		for p := range want.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		if code != ExitOK || strings.TrimSpace(out) != "path\n"+strings.Join(paths, "\n") {
			t.Errorf("export %s: files.path\n%s%s\nwant %v", name, out, errOut, paths)
		}
	}

	var perSession map[string]struct {
		Records int64   `json:"records"`
		Input   int64   `json:"input"`
		Output  int64   `json:"output"`
		Cost    float64 `json:"cost"`
	}
	if err := json.Unmarshal(exp.ReportArchive["per_session"], &perSession); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"home", "home.tar.gz", "home.zip"} {
		var want totals
		if err := json.Unmarshal(exp.ReportArchive[name], &want); err != nil {
			t.Fatal(err)
		}
		for run := 1; run <= 2; run++ { // the second run reads no member again
			code, out, errOut := runEnvCLI(t, t.TempDir(), nil, "report", "daily", "--json", "--tz", "UTC", filepath.Join(caseDir, name))
			if code != ExitOK {
				t.Fatalf("report %s: exit %d\n%s", name, code, errOut)
			}
			if got := reportJSONTotals(t, out); !sameTotals(got, caseTotals{Records: want.Records, Input: want.Input, Output: want.Output, Cost: want.Cost}) {
				t.Errorf("report %s (run %d): %+v, want %+v", name, run, got, want)
			}
		}
		code, out, errOut := runEnvCLI(t, t.TempDir(), nil, "report", "session", "--json", "--tz", "UTC", filepath.Join(caseDir, name))
		if code != ExitOK {
			t.Fatalf("report session %s: exit %d\n%s", name, code, errOut)
		}
		var rep struct {
			Sessions []struct {
				SessionID string   `json:"sessionId"`
				Records   int64    `json:"records"`
				Input     int64    `json:"inputTokens"`
				Output    int64    `json:"outputTokens"`
				Cost      *float64 `json:"totalCost"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Sessions) != want.Sessions {
			t.Errorf("report session %s: %d sessions, want %d", name, len(rep.Sessions), want.Sessions)
		}
		for _, s := range rep.Sessions {
			w := perSession[s.SessionID]
			if s.Records != w.Records || s.Input != w.Input || s.Output != w.Output || s.Cost == nil || !sameTotals(caseTotals{Cost: *s.Cost}, caseTotals{Cost: w.Cost}) {
				t.Errorf("report session %s: %+v, want %+v", name, s, w)
			}
		}
	}

	// import takes each archive as a SOURCE: its members are imported
	// (named as given), then found already imported; the archive is not
	// changed (SPEC.md §7.2: import reads archives as sources).
	for name, want := range exp.ValidateArchive {
		store := filepath.Join(t.TempDir(), "store")
		for run, result := range []string{"imported", "already_imported"} {
			code, out, errOut := runEnvCLI(t, t.TempDir(), nil, "import", "--json", "--to", store, name)
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var r struct{ Path, Result string }
				if json.Unmarshal([]byte(line), &r) == nil && r.Path != "" {
					got[r.Path] = r.Result
				}
			}
			if code != ExitOK || len(got) != len(want.Files) {
				t.Errorf("import %s (run %d): exit %d, %v\n%s", name, run+1, code, got, errOut)
			}
			for p := range want.Files {
				if got[p] != result {
					t.Errorf("import %s (run %d): %s is %q, want %s", name, run+1, p, got[p], result)
				}
			}
		}
	}

	for name, want := range exp.Migrate {
		p := filepath.Join(caseDir, name)
		for _, args := range [][]string{{"migrate", p}, {"migrate", "--relayout", p}, {"migrate", "--dry-run", p}} {
			code, _, errOut := runEnvCLI(t, t.TempDir(), nil, args...)
			if code != want.Exit || !strings.Contains(errOut, p+" is an archive") {
				t.Errorf("%v: exit %d, want %d and a message naming the archive:\n%s", args, code, want.Exit, errOut)
			}
		}
		if sha256File(t, p) != want.SHA256 {
			t.Errorf("%s changed", name)
		}
	}
}

// truncatedCopy returns the archive name (in the current directory) cut
// in its second half: a zip loses its central directory, a tar.gz its end.
func truncatedCopy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)*2/3]
}
