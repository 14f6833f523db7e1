package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/pipeline"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// Results of migrating one file (the "result" of `migrate --json`).
const (
	ResultUpgraded = "upgraded" // rewritten as v4 (or, with --dry-run, would be)
	ResultCurrent  = "current"  // already v4: nothing written
	ResultSkipped  = "skipped"  // left untouched: see Reason
	ResultLocked   = "locked"   // the agent or another sessions-etl process holds the file
	ResultFailed   = "failed"   // an error stopped the rewrite; the original is intact
	ResultMoved    = "moved"    // --relayout moved the file (it may also have been upgraded)
)

// ReasonHardLinked: a file with several names is not rewritten, since a
// rename would separate them. The other reasons of a skipped file are
// validate statuses and the upgrade.Reason* constants.
const ReasonHardLinked = "hard_linked"

// Options configures [Run].
type Options struct {
	Roots    []ingest.Root
	Workers  int
	DryRun   bool
	Backup   bool   // copy originals into the run directory before replacing them
	RunsDir  string // where run directories are created (the --backup-dir)
	StateDir string // where sessions-etl keeps its advisory lock files
	LockWait time.Duration
	Lock     fstx.LockConfig
	Repair   bool
	// KeepUnresolvedParent: see PlanOptions.
	KeepUnresolvedParent bool
	Relayout             bool
	Now                  func() time.Time
	// Progress, when set, is called with the byte size of each file done.
	Progress func(int64)
}

// FileResult is what happened to one file.
type FileResult struct {
	Path        string           `json:"path"`
	Source      string           `json:"source"`
	FromVersion int              `json:"from_version,omitempty"`
	EarlyV4     bool             `json:"early_v4,omitempty"`
	Result      string           `json:"result"`
	Reason      string           `json:"reason,omitempty"`
	Detail      string           `json:"detail,omitempty"`
	ChangeCount int              `json:"change_count,omitempty"` // all changes; Changes lists the first ones
	Changes     []upgrade.Change `json:"changes,omitempty"`
	Repairs     []upgrade.Change `json:"repairs,omitempty"`
	Notes       []upgrade.Change `json:"notes,omitempty"`
	MovedTo     string           `json:"moved_to,omitempty"`
	// NotMoved is why --relayout left a file that is not in the current
	// layout where it is (NotMoved* constants; a note gives the detail). Not
	// a failure: the file is intact.
	NotMoved string `json:"not_moved,omitempty"`
	Size     int64  `json:"size_bytes"`
}

// Failed reports whether the file counts as "could not be upgraded" for
// the exit status (SPEC.md §5): failures, locks, unresolved parents and
// files left untouched because they are broken.
func (r FileResult) Failed() bool {
	switch r.Result {
	case ResultFailed, ResultLocked:
		return true
	case ResultSkipped:
		switch r.Reason {
		case string(validate.StatusEmpty), ingest.CodeBrokenLink, ingest.CodeSymlinkCycle, ingest.CodeNotASessionFile, ingest.CodeLinkOutsideRoot,
			ReasonArchived, ReasonSnapshot, ReasonCompressed, ReasonForeignDialect:
			return false // nothing to upgrade, nothing the user must fix
		}
		return true
	}
	return false
}

// Summary counts the results of a run.
type Summary struct {
	RunID        string         `json:"run_id,omitempty"`
	RunDir       string         `json:"run_dir,omitempty"`
	Files        int            `json:"files"`
	Bytes        int64          `json:"bytes"`
	ByResult     map[string]int `json:"by_result"`
	ByReason     map[string]int `json:"by_reason"`
	Failed       int            `json:"files_not_upgraded"`
	DryRun       bool           `json:"dry_run"`
	Elapsed      time.Duration  `json:"-"`
	TempsRemoved int            `json:"stale_temp_files_removed"`
	// NotMoved counts the files --relayout left where they are (not
	// failures), NotMovedByReason by FileResult.NotMoved.
	NotMoved         int            `json:"not_moved"`
	NotMovedByReason map[string]int `json:"not_moved_by_reason"`
}

// Run migrates every session file under opts.Roots: first a header scan of
// all files (to resolve parent paths among them), then each file in
// parallel under its locks. emit receives one result per file in discovery
// order. Discovery problems (broken links, unreadable directories) are
// emitted as skipped or failed results.
func Run(ctx context.Context, opts Options, emit func(FileResult) error) (Summary, error) {
	start := time.Now()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lock == (fstx.LockConfig{}) {
		opts.Lock = fstx.DefaultLockConfig
	}
	sum := Summary{ByResult: map[string]int{}, ByReason: map[string]int{}, NotMovedByReason: map[string]int{}, DryRun: opts.DryRun}

	// Phase 1: discover every file and read its header.
	type item struct {
		file  ingest.File
		issue *ingest.PathIssue
	}
	var items []item
	ix := upgrade.NewParentIndex()
	// A writing command never follows a directory link out of its roots.
	roots := slices.Clone(opts.Roots)
	for i := range roots {
		roots[i].Confine = true
	}
	err := ingest.Discover(ctx, roots, func(f ingest.File) error {
		items = append(items, item{file: f})
		if id, ok := session.ReadHeaderID(f.Path); ok {
			ix.Add(f.Path, id)
		}
		return nil
	}, func(pi ingest.PathIssue) { items = append(items, item{issue: &pi}) })
	if err != nil {
		return sum, err
	}

	var run *fstx.RunDir
	if !opts.DryRun {
		run, err = fstx.StartRun(opts.RunsDir, fstx.NewRunID(opts.Now()), opts.Backup)
		if err != nil {
			return sum, err
		}
		defer run.Close()
		roots := make([]string, len(opts.Roots))
		for i, r := range opts.Roots {
			roots[i] = r.Path
		}
		if err := run.RecordRoots(roots, opts.Now().UTC()); err != nil {
			return sum, err
		}
		sum.RunID, sum.RunDir = run.ID, run.Dir
		cleaned := map[string]bool{}
		for _, it := range items {
			if it.issue != nil {
				continue
			}
			dir := filepath.Dir(it.file.Path)
			if cleaned[dir] {
				continue
			}
			cleaned[dir] = true
			removed, _ := fstx.CleanStaleTemps(dir)
			sum.TempsRemoved += len(removed)
		}
	}

	m := &migrator{opts: opts, ix: ix, run: run}
	err = pipeline.Ordered(ctx, max(opts.Workers, 1), max(opts.Workers, 1)*8,
		func(ctx context.Context, yield func(item) error) error {
			for _, it := range items {
				if err := yield(it); err != nil {
					return err
				}
			}
			return nil
		},
		func(ctx context.Context, _ int, it item) (FileResult, error) {
			if it.issue != nil {
				res := FileResult{Path: it.issue.Path, Source: it.issue.Source, Result: ResultSkipped, Reason: it.issue.Issue.Code, Detail: it.issue.Issue.Message}
				if it.issue.Issue.Severity == ingest.SeverityError {
					res.Result = ResultFailed
				}
				return res, nil
			}
			res := m.file(ctx, it.file)
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if opts.Progress != nil {
				opts.Progress(it.file.Size)
			}
			return res, nil
		},
		func(r FileResult) error {
			sum.Files++
			sum.Bytes += r.Size
			sum.ByResult[r.Result]++
			if r.Reason != "" {
				sum.ByReason[r.Reason]++
			}
			if r.Failed() {
				sum.Failed++
			}
			if r.NotMoved != "" {
				sum.NotMoved++
				sum.NotMovedByReason[r.NotMoved]++
			}
			return emit(r)
		})
	if run != nil {
		m.removeEmptyDirs()
	}
	sum.Elapsed = time.Since(start)
	if run != nil && run.Empty() {
		sum.RunID, sum.RunDir = "", ""
	}
	return sum, err
}

type migrator struct {
	opts     Options
	ix       *upgrade.ParentIndex
	run      *fstx.RunDir
	mu       sync.Mutex // serializes directory creation for moves (mkdirs)
	madeDirs []string   // directories the run created, parents first
}

// maxAttempts bounds re-planning when a file keeps changing under us (a
// writer that ignores the lock).
const maxAttempts = 3

func (m *migrator) file(ctx context.Context, f ingest.File) FileResult {
	res := FileResult{Path: f.Path, Source: f.Source, Size: f.Size}
	if r, ok := readOnly(f, res); ok {
		return r
	}
	popts := upgrade.PlanOptions{Repair: m.opts.Repair, KeepUnresolvedParent: m.opts.KeepUnresolvedParent, ResolveParent: m.ix.Resolve}
	if !m.opts.Backup {
		popts.RemovedKept = "not kept: --no-backup"
	}
	if m.opts.DryRun {
		fh, err := ingest.OpenRegular(f.Path)
		if err != nil {
			return failed(res, err)
		}
		defer fh.Close()
		st, err := fh.Stat()
		if err != nil {
			return failed(res, err)
		}
		plan, err := upgrade.PlanFile(ctx, fh, st.Size(), popts)
		res = describe(res, plan, err)
		if m.opts.Relayout && (res.Result == ResultUpgraded || res.Result == ResultCurrent) {
			res = m.relayout(ctx, f, res)
		}
		return res
	}
	var last FileResult
	for attempt := 0; attempt < maxAttempts; attempt++ {
		r, retry := m.transaction(ctx, f, popts, attempt)
		if !retry {
			if m.opts.Relayout && (r.Result == ResultUpgraded || r.Result == ResultCurrent) {
				r = m.relayout(ctx, f, r)
			}
			return r
		}
		last = r
	}
	last.Result = ResultFailed
	last.Reason = "changed_during_migration"
	last.Detail = "the file kept changing while it was being migrated (a writer that ignores the lock?): left as it is"
	return last
}

func failed(res FileResult, err error) FileResult {
	res.Result = ResultFailed
	res.Reason = "error"
	res.Detail = err.Error()
	return res
}

// describe turns a plan (or a planning error) into a result without writing.
func describe(res FileResult, plan *upgrade.Plan, err error) FileResult {
	var se *upgrade.SkipError
	switch {
	case errors.As(err, &se):
		res.Result = ResultSkipped
		res.Reason = se.Reason
		res.Detail = se.Detail
		return res
	case err != nil:
		return failed(res, err)
	}
	res.FromVersion = plan.FromVersion
	res.EarlyV4 = plan.EarlyV4
	res.Changes, res.Repairs, res.Notes = plan.Changes, plan.Repairs, plan.Notes
	res.ChangeCount = plan.ChangeCount
	if plan.NeedsWrite() {
		res.Result = ResultUpgraded
	} else {
		res.Result = ResultCurrent
	}
	return res
}

// transaction migrates one file under both locks. retry is true when the
// file changed under us and the whole transaction should run again.
func (m *migrator) transaction(ctx context.Context, f ingest.File, popts upgrade.PlanOptions, attempt int) (res FileResult, retry bool) {
	res = FileResult{Path: f.Path, Source: f.Source, Size: f.Size}
	// A session reached through a symbolic link is rewritten where it really
	// is: replacing the link by a regular file would split the session in two.
	real, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return failed(res, err), false
	}
	if real != f.Path {
		if lfi, err := os.Lstat(f.Path); err == nil && lfi.Mode()&os.ModeSymlink != 0 {
			res.Notes = append(res.Notes, upgrade.Change{What: "a symbolic link: its target " + real + " is the file rewritten"})
		}
		f.Path = real
	}
	// Plan first, without any lock (SPEC.md §2.3 step 2 compares after
	// locking): a file with nothing to write is never locked, so a
	// read-only file system or a busy agent does not fail a current file.
	linkNotes := res.Notes
	fh, meta, plan, res := m.plan(ctx, f.Path, popts, res)
	if fh == nil || res.Result != ResultUpgraded {
		fstx.RemoveStaleLock(f.Path, m.opts.Lock) // a killed run's, say
		return res, false
	}
	defer func() { fh.Close() }()
	own, err := fstx.LockOwn(ctx, m.opts.StateDir, f.Path, m.opts.LockWait, m.opts.Lock.Poll)
	if err != nil {
		return lockResult(res, err), false
	}
	defer own.Release()
	lock, err := fstx.LockAgent(ctx, f.Path, m.opts.LockWait, m.opts.Lock)
	if err != nil {
		return lockResult(res, err), false
	}
	defer lock.Release()
	// Compare: a file that changed between the plan and the lock is read
	// and planned again, under the lock.
	if changed, err := changedSince(fh, f.Path, meta); err != nil {
		return failed(res, err), false
	} else if changed {
		fh.Close()
		fh, meta, plan, res = m.plan(ctx, f.Path, popts, FileResult{Path: f.Path, Source: f.Source, Size: f.Size, Notes: linkNotes})
		if fh == nil || res.Result != ResultUpgraded {
			return res, false
		}
	}
	if meta.Nlink > 1 {
		// A rename gives only this name the new bytes; the other names of
		// the inode would keep the old ones and the session would split.
		res.Result, res.Reason = ResultSkipped, ReasonHardLinked
		res.Detail = fmt.Sprintf("the file has %d names (hard links): an atomic rewrite would separate them; remove the other names, or migrate a copy", meta.Nlink)
		return res, false
	}

	// Write the migrated bytes to a temporary file, hashing both sides and
	// copying the original into the backup as it is read.
	hBefore := sha256.New()
	var backup *fstx.Backup
	if m.run.Backup {
		backup, err = m.run.NewBackup(f.Path)
		if err != nil {
			return failed(res, err), false
		}
	}
	defer backup.Discard() // kept once journaled
	tmp, err := fstx.WriteTemp(f.Path, meta, fstx.WriteOptions{AttrsFrom: f.Path}, func(w io.Writer) error {
		var src io.Reader = io.NewSectionReader(fh, 0, meta.Size)
		if backup != nil {
			src = io.TeeReader(src, io.MultiWriter(hBefore, backup))
		} else {
			src = io.TeeReader(src, hBefore)
		}
		return upgrade.Apply(w, src, plan)
	})
	if backup != nil {
		if berr := backup.Finish(); berr != nil && err == nil {
			tmp.Discard()
			err = berr
		}
	}
	if err != nil {
		return failed(res, err), false
	}
	defer tmp.Discard()

	// Check the result before it replaces anything: it must validate as
	// current v4 with every entry of the original.
	if err := postCheck(ctx, tmp.Path, plan); err != nil {
		res.Result, res.Reason, res.Detail = ResultFailed, upgrade.ReasonCheckFailed, err.Error()
		return res, false
	}
	entry := fstx.JournalEntry{Op: fstx.OpRewrite, Path: f.Path, Size: meta.Size, Mtime: meta.Mtime, Mode: fstx.ModeString(meta.Mode),
		SHA256Before: hex.EncodeToString(hBefore.Sum(nil)), SHA256After: tmp.SHA256,
		FromVersion: plan.FromVersion, Changes: plan.ChangeCount, Time: m.opts.Now().UTC()}
	if backup != nil {
		entry.Backup = backup.Rel
	}
	for _, r := range plan.Repairs {
		entry.Repairs = append(entry.Repairs, r.What)
	}

	// Compare: the original must be exactly what was planned from, and the
	// lock still ours.
	if changed, err := changedSince(fh, f.Path, meta); err != nil || changed {
		if err != nil {
			return failed(res, err), false
		}
		return res, true
	}
	if err := lock.Check(); err != nil {
		res.Result, res.Reason, res.Detail = ResultFailed, "lock_lost", err.Error()
		return res, false
	}
	if err := m.run.Record(entry); err != nil {
		return failed(res, err), false
	}
	backup.Keep()
	if err := tmp.Commit(); err != nil {
		if !tmp.Published {
			backup.Drop() // the original is in place: no copy to keep
		}
		return failed(res, err), false
	}
	// An append by a writer that ignores the lock, landing on the old inode
	// between our last check and the rename, would be lost: carry it over.
	grace := time.Duration(0)
	if attempt > 0 {
		grace = lateAppendGrace // someone writes without the lock: watch the old inode a little longer
	}
	if note, err := recoverLateAppend(fh, f.Path, meta, tmp.Size, grace); err != nil {
		res.Notes = append(res.Notes, upgrade.Change{What: "could not carry over bytes appended during the rename: " + err.Error()})
	} else if note != "" {
		res.Notes = append(res.Notes, upgrade.Change{What: note})
	}
	return res, false
}

func lockResult(res FileResult, err error) FileResult {
	var le *fstx.LockedError
	if errors.As(err, &le) {
		res.Result, res.Reason, res.Detail = ResultLocked, "locked", le.Hint()
		return res
	}
	if errors.Is(err, fstx.ErrLocked) {
		res.Result, res.Reason, res.Detail = ResultLocked, "locked", err.Error()
		return res
	}
	return failed(res, err)
}

// plan opens and plans the file at path. fh is nil when it could not be
// opened (res says why); otherwise the caller closes it.
func (m *migrator) plan(ctx context.Context, path string, popts upgrade.PlanOptions, res FileResult) (*os.File, fstx.Meta, *upgrade.Plan, FileResult) {
	fh, err := ingest.OpenRegular(path)
	if err != nil {
		return nil, fstx.Meta{}, nil, failed(res, err)
	}
	meta, err := fstx.Stat(fh)
	if err != nil {
		fh.Close()
		return nil, fstx.Meta{}, nil, failed(res, err)
	}
	res.Size = meta.Size
	notes := res.Notes
	plan, err := upgrade.PlanFile(ctx, fh, meta.Size, popts)
	res = describe(res, plan, err)
	res.Notes = append(notes, res.Notes...)
	if res.Result != ResultUpgraded {
		fh.Close()
		return nil, meta, plan, res
	}
	return fh, meta, plan, res
}

// changedSince reports whether the file at path is no longer the open file
// fh with metadata meta (size, mtime or inode changed).
func changedSince(fh *os.File, path string, meta fstx.Meta) (bool, error) {
	now, err := fstx.Stat(fh)
	if err != nil {
		return false, err
	}
	if now.Size != meta.Size || !now.Mtime.Equal(meta.Mtime) {
		return true, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return fstx.MetaOf(fi).Ino != meta.Ino, nil
}

// lateAppendGrace is how long the old inode is watched after the rename
// when the file was seen changing during its migration.
const lateAppendGrace = 50 * time.Millisecond

// recoverLateAppend carries over to path whatever a writer that ignores
// the lock appended to the old inode fh after meta was taken (an append
// that started before the rename lands there). The bytes go where they
// were appended: at the old end of the file, newSize (the migrated bytes),
// before anything appended to the new file since, so the file keeps the
// order of the appends. With grace > 0 the old inode is watched that long.
func recoverLateAppend(fh *os.File, path string, meta fstx.Meta, newSize int64, grace time.Duration) (string, error) {
	carried := int64(0)
	deadline := time.Now().Add(grace)
	for {
		now, err := fstx.Stat(fh)
		if err != nil {
			return "", err
		}
		if n := now.Size - meta.Size - carried; n > 0 {
			if err := carryOver(fh, path, meta.Size+carried, n, newSize+carried, now); err != nil {
				return "", err
			}
			carried += n
		}
		if !time.Now().Before(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if carried == 0 {
		return "", nil
	}
	return fmt.Sprintf("carried over %d bytes appended by another writer during the rename", carried), nil
}

// carryOver puts the n bytes at off of the old inode fh into the file at
// path at offset at. When nothing follows at (no append reached the new
// file yet) they are appended; otherwise the file is replaced, atomically,
// by its first at bytes, the carried bytes and the rest, and what reaches
// the replaced inode meanwhile is carried over in turn.
func carryOver(fh *os.File, path string, off, n, at int64, now fstx.Meta) error {
	extra := make([]byte, n)
	if _, err := fh.ReadAt(extra, off); err != nil {
		return err
	}
	cur, err := fstx.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer cur.Close()
	cm, err := fstx.Stat(cur)
	if err != nil {
		return err
	}
	if cm.Size <= at {
		if _, err := cur.Write(extra); err != nil {
			return err
		}
		if err := cur.Sync(); err != nil {
			return err
		}
		_ = os.Chtimes(path, now.Atime, now.Mtime)
		return nil
	}
	// Later appends are already in the new file: insert before them.
	meta := cm
	meta.Mtime, meta.Atime = now.Mtime, now.Atime
	tmp, err := fstx.WriteTemp(path, meta, fstx.WriteOptions{AttrsFrom: path}, func(w io.Writer) error {
		if _, err := io.Copy(w, io.NewSectionReader(cur, 0, at)); err != nil {
			return err
		}
		if _, err := w.Write(extra); err != nil {
			return err
		}
		_, err := io.Copy(w, io.NewSectionReader(cur, at, cm.Size-at))
		return err
	})
	if err != nil {
		return err
	}
	defer tmp.Discard()
	if changed, err := changedSince(cur, path, cm); err != nil || changed {
		// Still being appended to: never lose the bytes, append them.
		tmp.Discard()
		if _, err := cur.Write(extra); err != nil {
			return err
		}
		return cur.Sync()
	}
	if err := tmp.Commit(); err != nil {
		if tmp.Published {
			return err
		}
		if _, err := cur.Write(extra); err != nil {
			return err
		}
		return cur.Sync()
	}
	// Appends that reached the replaced inode after it was read follow.
	_, err = recoverLateAppend(cur, path, cm, tmp.Size, 0)
	return err
}

// postCheck validates the temporary file: current v4, same entries.
func postCheck(ctx context.Context, tmp string, plan *upgrade.Plan) error {
	res, err := validate.File(ctx, &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), tmp)
	if err != nil {
		return err
	}
	keptParent := plan.KeptParent && res.Status == validate.StatusNeedsUpgrade && res.EarlyV4 &&
		res.Header.HasParentPath && !res.Header.HasTimestamp
	if res.Status != validate.StatusCurrent && !keptParent {
		return fmt.Errorf("migrated bytes validate as %s (%s); original left untouched", res.Status, res.FirstError())
	}
	if res.Entries != plan.Entries {
		return fmt.Errorf("migrated file has %d entries, original %d; original left untouched", res.Entries, plan.Entries)
	}
	return nil
}
