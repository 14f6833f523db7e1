package fstx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefused marks a journal entry undo will not act on: it names
// something no run of this tool could have written (a path outside the
// run's roots, a backup outside its run directory, a mode wider than the
// file's, a file that is not a regular session file). A run directory can
// come from a shared folder or a tarball; undo trusts none of it.
var ErrRefused = errors.New("refused")

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// undoGuard holds what undo may touch: paths under the run's roots, and
// backups inside the run directory.
type undoGuard struct {
	runDir string // canonical
	roots  []string
}

// newUndoGuard checks the run directory (a real directory owned by the
// user, its journal a regular file owned by the user) and collects the
// roots of the journal's OpRun record; a journal without one (a run of an
// older version) gets fallback, the default roots.
func newUndoGuard(runDir string, entries []JournalEntry, fallback []string) (*undoGuard, error) {
	real, err := filepath.EvalSymlinks(runDir)
	if err != nil {
		return nil, err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{real, filepath.Join(real, "journal.jsonl")} {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil, refused("%s is not a regular file", p)
		}
		if !ownedByUser(fi) {
			return nil, refused("%s is not owned by you: a run directory is only trusted when it is yours", p)
		}
	}
	g := &undoGuard{runDir: real}
	found := false
	for _, e := range entries {
		if e.Op == OpRun {
			found = true
			g.roots = append(g.roots, e.Roots...)
		}
	}
	if !found {
		g.roots = append(g.roots, fallback...)
	}
	for i, r := range g.roots {
		g.roots[i] = filepath.Clean(r)
	}
	return g, nil
}

// under reports whether the absolute, clean path p lies inside one of the
// roots (or is one: a file given as PATH), its directory resolved through
// links too.
func (g *undoGuard) under(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	inside := func(p string) bool {
		for _, r := range g.roots {
			if rel, err := filepath.Rel(r, p); err == nil && (rel == "." || filepath.IsLocal(rel)) {
				return true
			}
		}
		return false
	}
	if !inside(p) {
		return false
	}
	// The directory as it is now, links resolved, must be inside too: a
	// link put in place of a directory cannot lead undo elsewhere.
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return absent(err) // nothing there: nothing to follow
	}
	return inDirRoot(g.roots, dir) || inside(dir)
}

// inDirRoot reports whether dir is one of the roots itself.
func inDirRoot(roots []string, dir string) bool {
	for _, r := range roots {
		if r == dir {
			return true
		}
	}
	return false
}

// sessionFile checks that p may name a session file a run wrote: under the
// roots, a .jsonl name, and (when it exists) a regular file, not a link.
func (g *undoGuard) sessionFile(p string) error {
	if !g.under(p) {
		return refused("%s is outside the run's roots (%s)", p, strings.Join(g.roots, ", "))
	}
	if !strings.HasSuffix(p, ".jsonl") {
		return refused("%s is not a session file (.jsonl)", p)
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return refused("%s is not a regular file", p)
	}
	return nil
}

// backup returns the path of a journal's backup: a regular file inside the
// run's backup/ directory, reached without a link.
func (g *undoGuard) backup(rel string) (string, error) {
	if !filepath.IsLocal(rel) || !strings.HasPrefix(rel, "backup"+string(filepath.Separator)) || strings.Count(rel, string(filepath.Separator)) != 1 {
		return "", refused("backup %q is not inside the run directory's backup/", rel)
	}
	p := filepath.Join(g.runDir, rel)
	dir, err := os.Lstat(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	if !dir.IsDir() {
		return "", refused("%s is not a directory", filepath.Dir(p))
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", refused("backup %s is not a regular file", p)
	}
	return p, nil
}

// mode returns the journal's mode of e when it is no wider than cur (the
// mode of the file now: a run keeps modes, so an original never had more
// bits than its replacement).
func (g *undoGuard) mode(s string, cur fs.FileMode) (fs.FileMode, error) {
	m, ok := ParseMode(s)
	if !ok {
		return 0, refused("mode %q is not a file mode", s)
	}
	if keptMode(m)&^keptMode(cur) != 0 {
		return 0, refused("mode %s would widen the file's mode %s", ModeString(m), ModeString(cur))
	}
	return m, nil
}

// RunRoots returns the roots the run in runDir recorded (nil for a run
// that recorded none).
func RunRoots(runDir string) ([]string, error) {
	entries, err := readJournal(runDir)
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, e := range entries {
		if e.Op == OpRun {
			roots = append(roots, e.Roots...)
		}
	}
	return roots, nil
}

// Within reports whether the absolute path p lies strictly inside one of
// roots, its directory's links resolved too.
func Within(roots []string, p string) bool {
	g := &undoGuard{roots: roots}
	return g.under(p) && !inDirRoot(roots, p)
}
