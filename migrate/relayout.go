package migrate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// RelayoutTarget returns where --relayout moves path (SPEC.md §2.4), or ""
// when the file is already in the current layout: legacy flat
// <home>/.pi/agent/<name>.jsonl goes to .pi/agent/sessions/<EncodeCwd(cwd)>/<name>.jsonl;
// Prime per-project <home>/.prime/agent/sessions/<project>/<name>.jsonl goes
// to .prime/agent/sessions/<session id>.jsonl.
func RelayoutTarget(path string, hdr validate.Header) (string, error) {
	dir := filepath.Dir(path)
	parent := filepath.Dir(dir)
	switch {
	case filepath.Base(dir) == "agent" && filepath.Base(parent) == ".pi":
		if hdr.Cwd == "" {
			return "", errNoCwd
		}
		return filepath.Join(dir, "sessions", upgrade.EncodeCwd(hdr.Cwd), filepath.Base(path)), nil
	case filepath.Base(parent) == "sessions" && filepath.Base(filepath.Dir(parent)) == "agent" &&
		filepath.Base(filepath.Dir(filepath.Dir(parent))) == ".prime":
		if hdr.ID == "" || strings.ContainsAny(hdr.ID, `/\`) {
			return "", errNoID
		}
		return filepath.Join(parent, hdr.ID+".jsonl"), nil
	}
	return "", nil
}

// Reasons a file was not moved by --relayout (FileResult.NotMoved). They
// are not failures: the file is intact where it was (README.md).
const (
	NotMovedTargetExists = "target_exists" // the target path is taken: never overwritten
	NotMovedNoCwd        = "no_cwd"        // a legacy pi file whose header has no cwd
	NotMovedNoID         = "no_session_id" // a Prime per-project file without a usable session id
	NotMovedSymlink      = "symlink"       // a symbolic link: its target is the user's to move
)

// ReasonMoveFailed is the reason of a failed result whose move (--relayout)
// failed: the file is still at its old path (upgraded, if it needed it).
const ReasonMoveFailed = "move_failed"

// errNoCwd and errNoID are RelayoutTarget's reasons for not moving a file.
var (
	errNoCwd = errors.New("the header has no cwd to choose a per-cwd directory")
	errNoID  = errors.New("the header has no usable session id for a flat file name")
)

// mkdirs creates dir and its missing parents for a move, journaling each
// directory it creates (fstx.OpMkdir) so that undo can remove it again when it is
// empty. A directory is journaled after os.Mkdir created it (not before): a
// crash in between leaves an empty, unjournaled directory, which is harmless,
// whereas journaling first could make undo remove a directory somebody else
// created meanwhile. Directories that already exist (made by the agent, the
// user or another worker) are not journaled. Calls are serialized so that a
// worker never removes (at the end of the run) what another is moving into.
func (m *migrator) mkdirs(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return err
		}
		_ = fstx.SyncDir(filepath.Dir(d))
		if err := m.run.Record(fstx.JournalEntry{Op: fstx.OpMkdir, Path: d, Mode: "0700", Time: m.opts.Now().UTC()}); err != nil {
			_ = os.Remove(d)
			return err
		}
		m.madeDirs = append(m.madeDirs, d)
	}
	return nil
}

// removeEmptyDirs removes, deepest first, the directories the run created
// that are empty at its end (every move into them failed). os.Remove never
// removes a directory that holds anything.
func (m *migrator) removeEmptyDirs() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.madeDirs) - 1; i >= 0; i-- {
		_ = os.Remove(m.madeDirs[i])
	}
}

// notMoved records why a file stays where it is.
func notMoved(res FileResult, reason, what string) FileResult {
	res.NotMoved = reason
	res.Notes = append(res.Notes, upgrade.Change{What: "not moved: " + what})
	return res
}

// moveFailed turns res into a failed result: the move was tried and did not
// happen. The file is intact at its old path; an upgrade done before the
// move stays (it is journaled and undoable on its own).
func moveFailed(res FileResult, to string, err error) FileResult {
	detail := "could not move it to " + to + ": " + err.Error()
	if res.Result == ResultUpgraded {
		detail = "upgraded in place, but " + detail
	}
	res.Result, res.Reason, res.Detail = ResultFailed, ReasonMoveFailed, detail
	return res
}

// relayout moves one loadable file into the current layout under its
// locks and journals the move.
//
// The move is journaled before the rename (write-ahead): a crash right after
// the rename must not leave a move undo does not know about. When the rename
// then fails, an fstx.OpMoveFailed record follows, so that undo reports the file
// as already_original instead of looking for it at the target; undo also
// treats a journaled move whose file is still at its old path and absent
// from the target as already_original (a crash between the failed rename
// and that record).
func (m *migrator) relayout(ctx context.Context, f ingest.File, res FileResult) FileResult {
	hres, err := validate.File(ctx, &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), res.Path)
	if err != nil || !hres.Status.Loadable() {
		return res
	}
	from := res.Path
	to, err := RelayoutTarget(from, hres.Header)
	switch {
	case errors.Is(err, errNoCwd):
		return notMoved(res, NotMovedNoCwd, err.Error())
	case errors.Is(err, errNoID):
		return notMoved(res, NotMovedNoID, err.Error())
	case err != nil:
		return moveFailed(res, to, err)
	}
	if to == "" || to == from {
		return res
	}
	if fi, err := os.Lstat(from); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return notMoved(res, NotMovedSymlink, "a symbolic link (move its target yourself)")
	}
	if _, err := os.Lstat(to); err == nil {
		return notMoved(res, NotMovedTargetExists, to+" already exists")
	}
	if m.opts.DryRun {
		res.MovedTo = to
		if res.Result == ResultCurrent {
			res.Result = ResultMoved
		}
		return res
	}
	own, err := fstx.LockOwn(ctx, m.opts.StateDir, from, m.opts.LockWait, m.opts.Lock.Poll)
	if err != nil {
		return lockResult(res, err)
	}
	defer own.Release()
	lock, err := fstx.LockAgent(ctx, from, m.opts.LockWait, m.opts.Lock)
	if err != nil {
		return lockResult(res, err)
	}
	defer lock.Release()
	fi, err := os.Stat(from)
	if err != nil {
		return failed(res, err)
	}
	sum, err := fstx.HashFile(from)
	if err != nil {
		return failed(res, err)
	}
	if err := m.mkdirs(filepath.Dir(to)); err != nil {
		return moveFailed(res, to, err)
	}
	meta := fstx.MetaOf(fi)
	entry := fstx.JournalEntry{Op: fstx.OpMove, Path: to, From: from, Size: meta.Size, Mtime: meta.Mtime,
		Mode: fstx.ModeString(meta.Mode), SHA256After: sum, Time: m.opts.Now().UTC()}
	if err := m.run.Record(entry); err != nil {
		return failed(res, err)
	}
	if err := fstx.Faults.RenameNoReplace(from, to); err != nil {
		entry.Op, entry.Time = fstx.OpMoveFailed, m.opts.Now().UTC()
		_ = m.run.Record(entry) // undo also copes without it
		if errors.Is(err, os.ErrExist) {
			// Taken between the check above and the rename.
			return notMoved(res, NotMovedTargetExists, to+" already exists")
		}
		return moveFailed(res, to, err)
	}
	_ = fstx.SyncDir(filepath.Dir(to))
	_ = fstx.SyncDir(filepath.Dir(from))
	res.MovedTo = to
	if res.Result == ResultCurrent {
		res.Result = ResultMoved
	}
	return res
}
