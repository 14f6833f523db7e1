//go:build unix

package export

import (
	"os"
	"syscall"
	"testing"
)

// The errors tests inject: a full disk and a refused permission, as this
// system reports them.
var errNoSpace, errDenied error = syscall.ENOSPC, syscall.EACCES

// fileIno is the inode number of the file at path.
func fileIno(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Ino)
}
