package fstx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Results of undoing one journal entry.
const (
	UndoRestored = "restored" // the original bytes (or place) are back
	UndoRemoved  = "removed"  // a file the run created was removed
	UndoAlready  = "already_original"
	UndoChanged  = "changed_since" // the file changed after the run: left as it is
	UndoFailed   = "failed"
)

// UndoResult is what undo did with one journal entry.
type UndoResult struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Result string `json:"result"`
	Detail string `json:"detail,omitempty"`
	// Backup is the run's copy of the original, named when the original
	// was not put back (changed_since, failed) and a backup was taken.
	Backup string `json:"backup,omitempty"`
}

// UndoOptions configures [Undo].
type UndoOptions struct {
	StateDir string
	LockWait time.Duration
	Lock     LockConfig
	// Ops lists the journal operations this undo may take back (nil: all).
	// `migrate --undo` passes [MigrateOps], `import --undo` create and
	// update, so neither takes back the other command's run by mistake.
	Ops []string
	// DefaultRoots are the roots of a journal that records none (a run of
	// a version before the OpRun record): the default session roots.
	DefaultRoots []string
}

// MigrateOps are the journal operations of a migrate run.
var MigrateOps = []string{OpRewrite, OpMove, OpMoveFailed, OpMkdir}

// ErrWrongRun reports an undo asked of a run journaled by another command.
var ErrWrongRun = errors.New("not a run of this command")

// Undo reverts the run in runDir, newest entry first (SPEC.md §2.3 step 5):
// a rewritten file whose current SHA-256 still equals the journal's "after"
// hash is restored from its backup with the original mode and mtime; a
// moved file is moved back when nothing took its old place; a created file
// is removed when unchanged (already gone: already_original, so undo can be
// run again). Files that changed since are reported and left alone. emit
// receives one result per journal entry.
func Undo(ctx context.Context, runDir string, opts UndoOptions, emit func(UndoResult) error) error {
	if opts.Lock == (LockConfig{}) {
		opts.Lock = DefaultLockConfig
	}
	entries, err := readJournal(runDir)
	if err != nil {
		return fmt.Errorf("undo %s: %w", runDir, err)
	}
	g, err := newUndoGuard(runDir, entries, opts.DefaultRoots)
	if err != nil {
		return fmt.Errorf("undo %s: %w", runDir, err)
	}
	if opts.Ops != nil {
		for _, e := range entries {
			if e.Op != OpRun && !slices.Contains(opts.Ops, e.Op) {
				cmd := "migrate"
				if e.Op == OpCreate || e.Op == OpUpdate {
					cmd = "import"
				}
				return fmt.Errorf("undo %s: it journals %q operations, made by '%s': undo it with 'sessions-etl %s --undo': %w", runDir, e.Op, cmd, cmd, ErrWrongRun)
			}
		}
	}
	// Moves whose rename failed during the run (OpMoveFailed follows their
	// write-ahead OpMove record): the file never left its old path.
	failedMoves := map[[2]string]bool{}
	for _, e := range entries {
		if e.Op == OpMoveFailed {
			failedMoves[[2]string{e.Path, e.From}] = true
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := entries[i]
		var r UndoResult
		switch {
		case e.Op == OpMoveFailed || e.Op == OpRun:
			continue // reported with its OpMove entry; the run's roots
		case e.Op == OpMkdir && (!g.under(e.Path) || inDirRoot(g.roots, e.Path)):
			r = UndoResult{Op: OpMkdir, Path: e.Path, Result: UndoFailed,
				Detail: refused("directory %s is outside the run's roots", e.Path).Error()}
		case e.Op == OpMkdir:
			// Newest first: every move into the directory is taken back
			// already. Remove it only when empty (os.Remove never removes a
			// directory holding anything); a directory kept or gone is not
			// reported.
			if err := os.Remove(e.Path); err != nil {
				continue
			}
			_ = SyncDir(filepath.Dir(e.Path))
			r = UndoResult{Op: OpMkdir, Path: e.Path, Result: UndoRemoved}
		case e.Op == OpMove && failedMoves[[2]string{e.Path, e.From}]:
			r = UndoResult{Op: e.Op, Path: e.Path, Result: UndoAlready,
				Detail: "the move failed during the run: the file stayed at " + e.From}
		default:
			r = undoOne(ctx, g, e, opts)
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// withBackup names the run's backup of e's original in r, when one was
// taken (rewrites and updates without --no-backup).
func withBackup(r UndoResult, runDir string, e JournalEntry) UndoResult {
	if e.Backup != "" && filepath.IsLocal(e.Backup) && strings.HasPrefix(e.Backup, "backup"+string(filepath.Separator)) {
		r.Backup = filepath.Join(runDir, e.Backup)
	}
	return r
}

func undoOne(ctx context.Context, g *undoGuard, e JournalEntry, opts UndoOptions) UndoResult {
	runDir := g.runDir
	r := UndoResult{Op: e.Op, Path: e.Path}
	fail := func(err error) UndoResult {
		r.Result, r.Detail = UndoFailed, err.Error()
		if e.Backup != "" {
			if _, berr := g.backup(e.Backup); berr != nil {
				return r // never point the user at something outside the run
			}
		}
		return withBackup(r, runDir, e)
	}
	switch e.Op {
	case OpRewrite, OpUpdate, OpCreate, OpMove:
	default:
		return fail(refused("unknown operation %q", e.Op))
	}
	if err := g.sessionFile(e.Path); err != nil {
		return fail(err)
	}
	if e.Op == OpMove {
		if err := g.sessionFile(e.From); err != nil {
			return fail(err)
		}
	}
	if _, err := os.Lstat(e.Path); err != nil && absent(err) {
		if e.Op == OpMove && FileExists(e.From) {
			// Moved back already, or never moved (a crash between a failed
			// rename and its OpMoveFailed record).
			r.Result, r.Detail = UndoAlready, "already at "+e.From
			return r
		}
		if e.Op == OpCreate {
			// The run created it: gone is how it was before the run (an
			// earlier undo, or the user, removed it).
			r.Result, r.Detail = UndoAlready, "already removed"
			return r
		}
		r.Result, r.Detail = UndoChanged, "the file no longer exists"
		return withBackup(r, runDir, e)
	}
	own, err := LockOwn(ctx, opts.StateDir, e.Path, opts.LockWait, opts.Lock.Poll)
	if err != nil {
		return fail(err)
	}
	defer own.Release()
	lock, err := LockAgent(ctx, e.Path, opts.LockWait, opts.Lock)
	if err != nil {
		return fail(err)
	}
	defer lock.Release()

	cur, err := hashFile(e.Path)
	if err != nil {
		return fail(err)
	}
	switch e.Op {
	case OpMove:
		if cur != e.SHA256After {
			r.Result, r.Detail = UndoChanged, "the file changed after it was moved"
			return r
		}
		if FileExists(e.From) {
			r.Result, r.Detail = UndoChanged, e.From+" exists again: not overwritten"
			return r
		}
		if err := os.MkdirAll(filepath.Dir(e.From), 0o700); err != nil {
			return fail(err)
		}
		if err := os.Link(e.Path, e.From); err != nil {
			return fail(fmt.Errorf("move back: %w", err))
		}
		if err := os.Remove(e.Path); err != nil {
			return fail(fmt.Errorf("move back: %w", err))
		}
		_ = SyncDir(filepath.Dir(e.From))
		_ = SyncDir(filepath.Dir(e.Path))
		r.Result, r.Detail = UndoRestored, "moved back to "+e.From
		return r
	case OpCreate:
		if cur != e.SHA256After {
			r.Result, r.Detail = UndoChanged, "the file changed after it was created: not removed"
			return r
		}
		if err := os.Remove(e.Path); err != nil {
			return fail(err)
		}
		_ = SyncDir(filepath.Dir(e.Path))
		r.Result = UndoRemoved
		return r
	}
	// OpRewrite, OpUpdate
	switch cur {
	case e.SHA256Before:
		r.Result = UndoAlready
		return r
	case e.SHA256After:
	default:
		r.Result, r.Detail = UndoChanged, "the file changed after the run; left as it is"
		if e.Backup != "" {
			r.Detail += " (the original is in the run's backup/ directory)"
		}
		return withBackup(r, runDir, e)
	}
	if e.Backup == "" {
		return fail(errors.New("no backup was taken (--no-backup)"))
	}
	backup, err := g.backup(e.Backup)
	if err != nil {
		return fail(err)
	}
	if h, err := hashFile(backup); err != nil {
		return fail(err)
	} else if h != e.SHA256Before {
		return fail(fmt.Errorf("backup %s does not match the journal's hash", backup))
	}
	fi, err := os.Stat(e.Path)
	if err != nil {
		return fail(err)
	}
	meta := MetaOf(fi)
	if meta.Mode, err = g.mode(e.Mode, meta.Mode); err != nil {
		return fail(err)
	}
	meta.Mtime = e.Mtime
	meta.Atime = e.Mtime
	tmp, err := WriteTemp(e.Path, meta, WriteOptions{AttrsFrom: e.Path}, func(w io.Writer) error {
		b, err := os.Open(backup)
		if err != nil {
			return err
		}
		defer b.Close()
		_, err = io.Copy(w, b)
		return err
	})
	if err != nil {
		return fail(err)
	}
	defer tmp.Discard()
	if err := lock.Check(); err != nil {
		return fail(err)
	}
	if err := tmp.Commit(); err != nil {
		return fail(err)
	}
	r.Result = UndoRestored
	return r
}

func hashFile(path string) (string, error) { return HashFile(path) }
