package fstx

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, failing with an error wrapping
// os.ErrExist when to exists: renameat2(RENAME_NOREPLACE), or link +
// unlink on a file system without it.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return linkNoReplace(from, to)
	case errors.Is(err, unix.EEXIST):
		return errExist(to)
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
