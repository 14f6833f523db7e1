package importer

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// checkError reports an upgraded copy that did not pass the check before
// its rename (reason upgrade.ReasonCheckFailed).
type checkError struct{ msg string }

func (e *checkError) Error() string { return e.msg }

// postCheck accepts a copy that validates as current v4 (or as the early v4
// --keep-unresolved-parent asks for) with the plan's session id and entries.
func postCheck(res validate.Result, plan *upgrade.Plan) error {
	keptParent := plan.KeptParent && res.Status == validate.StatusNeedsUpgrade && res.EarlyV4 &&
		res.Header.HasParentPath && !res.Header.HasTimestamp
	switch {
	case res.Status != validate.StatusCurrent && !keptParent:
		return &checkError{fmt.Sprintf("the upgraded copy validates as %s (%s)", res.Status, res.FirstError())}
	case res.Entries != plan.Entries:
		return &checkError{fmt.Sprintf("the upgraded copy has %d entries, the original %d", res.Entries, plan.Entries)}
	case res.Header.ID != plan.SessionID:
		return &checkError{fmt.Sprintf("the upgraded copy has session id %q, the original %q", res.Header.ID, plan.SessionID)}
	}
	return nil
}

// writeCopy writes the session in src (size bytes) with plan applied to w,
// validating the bytes as they go.
func writeCopy(ctx context.Context, w io.Writer, src io.ReaderAt, size int64, plan *upgrade.Plan) error {
	cw := newCheckingWriter(ctx)
	defer cw.abort()
	if err := upgrade.Apply(io.MultiWriter(w, cw), io.NewSectionReader(src, 0, size), plan); err != nil {
		return err
	}
	res, err := cw.finish()
	if err != nil {
		return fmt.Errorf("check the upgraded copy: %w", err)
	}
	return postCheck(res, plan)
}

func modeString(m fs.FileMode) string { return fstx.ModeString(m) }

func repairs(plan *upgrade.Plan) []string {
	var out []string
	for _, r := range plan.Repairs {
		out = append(out, r.What)
	}
	return out
}

// create writes a new store file p from the source m: a temporary file with
// the source's permission bits and times, checked, journaled, then renamed
// into place only if p still does not exist.
func (im *importer) create(ctx context.Context, m *member, p string) error {
	if err := im.mkdirs(filepath.Dir(p)); err != nil {
		return err
	}
	own, err := fstx.LockOwnNew(ctx, im.opts.StateDir, p, im.opts.LockWait, im.opts.Lock.Poll)
	if err != nil {
		return fmt.Errorf("import %s into %s: %w", m.sf.file.Path, p, err)
	}
	defer own.Release()
	if _, err := os.Lstat(p); err == nil {
		return fmt.Errorf("%s: %w", p, fs.ErrExist) // created meanwhile by another process
	}
	_, err = fstx.WriteFile(p, m.c.copyMeta, fstx.WriteOptions{}, true,
		func(w io.Writer) error { return writeCopy(ctx, w, m.c.ra, m.c.size, m.plan) },
		func(sum string) error {
			if err := unchanged(m.c.disk, m.c.diskMeta); err != nil {
				return err
			}
			return im.run.Record(fstx.JournalEntry{Op: fstx.OpCreate, Path: p, Mtime: m.c.copyMeta.Mtime,
				Mode: modeString(m.c.copyMeta.Mode), SHA256After: sum, FromVersion: m.plan.FromVersion,
				Changes: len(m.plan.Changes), Repairs: repairs(m.plan), Time: im.opts.Now().UTC()})
		})
	if err != nil {
		return fmt.Errorf("import %s into %s: %w", m.sf.file.Path, p, err)
	}
	return nil
}

// replace replaces the store file t with the session in src (size bytes)
// with plan applied, under the agent's lock on t and sessions-etl's own,
// after backing t up into the run directory. from is the source member the
// bytes come from (its permission bits and times are used, and it must
// still be unchanged), or nil when t is upgraded in place (t keeps its own).
func (im *importer) replace(ctx context.Context, t *tgt, src io.ReaderAt, size int64, plan *upgrade.Plan, from *member) error {
	own, err := fstx.LockOwn(ctx, im.opts.StateDir, t.path, im.opts.LockWait, im.opts.Lock.Poll)
	if err != nil {
		return fmt.Errorf("replace %s: %w", t.path, err)
	}
	defer own.Release()
	lock, err := fstx.LockAgent(ctx, t.path, im.opts.LockWait, im.opts.Lock)
	if err != nil {
		return fmt.Errorf("replace %s: %w", t.path, err)
	}
	defer lock.Release()
	if err := unchanged(t.path, t.meta); err != nil {
		return err
	}
	backup, err := im.run.BackupFile(t.path)
	if err != nil {
		return fmt.Errorf("back up %s: %w", t.path, err)
	}
	defer backup.Discard() // kept once journaled
	before, err := fstx.HashFile(t.path)
	if err != nil {
		return err
	}
	meta := t.meta
	if from != nil {
		// The source's times; the store file keeps its own mode and owner
		// (never widened, and what undo restores).
		meta.Mtime, meta.Atime = from.c.copyMeta.Mtime, from.c.copyMeta.Atime
	}
	_, err = fstx.WriteFile(t.path, meta, fstx.WriteOptions{AttrsFrom: t.path}, false,
		func(w io.Writer) error { return writeCopy(ctx, w, src, size, plan) },
		func(sum string) error {
			if from != nil {
				if err := unchanged(from.c.disk, from.c.diskMeta); err != nil {
					return err
				}
			}
			if err := unchanged(t.path, t.meta); err != nil {
				return err
			}
			if err := lock.Check(); err != nil {
				return err
			}
			err := im.run.Record(fstx.JournalEntry{Op: fstx.OpUpdate, Path: t.path, Size: t.meta.Size,
				Mtime: t.meta.Mtime, Mode: modeString(t.meta.Mode), SHA256Before: before, SHA256After: sum,
				Backup: backup.Rel, FromVersion: plan.FromVersion, Changes: len(plan.Changes), Repairs: repairs(plan),
				Time: im.opts.Now().UTC()})
			if err == nil {
				backup.Keep()
			}
			return err
		})
	if err != nil {
		if h, herr := fstx.HashFile(t.path); herr == nil && h == before {
			backup.Drop() // the file is as it was: no copy to keep
		}
		return fmt.Errorf("replace %s: %w", t.path, err)
	}
	return nil
}

// OpMkdir is the Op of the results [Undo] emits for the directories it
// removes.
const OpMkdir = fstx.OpMkdir

// Undo takes back the import run in runDir: files it created are removed
// if unchanged since, files it replaced are restored from their backups
// (fstx.Undo), then the directories it created are removed when empty.
// emit receives one result per journal entry and per directory removed.
func Undo(ctx context.Context, runDir string, opts fstx.UndoOptions, emit func(fstx.UndoResult) error) error {
	opts.Ops = []string{fstx.OpCreate, fstx.OpUpdate} // never a migrate run's rewrites
	if err := fstx.Undo(ctx, runDir, opts, emit); err != nil {
		return err
	}
	dirs, err := readLines(filepath.Join(runDir, createdDirsFile))
	if err != nil {
		return fmt.Errorf("undo %s: %w", runDir, err)
	}
	roots, err := fstx.RunRoots(runDir)
	if err != nil {
		return fmt.Errorf("undo %s: %w", runDir, err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if !fstx.Within(roots, dirs[i]) {
			continue // never one outside the run's store
		}
		if err := os.Remove(dirs[i]); err == nil {
			if err := emit(fstx.UndoResult{Op: OpMkdir, Path: dirs[i], Result: fstx.UndoRemoved}); err != nil {
				return err
			}
		}
	}
	return nil
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, string(b[start:i]))
			}
			start = i + 1
		}
	}
	return out, nil // a torn last line (a crash while recording) names no directory yet created
}
