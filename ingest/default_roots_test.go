package ingest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// denyUnder makes the stat of a root below dir fail with EACCES, as for a
// user who is not root when dir has mode 000 (tests run as root, for whom
// chmod 000 changes nothing). Undone when the test ends.
func denyUnder(t *testing.T, dir string) {
	t.Helper()
	real := statRoot
	statRoot = func(p string) (fs.FileInfo, error) {
		if strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrPermission}
		}
		return real(p)
	}
	t.Cleanup(func() { statRoot = real })
}

// TestDefaultRootsUnreadable: a default root whose stat fails with
// anything but "does not exist" (a ~/.pi of mode 000) is not a missing
// root: DefaultRoots keeps it and discovery reports it as an unreadable
// path of error severity, as it does an unreadable ~/.pi/agent.
func TestDefaultRootsUnreadable(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".pi", "agent", "sessions", "--p--", "a.jsonl"), "{}\n")
	writeFile(t, filepath.Join(home, ".prime", "agent", "sessions", "p.jsonl"), "{}\n")
	denyUnder(t, filepath.Join(home, ".pi"))

	states := map[string]RootState{}
	var paths []string
	for _, r := range DefaultRoots(home) {
		paths = append(paths, r.Path)
	}
	for _, r := range DefaultRootCandidates(home) {
		states[r.Path] = DefaultRootState(r.Path)
	}
	sessions, agent := filepath.Join(home, ".pi", "agent", "sessions"), filepath.Join(home, ".pi", "agent")
	atomic, prime := filepath.Join(home, ".atomic", "agent", "sessions"), filepath.Join(home, ".prime", "agent", "sessions")
	if want := []string{sessions, agent, prime}; !slices.Equal(paths, want) {
		t.Errorf("DefaultRoots = %q, want %q (the unreadable pi roots kept, the missing Atomic one left out)", paths, want)
	}
	if states[sessions] != RootUnreadable || states[agent] != RootUnreadable || states[atomic] != RootMissing || states[prime] != RootPresent {
		t.Errorf("states %v", states)
	}
	files, issues := discover(t, DefaultRoots(home))
	if len(files) != 1 || files[0].Path != filepath.Join(prime, "p.jsonl") {
		t.Errorf("files %v, want only the Prime one", files)
	}
	var got []string
	for _, pi := range issues {
		got = append(got, pi.Path+"|"+string(pi.Issue.Severity)+"|"+pi.Issue.Code+"|"+pi.Issue.Message)
	}
	want := []string{
		sessions + "|error|unreadable|stat: permission denied",
		agent + "|error|unreadable|stat: permission denied",
	}
	if !slices.Equal(got, want) {
		t.Errorf("path issues:\n got %q\nwant %q", got, want)
	}
}

// TestDefaultRootsLinkLoop: a ~/.pi that is a symbolic link to itself
// (stat fails with ELOOP, also for root) makes the pi roots unreadable,
// not missing; a ~/.atomic that is a regular file (ENOTDIR) is missing.
func TestDefaultRootsLinkLoop(t *testing.T) {
	home := t.TempDir()
	must(t, os.Symlink(filepath.Join(home, ".pi"), filepath.Join(home, ".pi")))
	writeFile(t, filepath.Join(home, ".atomic"), "not a directory\n")
	var paths []string
	for _, r := range DefaultRoots(home) {
		paths = append(paths, r.Path)
	}
	sessions, agent := filepath.Join(home, ".pi", "agent", "sessions"), filepath.Join(home, ".pi", "agent")
	if want := []string{sessions, agent}; !slices.Equal(paths, want) {
		t.Errorf("DefaultRoots = %q, want %q", paths, want)
	}
	_, issues := discover(t, DefaultRoots(home))
	if len(issues) != 2 || issues[0].Path != sessions || issues[0].Issue.Severity != SeverityError || issues[0].Issue.Code != CodeUnreadable {
		t.Errorf("path issues %+v, want an unreadable error for each pi root", issues)
	}
}
