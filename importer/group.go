package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// maxAttempts bounds the re-reads of a group whose files keep changing.
const maxAttempts = 3

// errChanged reports that a file changed between being read and being
// committed: the group is read again.
var errChanged = errors.New("changed while it was being read")

// member is one source file of a group, open, with its upgrade plan.
type member struct {
	sf   *srcFile
	res  *Result
	c    *content
	plan *upgrade.Plan // nil: not importable (res says why)
	hdr  map[string]any
	side *side
}

func (m *member) stream() (io.Reader, func()) { return upgradedStream(m.c.ra, m.c.size, m.plan) }

// tgt is a store file holding the session being imported.
type tgt struct {
	path    string
	fh      *os.File
	meta    fstx.Meta
	status  validate.Status
	version int
	plan    *upgrade.Plan // needs_upgrade and plannable: its own upgrade
	planErr error         // needs_upgrade but not plannable
	side    *side
	detail  string // why it does not load
}

// afterRead is a test seam: it runs after a group's source files are read
// and planned, before anything is compared or written.
var afterRead = func(paths []string) {}

// group imports one group of source files sharing a session id.
func (im *importer) group(ctx context.Context, g *group) []Result {
	var rs []Result
	for attempt := 1; ; attempt++ {
		var retry bool
		rs, retry = im.attempt(ctx, g)
		if !retry || ctx.Err() != nil {
			return rs
		}
		if attempt == maxAttempts {
			break
		}
	}
	for i := range rs {
		if rs[i].Result == ResultSkipped && (rs[i].Reason == ReasonInTarget || g.members[i].issue != nil) {
			continue
		}
		rs[i].Result, rs[i].Reason = ResultFailed, ReasonChanged
		rs[i].Detail = "the source or the store's copy kept changing while it was read (an agent writing to it?): not imported"
	}
	return rs
}

// attempt reads the group's files, decides and writes. retry is true when
// a file changed under it and the group must be read again.
func (im *importer) attempt(ctx context.Context, g *group) (rs []Result, retry bool) {
	rs = make([]Result, len(g.members))
	var members, valid []*member
	defer func() {
		for _, m := range members {
			_ = m.c.close()
		}
	}()
	for i, sf := range g.members {
		r := &rs[i]
		switch {
		case sf.issue != nil:
			*r = Result{Path: sf.issue.Path, Source: sf.issue.Source, Result: ResultSkipped, Reason: sf.issue.Issue.Code, Detail: sf.issue.Issue.Message}
			if sf.issue.Issue.Severity == ingest.SeverityError {
				r.Result = ResultFailed
			}
			continue
		case sf.skip != "":
			*r = Result{Path: sf.file.Path, Source: sf.file.Source, Result: ResultSkipped, Reason: sf.skip,
				Detail: skipDetail[sf.skip], Size: sf.file.Size}
			continue
		case sf.inTarget:
			*r = Result{Path: sf.file.Path, Source: sf.file.Source, Result: ResultSkipped, Reason: ReasonInTarget,
				Detail: "the file is inside the target store", Size: sf.file.Size}
			continue
		}
		*r = Result{Path: sf.file.Path, Source: sf.file.Source, SessionID: sf.id, Size: sf.file.Size}
		r.Notes = append(r.Notes, sf.notes...)
		m := im.prepare(ctx, sf, r)
		if m == nil {
			continue
		}
		members = append(members, m)
		if m.plan != nil {
			valid = append(valid, m)
		}
	}
	paths := make([]string, len(members))
	for i, m := range members {
		paths[i] = m.sf.file.Path
	}
	afterRead(paths)
	if len(valid) > 0 {
		var err error
		retry, err = im.decide(ctx, valid)
		if err != nil {
			// An error stops a decision before its write (nothing after a
			// write can fail): the group's sessions are not imported, the
			// duplicates of a copy that failed included.
			for _, m := range valid {
				fail(m.res, err)
			}
		}
	}
	if retry {
		return rs, true
	}
	// Whatever was decided without writing was decided on a consistent
	// read only if the sources are still what was read.
	wrote := false
	for _, m := range valid {
		wrote = wrote || m.res.Wrote()
	}
	for _, m := range members {
		if m.res.Wrote() {
			continue
		}
		if ch, _ := changed(m.c.disk, m.c.diskMeta); ch {
			if !wrote {
				return rs, true
			}
			m.res.Result, m.res.Reason = ResultFailed, ReasonChanged
			m.res.Detail = "the source changed while the session was imported from another file: run import again"
		}
	}
	return rs, false
}

func fail(r *Result, err error) {
	r.Result, r.Reason, r.Detail = ResultFailed, ReasonError, err.Error()
	var ce *checkError
	if errors.As(err, &ce) {
		r.Reason = upgrade.ReasonCheckFailed
	}
	if errors.Is(err, fstx.ErrLocked) {
		r.Reason = ReasonLocked
		var le *fstx.LockedError
		if errors.As(err, &le) {
			r.Detail = le.Hint()
		}
	}
}

// prepare opens a source file and plans its upgrade. It returns nil when
// the file cannot be opened (r says why).
func (im *importer) prepare(ctx context.Context, sf *srcFile, r *Result) *member {
	c, err := im.openContent(ctx, sf)
	if err != nil {
		fail(r, err)
		return nil
	}
	if sf.plain() {
		r.Size = c.size
	}
	m := &member{sf: sf, res: r, c: c}
	plan, err := upgrade.PlanFile(ctx, c.ra, c.size, upgrade.PlanOptions{Repair: im.opts.Repair,
		KeepUnresolvedParent: im.opts.KeepUnresolvedParent, ResolveParent: im.ix.Resolve,
		RemovedKept: RemovedKept})
	var se *upgrade.SkipError
	switch {
	case errors.As(err, &se):
		r.Result, r.Reason, r.Detail = ResultSkipped, se.Reason, se.Detail
		return m
	case err != nil:
		fail(r, fmt.Errorf("read %s: %w", sf.file.Path, err))
		return m
	}
	if c.lineShift > 0 {
		plan.Changes = shiftLines(plan.Changes, c.lineShift)
		plan.Repairs = shiftLines(plan.Repairs, c.lineShift)
		plan.Notes = shiftLines(plan.Notes, c.lineShift)
	}
	r.SessionID = plan.SessionID
	r.FromVersion, r.EarlyV4 = plan.FromVersion, plan.EarlyV4
	if c.titleNote != "" {
		r.Notes = append(r.Notes, upgrade.Change{Line: 1, What: c.titleNote})
	}
	r.Notes = append(r.Notes, plan.Notes...)
	if !usableID(plan.SessionID) {
		r.Result, r.Reason = ResultSkipped, ReasonUnusableID
		r.Detail = fmt.Sprintf("session id %q cannot be part of a file name", plan.SessionID)
		return m
	}
	m.plan = plan
	return m
}

// changed reports whether the file at path is no longer the one meta
// describes (size, mtime or inode differ, or it is gone).
func changed(path string, meta fstx.Meta) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return true, err
	}
	now := fstx.MetaOf(fi)
	return now.Size != meta.Size || !now.Mtime.Equal(meta.Mtime) || now.Ino != meta.Ino, nil
}

func unchanged(path string, meta fstx.Meta) error {
	if ch, err := changed(path, meta); err != nil {
		return fmt.Errorf("%s: %w: %v", path, errChanged, err)
	} else if ch {
		return fmt.Errorf("%s: %w", path, errChanged)
	}
	return nil
}

// decide chooses among the valid source files of one session id, compares
// the chosen one with the store and writes. It fills the members' results.
func (im *importer) decide(ctx context.Context, valid []*member) (retry bool, err error) {
	id := valid[0].plan.SessionID
	targets := im.store.lookup(id)
	cand := valid[0]
	for _, m := range valid[1:] {
		if m.plan.Entries > cand.plan.Entries {
			cand = m
		}
	}
	if len(valid) == 1 && len(targets) == 1 {
		// The common case of a second run: the store's copy is exactly the
		// bytes this import writes (it wrote them).
		same, err := sameBytes(cand, targets[0])
		if err != nil {
			return false, err
		}
		if same {
			cand.res.Result, cand.res.Target = ResultAlreadyImported, targets[0]
			return false, nil
		}
	}
	if err := readHeaders(ctx, valid, cand, len(valid) > 1 || len(targets) > 0); err != nil {
		return false, err
	}
	// The same session in several sources: import the longest once.
	if len(valid) > 1 {
		if conflict, err := im.sourcesConflict(ctx, id, valid, cand); err != nil || conflict {
			return false, err
		}
	}
	if len(targets) == 0 {
		return im.importNew(ctx, id, valid, cand)
	}
	return im.compareWithStore(ctx, id, targets, valid, cand)
}

// readHeaders reads the header of every valid member, with the entry sums
// the comparisons need (sides) when compare is set, else the candidate's
// header only.
func readHeaders(ctx context.Context, valid []*member, cand *member, compare bool) error {
	if !compare {
		r, done := cand.stream()
		hdr, err := headerOf(ctx, r)
		done()
		if err != nil {
			return fmt.Errorf("read %s: %w", cand.sf.file.Path, err)
		}
		cand.hdr = hdr
		return nil
	}
	for _, m := range valid {
		side, err := newSide(ctx, m.sf.file.Path, m.stream)
		if err != nil {
			return err
		}
		m.side, m.hdr = side, side.header
	}
	return nil
}

// sourcesConflict compares the other sources of the session with the
// candidate: each must have the same header and be equal to it or a prefix
// of it. When one is not, every member is a conflict and nothing is
// imported (conflict is then true).
func (im *importer) sourcesConflict(ctx context.Context, id string, valid []*member, cand *member) (conflict bool, err error) {
	var bad []string
	reason := ReasonEntriesDiffer
	for _, m := range valid {
		if m == cand {
			continue
		}
		if hd := headerDiff(m.hdr, cand.hdr, im.ix.Resolve); hd != "" {
			bad = append(bad, fmt.Sprintf("%s: %s", m.sf.file.Path, hd))
			reason = ReasonHeaderDiffers
			continue
		}
		rel, at, err := relate(ctx, m.side, cand.side)
		if err != nil {
			return false, err
		}
		if rel != relEqual && rel != relAPrefix {
			bad = append(bad, fmt.Sprintf("%s: entry %d differs", m.sf.file.Path, at+1))
		}
	}
	if len(bad) == 0 {
		return false, nil
	}
	for _, m := range valid {
		m.res.Result, m.res.Reason = ResultConflict, reason
		m.res.Detail = fmt.Sprintf("%d source files hold session %s with different contents (compared with %s): %s; nothing imported",
			len(valid), id, cand.sf.file.Path, strings.Join(bad, "; "))
	}
	return true, nil
}

// markDuplicates gives every member but the candidate the duplicate
// result: the same session, imported (or found) at target.
func markDuplicates(valid []*member, cand *member, target string) {
	for _, m := range valid {
		if m != cand {
			m.res.Result, m.res.DuplicateOf, m.res.Target = ResultDuplicate, cand.sf.file.Path, target
			m.res.Detail = "the same session as " + cand.sf.file.Path
		}
	}
}

// importNew writes the candidate as a new store file (the store does not
// hold its id).
func (im *importer) importNew(ctx context.Context, id string, valid []*member, cand *member) (retry bool, err error) {
	p, notes := im.newPath(cand)
	if _, err := os.Lstat(p); err == nil {
		return im.pathTaken(cand, p, id)
	}
	res := cand.res
	res.Target = p
	res.Notes = append(res.Notes, notes...)
	res.Changes, res.Repairs = cand.plan.Changes, cand.plan.Repairs
	if !im.opts.DryRun {
		switch err := im.create(ctx, cand, p); {
		case errors.Is(err, errChanged):
			return true, nil
		case errors.Is(err, fs.ErrExist):
			return im.pathTaken(cand, p, id)
		case err != nil:
			return false, err
		}
	}
	res.Result = ResultImported
	markDuplicates(valid, cand, p)
	return false, nil
}

// verdict is a store file compared with the candidate.
type verdict struct {
	t   *tgt
	rel relation
}

// compareWithStore compares the candidate with the store's files holding
// its id and acts on the best of them (bestTarget): a conflict, an update
// of a prefix, an in-place upgrade of an older copy, or nothing to do.
func (im *importer) compareWithStore(ctx context.Context, id string, targets []string, valid []*member, cand *member) (retry bool, err error) {
	var tgs []*tgt
	defer func() {
		for _, t := range tgs {
			t.fh.Close()
		}
	}()
	for _, p := range targets {
		t, err := im.openTarget(ctx, p)
		if err != nil {
			return false, err
		}
		if t == nil {
			im.store.remove(id, p)
			continue
		}
		tgs = append(tgs, t)
	}
	if len(tgs) == 0 {
		return true, nil // the store's copies vanished: start again
	}
	best, why, reason, err := im.bestTarget(ctx, cand, tgs)
	if err != nil {
		return false, err
	}
	res := cand.res
	if best == nil {
		res.Result, res.Reason = ResultConflict, reason
		res.Target = tgs[0].path
		res.Detail = fmt.Sprintf("the store holds session %s with different contents: %s; not overwritten", id, strings.Join(why, "; "))
		for _, m := range valid {
			if m != cand {
				m.res.Result, m.res.Reason, m.res.Target, m.res.Detail = ResultConflict, reason, res.Target, res.Detail
			}
		}
		return false, nil
	}
	t := best.t
	res.Target = t.path
	if len(tgs) > 1 {
		res.Notes = append(res.Notes, upgrade.Change{What: fmt.Sprintf("%d files in the store hold session %s; compared with %s", len(tgs), id, t.path)})
	}
	if retry, err := im.applyVerdict(ctx, best, cand); err != nil || retry {
		return retry, err
	}
	markDuplicates(valid, cand, t.path)
	return false, nil
}

// bestTarget compares the candidate with each store file: the best is an
// equal copy, then one that continues the source, then one the source
// continues. With none, why lists each file's difference and reason the
// conflict's reason.
func (im *importer) bestTarget(ctx context.Context, cand *member, tgs []*tgt) (best *verdict, why []string, reason string, err error) {
	reason = ReasonEntriesDiffer
	for _, t := range tgs {
		if t.side == nil {
			why = append(why, fmt.Sprintf("%s does not load (%s)", t.path, t.detail))
			reason = ReasonTargetInvalid
			continue
		}
		if hd := headerDiff(cand.hdr, t.side.header, im.ix.Resolve); hd != "" {
			why = append(why, fmt.Sprintf("%s: %s", t.path, hd))
			reason = ReasonHeaderDiffers
			continue
		}
		rel, at, err := relate(ctx, cand.side, t.side)
		if err != nil {
			return nil, nil, "", err
		}
		if rel == relDiffer {
			why = append(why, fmt.Sprintf("%s: entry %d of %d differs", t.path, at+1, len(cand.side.sums)))
			continue
		}
		if best == nil || rank(rel) < rank(best.rel) {
			best = &verdict{t, rel}
		}
	}
	return best, why, reason, nil
}

// applyVerdict acts on the best store file: replaced when it is a strict
// prefix of the source (the source grew), upgraded in place when it holds
// the same entries (or more) in an older format, else left as it is.
func (im *importer) applyVerdict(ctx context.Context, best *verdict, cand *member) (retry bool, err error) {
	res, t := cand.res, best.t
	switch best.rel {
	case relBPrefix: // the store's copy is a strict prefix: the source grew
		res.Result, res.Reason = ResultUpdated, ReasonSourceExtends
		res.Detail = fmt.Sprintf("the source has %d entries, the store's copy %d: replaced", len(cand.side.sums), len(t.side.sums))
		res.Changes, res.Repairs = cand.plan.Changes, cand.plan.Repairs
		if !im.opts.DryRun {
			if err := im.replace(ctx, t, cand.c.ra, cand.c.size, cand.plan, cand); err != nil {
				return errors.Is(err, errChanged), ignoreChanged(err)
			}
		}
		return false, nil
	}
	res.Result = ResultAlreadyImported
	if best.rel == relAPrefix {
		res.Reason = ReasonTargetExtends
		res.Detail = fmt.Sprintf("the store's copy continues the source (%d entries, the source %d)", len(t.side.sums), len(cand.side.sums))
	}
	switch {
	case t.plan != nil:
		// The store holds the session in an older format: upgrade it in
		// place, as the agent would when opening it.
		res.Result, res.Reason = ResultUpdated, ReasonTargetUpgraded
		res.Detail = fmt.Sprintf("the store's copy holds the same entries in format v%d: upgraded to v4 in place", t.version)
		if best.rel == relAPrefix {
			res.Detail = fmt.Sprintf("the store's copy continues the source in format v%d: upgraded to v4 in place", t.version)
		}
		if !im.opts.DryRun {
			if err := im.replace(ctx, t, t.fh, t.meta.Size, t.plan, nil); err != nil {
				return errors.Is(err, errChanged), ignoreChanged(err)
			}
		}
	case t.planErr != nil:
		res.Notes = append(res.Notes, upgrade.Change{What: fmt.Sprintf("the store's copy is format v%d and cannot be upgraded (%v): left as it is", t.version, t.planErr)})
	}
	return false, nil
}

// ignoreChanged is err unless it is errChanged (a retry, not an error).
func ignoreChanged(err error) error {
	if errors.Is(err, errChanged) {
		return nil
	}
	return err
}

// sameBytes reports whether the store file p holds exactly the upgraded
// bytes of m: same size, same bytes (compared as they are produced).
func sameBytes(m *member, p string) (bool, error) {
	size := m.c.size
	for _, e := range m.plan.Edits {
		size += int64(len(e.New)) - (e.End - e.Off)
	}
	f, err := ingest.OpenRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	if fi.Size() != size || !fi.Mode().IsRegular() {
		return false, nil
	}
	cw := &cmpWriter{r: bufio.NewReaderSize(f, 256<<10), buf: make([]byte, 64<<10)}
	err = upgrade.Apply(cw, io.NewSectionReader(m.c.ra, 0, m.c.size), m.plan)
	switch {
	case errors.Is(err, errDiffer), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("compare %s with %s: %w", m.sf.file.Path, p, err)
	}
	return true, nil
}

var errDiffer = errors.New("the bytes differ")

// cmpWriter compares what is written to it with what r holds.
type cmpWriter struct {
	r   io.Reader
	buf []byte
}

func (c *cmpWriter) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		n := min(len(p)-done, len(c.buf))
		if _, err := io.ReadFull(c.r, c.buf[:n]); err != nil {
			return done, err
		}
		if !bytes.Equal(c.buf[:n], p[done:done+n]) {
			return done, errDiffer
		}
		done += n
	}
	return len(p), nil
}

func rank(r relation) int {
	switch r {
	case relEqual:
		return 0
	case relAPrefix:
		return 1
	}
	return 2
}

// pathTaken handles a new copy's file name that is already in use: by the
// same session (another process imported it meanwhile: compare again), or
// by another one (conflict).
func (im *importer) pathTaken(cand *member, p, id string) (bool, error) {
	if other, ok := session.ReadHeaderID(p); ok && other == id {
		im.store.add(id, p)
		return true, nil
	}
	res := cand.res
	res.Result, res.Reason, res.Target = ResultConflict, ReasonPathTaken, p
	res.Detail = fmt.Sprintf("%s already exists and does not hold session %s: not overwritten", p, id)
	return false, nil
}

// newPath is where a new copy goes: <target>/<encoded cwd>/<name>, or
// <target>/<name> with --flat or without a cwd.
func (im *importer) newPath(m *member) (string, []upgrade.Change) {
	name := targetName(copyName(m.sf.file.Path), m.plan.SessionID, m.hdr, m.c.copyMeta.Mtime)
	if im.opts.Flat {
		return filepath.Join(im.target, name), nil
	}
	cwd, _ := m.hdr["cwd"].(string)
	if cwd == "" {
		return filepath.Join(im.target, name), []upgrade.Change{{What: "the header has no cwd: copied to the top of the store"}}
	}
	return filepath.Join(im.target, upgrade.EncodeCwd(cwd), name), nil
}

// openTarget opens and digests a store file. It returns nil when the file
// no longer exists.
func (im *importer) openTarget(ctx context.Context, p string) (*tgt, error) {
	fh, err := ingest.OpenRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	meta, err := fstx.Stat(fh)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	t := &tgt{path: p, fh: fh, meta: meta}
	raw := func() (io.Reader, func()) { return io.NewSectionReader(fh, 0, meta.Size), func() {} }
	v := &hashVisitor{ck: validate.NewChecker()}
	if err := digest(ctx, io.NewSectionReader(fh, 0, meta.Size), v); err != nil {
		fh.Close()
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	res := v.ck.Finish()
	t.status, t.version = res.Status, res.FormatVersion
	switch res.Status {
	case validate.StatusCurrent:
	case validate.StatusNeedsUpgrade:
		plan, err := upgrade.PlanFile(ctx, fh, meta.Size, upgrade.PlanOptions{ResolveParent: im.ix.Resolve})
		if err != nil {
			t.planErr = err
			break
		}
		t.plan = plan
		up := func() (io.Reader, func()) { return upgradedStream(fh, meta.Size, plan) }
		if t.side, err = newSide(ctx, p, up); err != nil {
			fh.Close()
			return nil, err
		}
		return t, nil
	default:
		t.detail = string(res.Status)
		if e := res.FirstError(); e != "" {
			t.detail += ": " + e
		}
		return t, nil
	}
	if t.side, err = sideFrom(p, v, raw); err != nil {
		fh.Close()
		return nil, err
	}
	return t, nil
}
