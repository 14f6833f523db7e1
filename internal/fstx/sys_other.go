//go:build !unix && !windows

package fstx

import (
	"errors"
	"io/fs"
	"os"
)

func fillMeta(m *Meta, fi fs.FileInfo) {}

func chown(f *os.File, uid, gid int) error { return nil }

func syncDir(dir string) error { return nil }

// ProcessAlive cannot tell here: every process counts as alive, so that no
// temporary file of a running process is ever removed.
func ProcessAlive(pid int) bool { return true }

func renameReplace(from, to string) error { return os.Rename(from, to) }

func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return errExist(to)
	}
	return os.Rename(from, to)
}

func ownedByUser(fi fs.FileInfo) bool { return true }

// absent reports whether an Lstat error means that no file is at the path.
func absent(err error) bool { return errors.Is(err, fs.ErrNotExist) }

const openNonblock = 0
