package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/validate"
)

// EncodeCwd turns a working directory into the per-cwd directory name pi
// and Atomic use (SPEC.md §1.1): "--" + cwd without its leading separator,
// with '/', '\' and ':' replaced by '-', + "--".
func EncodeCwd(cwd string) string {
	s := strings.TrimLeft(cwd, `/\`)
	s = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s)
	return "--" + s + "--"
}

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
			return "", errors.New("the header has no cwd to choose a per-cwd directory")
		}
		return filepath.Join(dir, "sessions", EncodeCwd(hdr.Cwd), filepath.Base(path)), nil
	case filepath.Base(parent) == "sessions" && filepath.Base(filepath.Dir(parent)) == "agent" &&
		filepath.Base(filepath.Dir(filepath.Dir(parent))) == ".prime":
		if hdr.ID == "" || strings.ContainsAny(hdr.ID, `/\`) {
			return "", errors.New("the header has no usable session id for a flat file name")
		}
		return filepath.Join(parent, hdr.ID+".jsonl"), nil
	}
	return "", nil
}

// moveNoReplace renames from to to, failing with an error wrapping
// os.ErrExist when to exists: never overwrite (SPEC.md §2.4).
func moveNoReplace(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The file system cannot rename without replacing: link + unlink.
		if err := os.Link(from, to); err != nil {
			return err
		}
		return os.Remove(from)
	}
	if errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("%s already exists: %w", to, os.ErrExist)
	}
	return err
}

// relayout moves one loadable file into the current layout under its
// locks and journals the move.
func (m *migrator) relayout(ctx context.Context, f ingest.File, res FileResult) FileResult {
	hres, err := validate.File(ctx, &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), res.Path)
	if err != nil || !hres.Status.Loadable() {
		return res
	}
	from := res.Path
	to, err := RelayoutTarget(from, hres.Header)
	if err != nil {
		res.Notes = append(res.Notes, Change{What: "not moved: " + err.Error()})
		return res
	}
	if to == "" || to == from {
		return res
	}
	if fi, err := os.Lstat(from); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		res.Notes = append(res.Notes, Change{What: "not moved: a symbolic link (move its target yourself)"})
		return res
	}
	if _, err := os.Lstat(to); err == nil {
		res.Notes = append(res.Notes, Change{What: "not moved: " + to + " already exists"})
		return res
	}
	if m.opts.DryRun {
		res.MovedTo = to
		if res.Result == ResultCurrent {
			res.Result = ResultMoved
		}
		return res
	}
	own, err := LockOwn(ctx, m.opts.StateDir, from, m.opts.LockWait, m.opts.Lock.Poll)
	if err != nil {
		return lockResult(res, err)
	}
	defer own.Release()
	lock, err := LockAgent(ctx, from, m.opts.LockWait, m.opts.Lock)
	if err != nil {
		return lockResult(res, err)
	}
	defer lock.Release()
	fi, err := os.Stat(from)
	if err != nil {
		return failed(res, err)
	}
	sum, err := hashFile(from)
	if err != nil {
		return failed(res, err)
	}
	meta := metaOf(fi)
	if err := m.run.Record(JournalEntry{Op: OpMove, Path: to, From: from, Size: meta.Size, Mtime: meta.Mtime,
		Mode: modeString(meta.Mode), SHA256After: sum, Time: m.opts.Now().UTC()}); err != nil {
		return failed(res, err)
	}
	if err := moveNoReplace(from, to); err != nil {
		res.Notes = append(res.Notes, Change{What: "not moved: " + err.Error()})
		return res
	}
	_ = syncDir(filepath.Dir(to))
	_ = syncDir(filepath.Dir(from))
	res.MovedTo = to
	if res.Result == ResultCurrent {
		res.Result = ResultMoved
	}
	return res
}
