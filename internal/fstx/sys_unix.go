//go:build unix

package fstx

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const openNonblock = unix.O_NONBLOCK

func fillMeta(m *Meta, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	m.UID, m.GID = int(st.Uid), int(st.Gid)
	m.Ino = uint64(st.Ino)
	m.Nlink = uint64(st.Nlink)
	fillAtime(m, st)
}

func chown(f *os.File, uid, gid int) error { return f.Chown(uid, gid) }

// syncDir fsyncs a directory. A file system that cannot (EINVAL, ENOTSUP)
// is not an error: there is nothing more to make durable there.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTSUP) {
		return err
	}
	return nil
}

// ProcessAlive reports whether a process with id pid exists (ours to
// signal or not).
func ProcessAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func renameReplace(from, to string) error { return os.Rename(from, to) }

// linkNoReplace renames by link + unlink, which never replaces: for file
// systems and platforms without an atomic no-replace rename.
func linkNoReplace(from, to string) error {
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errExist(to)
		}
		return err
	}
	if err := os.Remove(from); err != nil {
		_ = os.Remove(to) // all or nothing: the file stays at from
		return err
	}
	return nil
}

// ownedByUser reports whether fi belongs to the user running the tool.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

// absent reports whether an Lstat error means that no file is at the path:
// it does not exist, or the path cannot name a file (a component too long,
// a NUL byte, a component that is not a directory).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENAMETOOLONG) ||
		errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTDIR)
}
