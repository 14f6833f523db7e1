package fstx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

func fillMeta(m *Meta, fi fs.FileInfo) {}

func chown(f *os.File, uid, gid int) error { return nil }

// syncDir: Windows makes renames durable without a directory fsync.
func syncDir(dir string) error { return nil }

// ProcessAlive reports whether a process with id pid is running.
func ProcessAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// renameReplace renames from over to. It asks for POSIX semantics first
// (os.Root.Rename: FILE_RENAME_POSIX_SEMANTICS, NTFS on Windows 10 1709 and
// later), where a target that is open, as migrate holds the session it
// replaces (to carry late appends), is replaced as on unix. A plain
// replacing rename (MoveFileEx) fails with "Access is denied" while any
// handle is open on the target, even one sharing delete access: there, the
// target is first moved aside (an open file can be renamed when its handles
// share delete access, as fstx.OpenFile's and Node's do), then from is
// moved into the free name, then the aside copy is deleted (it lives on for
// the handles still open on it). If the second move fails, the aside copy
// is moved back. A crash between the two moves leaves the session under
// asideName; CleanStaleTemps moves it back.
func renameReplace(from, to string) error {
	dir := filepath.Dir(to)
	if filepath.Dir(from) != dir {
		return os.Rename(from, to)
	}
	err := rootRename(dir, filepath.Base(from), filepath.Base(to))
	if err == nil || !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return linkError(from, to, err)
	}
	aside := filepath.Join(dir, asideName(filepath.Base(to)))
	if err := renameNoReplace(to, aside); err != nil {
		return linkError(from, to, err)
	}
	if err := renameNoReplace(from, to); err != nil {
		if back := renameNoReplace(aside, to); back != nil {
			return fmt.Errorf("rename %s over %s: %w; the original is now %s (moving it back failed: %v)", from, to, err, aside, back)
		}
		return linkError(from, to, err)
	}
	_ = os.Remove(aside)
	return nil
}

func rootRename(dir, from, to string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Rename(from, to)
}

func linkError(from, to string, err error) error {
	if err == nil {
		return nil
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

func renameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(f, t, windows.MOVEFILE_WRITE_THROUGH); err != nil {
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) {
			return errExist(to)
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

func ownedByUser(fi fs.FileInfo) bool { return true }

// absent reports whether an Lstat error means that no file is at the path.
func absent(err error) bool { return errors.Is(err, fs.ErrNotExist) }

const openNonblock = 0
