package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/report"
)

// TestReportProblemPaths: in text output each stderr line of §7.6 is
// followed by its files, named relative to the PATH they were found under,
// with status, codes and lines; --json keeps the full paths, and --quiet and
// --json keep the one line per kind.
func TestReportProblemPaths(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	dir, err := filepath.Abs(filepath.Join(reportCases, "c22-damaged-files-used"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	code, _, errOut := runReportCLI(t, home, "report", "daily", "--tz", "UTC", dir)
	if one := "3 damaged files used in part (1 torn, 2 corrupt) — see: sessions-etl validate\n"; code != ExitOK || !strings.HasPrefix(errOut, one) || strings.Contains(errOut, "  ") {
		t.Errorf("without --verbose: exit %d, stderr:\n%s\nwant one line per kind of problem:\n%s", code, errOut, one)
	}
	code, _, errOut = runReportCLI(t, home, "report", "daily", "--verbose", "--tz", "UTC", dir)
	want := "3 damaged files used in part (1 torn, 2 corrupt) — see: sessions-etl validate\n" +
		"  corrupt.jsonl  corrupt: corrupt_line (line 4)\n" +
		"  glued.jsonl  corrupt: concatenated_records (line 3)\n" +
		"  torn.jsonl  torn: torn_final_record (line 5)\n"
	if code != ExitOK || !strings.HasPrefix(errOut, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", code, errOut, want)
	}
	_, out, errOut := runReportCLI(t, home, "report", "daily", "--json", "--verbose", "--tz", "UTC", dir)
	if strings.Contains(errOut, "  ") {
		t.Errorf("--json: stderr lists files: %q", errOut)
	}
	var got struct {
		Files struct {
			Salvaged []struct {
				Path string `json:"path"`
			} `json:"salvaged"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, f := range got.Files.Salvaged {
		if filepath.Dir(f.Path) != dir {
			t.Errorf("--json path %q is not the full path under %s", f.Path, dir)
		}
	}
}

func TestProblemPath(t *testing.T) {
	home := filepath.Join(string(filepath.Separator), "home", "ann")
	ios := &IO{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Home: home}
	root := filepath.Join(home, "work", "sessions")
	file := filepath.Join(root, "p", "a.jsonl")
	other := filepath.Join(string(filepath.Separator), "srv", "x.jsonl")
	roots := []ingest.Root{{Path: root}, {Path: filepath.Join(root, "p")}, {Path: other}}
	for _, c := range []struct {
		name     string
		explicit bool
		path     string
		want     string
	}{
		{"under a PATH: relative to the deepest", true, file, "a.jsonl"},
		{"a file named as a PATH: its name", true, other, "x.jsonl"},
		{"default roots: ~", false, file, filepath.Join("~", "work", "sessions", "p", "a.jsonl")},
		{"outside home and roots: in full", false, other, other},
		{"control characters quoted", false, filepath.Join(home, "a\nb.jsonl"), `"` + filepath.Join("~", "a") + `\nb.jsonl"`},
	} {
		if got := problemPath(ios, roots, c.explicit, c.path); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestProblemDetail(t *testing.T) {
	files := []report.ProblemFile{
		{Path: "/r/a.jsonl", Status: "future_version", Codes: []string{"future_version"}, Lines: []int{1}},
		{Path: "/r/b.jsonl", Status: "corrupt", Codes: []string{"corrupt_line", "duplicate_id"}, Lines: []int{4, 9, 12, 20, 31, 40}},
		{Path: "/r/c", Status: "unreadable", Codes: []string{"unreadable"}, Lines: []int{0}},
		{Path: "/r/d.jsonl", Status: "torn"}, {Path: "/r/e.jsonl", Status: "torn"}, {Path: "/r/f.jsonl", Status: "torn"},
		{Path: "/r/g.jsonl", Status: "torn"},
	}
	got := problemDetail(files, filepath.Base)
	want := []string{
		"  a.jsonl  future_version (line 1)",
		"  b.jsonl  corrupt: corrupt_line, duplicate_id (lines 4, 9, 12, 20, 31, …)",
		"  c  unreadable",
		"  d.jsonl  torn",
		"  e.jsonl  torn",
		"  … and 2 more",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
