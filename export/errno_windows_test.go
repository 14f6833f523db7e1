//go:build windows

package export

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// The errors tests inject: a full disk and a refused permission, as this
// system reports them.
var errNoSpace, errDenied error = windows.ERROR_DISK_FULL, windows.ERROR_ACCESS_DENIED

// fileIno is the file index of the file at path (NTFS's inode number).
func fileIno(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &d); err != nil {
		t.Fatal(err)
	}
	return uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)
}
