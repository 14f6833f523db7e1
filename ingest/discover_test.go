package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func discover(t *testing.T, roots []Root) ([]File, []PathIssue) {
	t.Helper()
	var files []File
	var issues []PathIssue
	err := Discover(context.Background(), roots, func(f File) error { files = append(files, f); return nil },
		func(pi PathIssue) { issues = append(issues, pi) })
	if err != nil {
		t.Fatal(err)
	}
	return files, issues
}

func TestDiscover(t *testing.T) {
	home := t.TempDir()
	pi := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--")
	writeFile(t, filepath.Join(pi, "b.jsonl"), "{}\n")
	writeFile(t, filepath.Join(pi, "a.jsonl"), "{}\n")
	writeFile(t, filepath.Join(pi, "notes.txt"), "x")
	writeFile(t, filepath.Join(pi, TempPrefix+"a.jsonl.tmp"), "x")
	writeFile(t, filepath.Join(pi, TempPrefix+"x.jsonl"), "x")
	if err := os.Mkdir(filepath.Join(pi, "a.jsonl.lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pi, "a.jsonl.lock", "inside.jsonl"), "{}\n") // never read
	writeFile(t, filepath.Join(home, ".pi", "agent", "legacy.jsonl"), `{"type":"session","id":"x"}`+"\n")
	writeFile(t, filepath.Join(home, ".pi", "agent", "prompt-history.jsonl"), `{"prompt":"hi","timestamp":1}`+"\n") // another kind of file: a note
	writeFile(t, filepath.Join(home, ".pi", "agent", "broken.jsonl"), "oops\n")                                     // not JSON: kept (a damaged session?)
	writeFile(t, filepath.Join(home, ".pi", "agent", "other", "deep.jsonl"), "{}\n")                                // not a session root
	writeFile(t, filepath.Join(home, ".atomic", "agent", "sessions", "--x--", "c.jsonl"), "{}\n")
	prime := filepath.Join(home, ".prime", "agent", "sessions")
	writeFile(t, filepath.Join(prime, "p1.jsonl"), "{}\n")
	writeFile(t, filepath.Join(prime, "proj", "p2.jsonl"), "{}\n")
	// links: a cycle, a broken link, a second path to a known directory and file
	must(t, os.Symlink(prime, filepath.Join(prime, "loop")))
	must(t, os.Symlink(filepath.Join(home, "missing.jsonl"), filepath.Join(prime, "gone.jsonl")))
	must(t, os.Symlink(pi, filepath.Join(prime, "pi-link")))
	must(t, os.Symlink(filepath.Join(prime, "p1.jsonl"), filepath.Join(prime, "z-again.jsonl")))
	ext := filepath.Join(home, "archive")
	writeFile(t, filepath.Join(ext, "e.jsonl"), "{}\n")
	must(t, os.Symlink(ext, filepath.Join(prime, "archive")))

	files, issues := discover(t, DefaultRoots(home))
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(home, f.Path)
		got = append(got, f.Source+":"+rel)
	}
	want := []string{
		"pi:.pi/agent/sessions/--home-dev-proj--/a.jsonl",
		"pi:.pi/agent/sessions/--home-dev-proj--/b.jsonl",
		"pi:.pi/agent/broken.jsonl",
		"pi:.pi/agent/legacy.jsonl",
		"atomic:.atomic/agent/sessions/--x--/c.jsonl",
		"prime:.prime/agent/sessions/archive/e.jsonl",
		"prime:.prime/agent/sessions/p1.jsonl",
		"prime:.prime/agent/sessions/proj/p2.jsonl",
	}
	if !slices.Equal(got, want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
	var codes []string
	for _, is := range issues {
		codes = append(codes, filepath.Base(is.Path)+":"+is.Issue.Code)
	}
	slices.Sort(codes)
	wantCodes := []string{"gone.jsonl:broken_link", "loop:symlink_cycle", "prompt-history.jsonl:not_a_session_file"}
	if !slices.Equal(codes, wantCodes) {
		t.Errorf("issues = %q, want %q", codes, wantCodes)
	}
}

func TestDiscoverExplicitPaths(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x", "s.jsonl"), "{}\n")
	writeFile(t, filepath.Join(dir, "named.txt"), "{}\n")
	roots, err := PathRoots([]string{filepath.Join(dir, "x"), filepath.Join(dir, "named.txt"), filepath.Join(dir, "x"), filepath.Join(dir, "nope")})
	if err != nil {
		t.Fatal(err)
	}
	files, issues := discover(t, roots)
	if len(files) != 2 {
		t.Errorf("files = %v, want s.jsonl once and the named file", files)
	}
	if len(issues) != 1 || issues[0].Issue.Code != CodeUnreadable {
		t.Errorf("issues = %v, want one unreadable for the missing path", issues)
	}
	if files[0].Source != SourceCustom {
		t.Errorf("source = %s", files[0].Source)
	}
}

func TestSourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/home/u/.pi/agent/sessions/--x--/a.jsonl": SourcePi,
		"/home/u/.atomic/agent/sessions/a.jsonl":   SourceAtomic,
		"/home/u/.prime/agent/sessions/p/a.jsonl":  SourcePrime,
		"/backup/.pi/old/.atomic/agent/s/a.jsonl":  SourceAtomic,
		"/data/pi/agent/a.jsonl":                   SourceCustom,
	} {
		if got := SourceOf(path); got != want {
			t.Errorf("SourceOf(%s) = %s, want %s", path, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDiscoverSkipsStateDir: run directories (backups of session files)
// inside a scanned root are never read.
func TestDiscoverSkipsStateDir(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "s", "a.jsonl"), "{}\n")
	state := filepath.Join(home, ".local", "state", "sessions-etl")
	writeFile(t, filepath.Join(state, "runs", "r1", "backup", "000001-a.jsonl"), "{}\n")
	writeFile(t, filepath.Join(state, "runs", "r1", "journal.jsonl"), "{}\n")
	files, _ := discover(t, []Root{{Path: home, Recursive: true, Skip: []string{state, filepath.Join(home, "missing")}}})
	if len(files) != 1 || filepath.Base(files[0].Path) != "a.jsonl" {
		t.Errorf("files = %v, want only s/a.jsonl", files)
	}
}

// TestDiscoverPiAgentOtherFiles: a non-session JSONL file directly in pi's
// agent directory is passed over with a note however the walk reaches it
// (default roots or a directory given as PATH); only a file named as the
// PATH itself is passed on to be validated.
func TestDiscoverPiAgentOtherFiles(t *testing.T) {
	home := t.TempDir()
	agent := filepath.Join(home, ".pi", "agent")
	hist := filepath.Join(agent, "prompt-history.jsonl")
	writeFile(t, hist, `{"prompt":"hi","timestamp":1}`+"\n")
	writeFile(t, filepath.Join(agent, "legacy.jsonl"), `{"type":"session","id":"x"}`+"\n")
	writeFile(t, filepath.Join(agent, "sessions", "--p--", "h.jsonl"), `{"prompt":"hi"}`+"\n") // not in the agent dir itself
	writeFile(t, filepath.Join(home, "other", "agent", "h.jsonl"), `{"prompt":"hi"}`+"\n")     // no .pi parent
	for _, tc := range []struct {
		name       string
		roots      func() []Root
		files      []string
		passedOver []string
	}{
		{"default roots", func() []Root { return DefaultRoots(home) },
			[]string{".pi/agent/sessions/--p--/h.jsonl", ".pi/agent/legacy.jsonl"}, []string{".pi/agent/prompt-history.jsonl"}},
		{"home", func() []Root { r, _ := PathRoots([]string{home}); return r },
			[]string{".pi/agent/legacy.jsonl", ".pi/agent/sessions/--p--/h.jsonl", "other/agent/h.jsonl"}, []string{".pi/agent/prompt-history.jsonl"}},
		{".pi", func() []Root { r, _ := PathRoots([]string{filepath.Join(home, ".pi")}); return r },
			[]string{".pi/agent/legacy.jsonl", ".pi/agent/sessions/--p--/h.jsonl"}, []string{".pi/agent/prompt-history.jsonl"}},
		{".pi/agent", func() []Root { r, _ := PathRoots([]string{agent}); return r },
			[]string{".pi/agent/legacy.jsonl", ".pi/agent/sessions/--p--/h.jsonl"}, []string{".pi/agent/prompt-history.jsonl"}},
		{"the file itself", func() []Root { r, _ := PathRoots([]string{hist}); return r },
			[]string{".pi/agent/prompt-history.jsonl"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, issues := discover(t, tc.roots())
			var got, over []string
			for _, f := range files {
				rel, _ := filepath.Rel(home, f.Path)
				got = append(got, rel)
			}
			for _, is := range issues {
				rel, _ := filepath.Rel(home, is.Path)
				if is.Issue.Code != CodeNotASessionFile || is.Source != SourcePi {
					t.Errorf("issue %+v", is)
				}
				over = append(over, rel)
			}
			if !slices.Equal(got, tc.files) || !slices.Equal(over, tc.passedOver) {
				t.Errorf("files %q, passed over %q; want %q, %q", got, over, tc.files, tc.passedOver)
			}
		})
	}
}
