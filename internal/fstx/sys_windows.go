package fstx

import (
	"errors"
	"io/fs"
	"os"

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

func renameReplace(from, to string) error { return os.Rename(from, to) }

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
