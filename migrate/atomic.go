package migrate

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// Fault seams: tests replace these to inject ENOSPC and EIO at the write,
// fsync and rename steps (STYLE.md §19).
var (
	createTemp = os.CreateTemp
	writeTemp  = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	syncFile   = func(f *os.File) error { return f.Sync() }
	renameFile = os.Rename
	syncDir    = func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	}
)

// FileMeta is what a replacement must carry over from the original.
type FileMeta struct {
	Mode  fs.FileMode
	UID   int
	GID   int
	Mtime time.Time
	Atime time.Time
	Ino   uint64
	Nlink uint64 // names (hard links) of the inode
	Size  int64
}

// StatMeta reads the metadata of an open file.
func StatMeta(f *os.File) (FileMeta, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileMeta{}, err
	}
	return metaOf(fi), nil
}

func metaOf(fi fs.FileInfo) FileMeta {
	m := FileMeta{Mode: fi.Mode(), Mtime: fi.ModTime(), Atime: fi.ModTime(), Size: fi.Size(), UID: -1, GID: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.UID, m.GID = int(st.Uid), int(st.Gid)
		m.Ino = uint64(st.Ino)
		m.Nlink = uint64(st.Nlink)
		m.Atime = time.Unix(st.Atim.Sec, st.Atim.Nsec)
	}
	return m
}

// fileWriter routes writes through the writeTemp seam.
type fileWriter struct{ f *os.File }

func (w fileWriter) Write(b []byte) (int, error) { return writeTemp(w.f, b) }

// tempName is the name of this tool's temporary file for target: it starts
// with ingest.TempPrefix (so discovery skips it) and carries our pid (so a
// later run can tell a stale one from a live one).
func tempPattern(target string) string {
	return ingest.TempPrefix + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(target) + "-*.tmp"
}

// writeTempFile writes a temporary file next to target with the original's
// permission bits (and owner where possible), fills it with write, and
// fsyncs it. The caller renames or removes it.
func writeTempFile(target string, meta FileMeta, write func(w io.Writer) error) (tmpPath string, err error) {
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, tempPattern(target))
	if err != nil {
		return "", fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(meta.Mode.Perm()); err != nil {
		return "", fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if meta.UID >= 0 && (meta.UID != os.Getuid() || meta.GID != os.Getgid()) {
		_ = tmp.Chown(meta.UID, meta.GID) // best effort: only root may give files away
	}
	bw := bufio.NewWriterSize(fileWriter{tmp}, 256<<10)
	if err := write(bw); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := syncFile(tmp); err != nil {
		return "", fmt.Errorf("fsync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	return tmp.Name(), nil
}

// commitTemp renames tmp over target, fsyncs the directory and restores
// the original access and modification times (SPEC.md §2.3: agents pick the
// most recent session by mtime). On a rename error tmp is removed and the
// original is untouched.
func commitTemp(tmp, target string, meta FileMeta) error {
	if err := renameFile(tmp, target); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename %s over %s: %w", filepath.Base(tmp), target, err)
	}
	if err := syncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("fsync directory %s: %w", filepath.Dir(target), err)
	}
	if err := os.Chtimes(target, meta.Atime, meta.Mtime); err != nil {
		return fmt.Errorf("restore mtime of %s: %w", target, err)
	}
	return nil
}

// CleanStaleTemps removes this tool's temporary files in dir that belong to
// processes that no longer run (a crash or kill -9 leaves them behind). It
// returns the paths removed.
func CleanStaleTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, ingest.TempPrefix) || !strings.HasSuffix(name, ".tmp") || !e.Type().IsRegular() {
			continue
		}
		rest := strings.TrimPrefix(name, ingest.TempPrefix)
		pidStr, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue
		}
		if pid == os.Getpid() || processAlive(pid) {
			continue // in use: ours (another worker) or a running process's
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WriteFileAtomic writes target through the recipe of SPEC.md §2.3: a
// temporary file in the same directory with meta's permission bits (and
// owner where possible), filled by write, fsynced, then renamed over target
// (or, with noReplace, renamed only if target does not exist, else an error
// wrapping os.ErrExist), the directory fsynced and meta's times set. check,
// when not nil, runs just before the rename and can veto it. On any error
// target is untouched and no temporary file is left. It returns the hex
// SHA-256 of the bytes written.
func WriteFileAtomic(target string, meta FileMeta, noReplace bool, write func(w io.Writer) error, check func() error) (string, error) {
	h := sha256.New()
	tmp, err := writeTempFile(target, meta, func(w io.Writer) error { return write(io.MultiWriter(w, h)) })
	if err != nil {
		return "", err
	}
	if check != nil {
		if err := check(); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	if noReplace {
		if err := moveNoReplace(tmp, target); err != nil {
			os.Remove(tmp)
			return "", err
		}
		if err := syncDir(filepath.Dir(target)); err != nil {
			return "", fmt.Errorf("fsync directory %s: %w", filepath.Dir(target), err)
		}
		if err := os.Chtimes(target, meta.Atime, meta.Mtime); err != nil {
			return "", fmt.Errorf("set mtime of %s: %w", target, err)
		}
	} else if err := commitTemp(tmp, target, meta); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MetaOf returns the metadata WriteFileAtomic carries over from fi.
func MetaOf(fi fs.FileInfo) FileMeta { return metaOf(fi) }

// HashFile returns the hex SHA-256 of the file at path.
func HashFile(path string) (string, error) { return hashFile(path) }
