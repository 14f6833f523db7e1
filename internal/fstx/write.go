package fstx

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Faults are the fault seams of the package: tests replace them to inject
// ENOSPC and EIO at the write, fsync and rename steps, or to watch a step
// (STYLE.md §19). Production code never changes them.
var Faults = struct {
	CreateTemp func(dir, pattern string) (*os.File, error)
	Write      func(f *os.File, b []byte) (int, error)
	Sync       func(f *os.File) error
	Rename     func(from, to string) error
	// RenameNoReplace renames without ever replacing (a move, a created file).
	RenameNoReplace func(from, to string) error
	SyncDir         func(dir string) error
}{
	CreateTemp:      os.CreateTemp,
	Write:           func(f *os.File, b []byte) (int, error) { return f.Write(b) },
	Sync:            func(f *os.File) error { return f.Sync() },
	Rename:          renameReplace,
	RenameNoReplace: renameNoReplace,
	SyncDir:         syncDir,
}

// The faultseam build's seam for real-process tests: when
// PauseAfterRenameEnv holds a file path, a rename that publishes a
// file (Commit, CommitNoReplace, MoveNoReplace) whose base name matches the
// pattern in PauseTargetEnv (filepath.Match; empty: any) appends the
// target's path and a newline to that file, fsyncs it, and then blocks for
// good — the process sits in the window between the rename and the
// directory fsync, where a test kills it with SIGKILL (issue 12 finding 3).
// Only a binary built with `-tags faultseam` has it (faultseam.go).
const (
	PauseAfterRenameEnv = "SESSIONS_ETL_FAULTSEAM_PAUSE_AFTER_RENAME"
	PauseTargetEnv      = "SESSIONS_ETL_FAULTSEAM_PAUSE_TARGET"
)

// SyncDir fsyncs the directory dir, so that a rename or a create in it is
// durable. File systems and platforms that cannot sync a directory are not
// an error.
func SyncDir(dir string) error { return Faults.SyncDir(dir) }

// SyncFile fsyncs the regular file at path: a file another writer made
// (DuckDB's database, a Parquet part, a COPY's output) is durable before
// the rename that publishes it or the directory that holds it.
func SyncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = Faults.Sync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Meta is what a replacement carries over from the original.
type Meta struct {
	Mode  fs.FileMode // permission and special bits (setuid, setgid, sticky)
	UID   int         // -1: unknown (a platform without owners)
	GID   int
	Mtime time.Time
	Atime time.Time
	Ino   uint64
	Nlink uint64 // names (hard links) of the inode
	Size  int64
}

// Stat reads the metadata of an open file.
func Stat(f *os.File) (Meta, error) {
	fi, err := f.Stat()
	if err != nil {
		return Meta{}, err
	}
	return MetaOf(fi), nil
}

// MetaOf returns the metadata of fi.
func MetaOf(fi fs.FileInfo) Meta {
	m := Meta{Mode: fi.Mode(), Mtime: fi.ModTime(), Atime: fi.ModTime(), Size: fi.Size(), UID: -1, GID: -1, Nlink: 1}
	fillMeta(&m, fi)
	return m
}

// keptMode is the part of a mode a replacement keeps: permissions and the
// setuid, setgid and sticky bits.
func keptMode(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// fileWriter routes writes through the Faults.Write seam.
type fileWriter struct{ f *os.File }

func (w fileWriter) Write(b []byte) (int, error) { return Faults.Write(w.f, b) }

// TempPrefix starts the names of this tool's temporary files; discovery
// skips them (ingest.TempPrefix, the same string).
const TempPrefix = ".sessions-etl-"

// ErrNotRegular reports a path that is not a regular file (a pipe, a
// device, a directory) where a session file was expected.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading only if it is a regular file, without
// blocking on a FIFO.
func OpenRegular(path string) (*os.File, error) {
	f, err := OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// tempPattern is the name pattern of this tool's temporary file for target:
// it starts with TempPrefix and carries our pid, so that a later run can
// tell a stale one from a live one.
func tempPattern(target string) string {
	return TempPrefix + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(target) + "-*.tmp"
}

// Temp is a written and fsynced temporary file beside its target, with the
// target's metadata already applied (times included): publishing it is one
// rename. Call Commit or CommitNoReplace, or Discard.
type Temp struct {
	Path   string // the temporary file
	Target string
	SHA256 string // hex SHA-256 of the bytes written
	Size   int64  // bytes written
	// Published is set once the rename put the file in place (a later
	// directory fsync may still fail).
	Published bool
	done      bool
}

// WriteOptions says what a temporary file takes over besides meta's mode,
// owner and times.
type WriteOptions struct {
	// AttrsFrom names a file whose extended attributes (ACLs included) the
	// temporary file gets: the original it replaces. "" copies none.
	AttrsFrom string
	// Tee, when not nil, receives the bytes written as well (a hash).
	Tee io.Writer
}

// TempName returns a new name for a temporary file beside target, with no
// file created there (for a writer that must create the file itself, as
// DuckDB does). CleanStaleTemps removes it, and the ".wal" beside it, once
// its process is gone.
func TempName(target string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := strings.Replace(tempPattern(target), "*", hex.EncodeToString(b[:]), 1)
	return filepath.Join(filepath.Dir(target), name), nil
}

// WriteTemp creates a temporary file in target's directory, fills it with
// write, gives it meta's mode (special bits included) and owner (where
// possible), the extended attributes of opts.AttrsFrom and meta's times,
// and fsyncs it. On error nothing is left behind.
func WriteTemp(target string, meta Meta, opts WriteOptions, write func(w io.Writer) error) (t *Temp, err error) {
	dir := filepath.Dir(target)
	f, err := Faults.CreateTemp(dir, tempPattern(target))
	if err != nil {
		return nil, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	name := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(name)
		}
	}()
	var h hash.Hash = sha256.New()
	var sink io.Writer = h
	if opts.Tee != nil {
		sink = io.MultiWriter(h, opts.Tee)
	}
	bw := bufio.NewWriterSize(fileWriter{f}, 256<<10)
	cw := &countWriter{}
	if err := write(io.MultiWriter(bw, sink, cw)); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if err := applyMeta(f, meta, opts.AttrsFrom); err != nil {
		return nil, err
	}
	if err := Faults.Sync(f); err != nil {
		return nil, fmt.Errorf("fsync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", name, err)
	}
	return &Temp{Path: name, Target: target, SHA256: hex.EncodeToString(h.Sum(nil)), Size: cw.n}, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// applyMeta gives the open temporary file f the owner, mode, extended
// attributes and times of meta (the owner first: chown clears setuid and
// setgid; the times last, before the fsync, so that the rename publishes a
// file that already has them — a crash can never leave it with mtime=now).
func applyMeta(f *os.File, meta Meta, attrsFrom string) error {
	if meta.UID >= 0 && (meta.UID != os.Getuid() || meta.GID != os.Getgid()) {
		_ = chown(f, meta.UID, meta.GID) // best effort: only root may give files away
	}
	if err := f.Chmod(keptMode(meta.Mode)); err != nil {
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if attrsFrom != "" {
		if err := copyXattrs(attrsFrom, f); err != nil {
			return fmt.Errorf("copy extended attributes of %s: %w", attrsFrom, err)
		}
	}
	if !meta.Mtime.IsZero() {
		if err := os.Chtimes(f.Name(), meta.Atime, meta.Mtime); err != nil {
			return fmt.Errorf("set times of %s: %w", f.Name(), err)
		}
	}
	return nil
}

// Commit renames the temporary file over its target and fsyncs the
// directory. On a rename error the temporary file is removed and the
// target is untouched.
func (t *Temp) Commit() error {
	t.done = true
	if err := Faults.Rename(t.Path, t.Target); err != nil {
		os.Remove(t.Path)
		return fmt.Errorf("rename %s over %s: %w", filepath.Base(t.Path), t.Target, err)
	}
	t.Published = true
	if err := SyncDir(filepath.Dir(t.Target)); err != nil {
		return fmt.Errorf("fsync directory %s: %w", filepath.Dir(t.Target), err)
	}
	return nil
}

// CommitNoReplace renames the temporary file to its target only if the
// target does not exist (else an error wrapping os.ErrExist), creating the
// target's directory if needed, and fsyncs the directory.
func (t *Temp) CommitNoReplace() error {
	t.done = true
	if err := MoveNoReplace(t.Path, t.Target); err != nil {
		os.Remove(t.Path)
		return err
	}
	t.Published = true
	if err := SyncDir(filepath.Dir(t.Target)); err != nil {
		return fmt.Errorf("fsync directory %s: %w", filepath.Dir(t.Target), err)
	}
	return nil
}

// Discard removes the temporary file unless it was committed. It is safe
// to defer.
func (t *Temp) Discard() {
	if t == nil || t.done {
		return
	}
	t.done = true
	os.Remove(t.Path)
}

// WriteFile writes target through the whole recipe: WriteTemp, then check
// (when not nil; it receives the hex SHA-256 of the bytes written and can
// veto), then Commit (or, with noReplace, CommitNoReplace). On any error
// target is untouched and no temporary file is left. It returns the hex
// SHA-256 of the bytes written.
func WriteFile(target string, meta Meta, opts WriteOptions, noReplace bool, write func(w io.Writer) error, check func(sha256 string) error) (string, error) {
	t, err := WriteTemp(target, meta, opts, write)
	if err != nil {
		return "", err
	}
	defer t.Discard()
	if check != nil {
		if err := check(t.SHA256); err != nil {
			return "", err
		}
	}
	if noReplace {
		err = t.CommitNoReplace()
	} else {
		err = t.Commit()
	}
	if err != nil {
		return "", err
	}
	return t.SHA256, nil
}

// WriteBytes replaces path with data (a small file of this tool's own: a
// marker, a state file), mode perm, through the same recipe.
func WriteBytes(path string, data []byte, perm fs.FileMode) error {
	_, err := WriteFile(path, Meta{Mode: perm, UID: -1, GID: -1}, WriteOptions{}, false,
		func(w io.Writer) error { _, err := w.Write(data); return err }, nil)
	return err
}

// MoveNoReplace creates the directory of to if needed and renames from to
// to without ever replacing it: an error wrapping os.ErrExist when to
// exists (SPEC.md §2.4).
func MoveNoReplace(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return Faults.RenameNoReplace(from, to)
}

// asideName is where renameReplace's two-step fallback (Windows without
// POSIX rename semantics) keeps a session between its two moves: a
// TempPrefix name, so discovery skips it, with our pid, and a suffix that
// is not ".tmp", so that nothing ever deletes it as a stale temp.
func asideName(target string) string {
	return TempPrefix + strconv.Itoa(os.Getpid()) + "-" + target + ".aside"
}

// CleanStaleTemps removes this tool's temporary files in dir that belong to
// processes that no longer run (a crash or kill -9 leaves them behind). It
// returns the paths removed. A session a dead process left aside (asideName)
// is moved back to its name when that name is free, and never removed.
func CleanStaleTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, ".aside") && e.Type().IsRegular() {
			restoreAside(dir, name)
			continue
		}
		if !strings.HasPrefix(name, TempPrefix) || !(strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".tmp.wal")) || !e.Type().IsRegular() {
			continue
		}
		rest := strings.TrimPrefix(name, TempPrefix)
		pidStr, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue
		}
		if pid == os.Getpid() || ProcessAlive(pid) {
			continue // in use: ours (another worker) or a running process's
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// restoreAside moves a session a dead process left aside back to its name,
// if nothing took that name since.
func restoreAside(dir, name string) {
	pidStr, target, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(name, TempPrefix), ".aside"), "-")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil || pid <= 0 || target == "" || pid == os.Getpid() || ProcessAlive(pid) {
		return
	}
	_ = renameNoReplace(filepath.Join(dir, name), filepath.Join(dir, target))
}

// HashFile returns the hex SHA-256 of the regular file at path.
func HashFile(path string) (string, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// errExist wraps os.ErrExist for a target a no-replace rename found taken.
func errExist(to string) error { return fmt.Errorf("%s already exists: %w", to, os.ErrExist) }

// FileExists reports whether anything is at path (a dangling link too).
func FileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// MkdirTemp is os.MkdirTemp with the permission bits perm (less the
// umask) instead of 0700: a dataset directory made this way and renamed
// into place is as readable as one made with os.Mkdir (0755 under umask
// 022). pattern's last "*", if any, is replaced by a random string;
// without one it is appended.
func MkdirTemp(dir, pattern string, perm fs.FileMode) (string, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:])+suffix)
		err := os.Mkdir(name, perm)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) || try >= 100 {
			return "", err
		}
	}
}
