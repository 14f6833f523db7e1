//go:build unix

package ingest

import (
	"errors"
	"io/fs"
	"syscall"
)

// statIDs is the identity of the file fi describes: its device and inode
// number, taken from the stat that produced fi (path is not used here). The
// zero value means unknown.
func statIDs(_ string, fi fs.FileInfo) devIno {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return devIno{uint64(st.Dev), uint64(st.Ino)}
	}
	return devIno{}
}

// isNotDir reports a path one of whose parents is not a directory (ENOTDIR):
// the path does not exist.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// isLinkLoop reports a stat that failed because symbolic links lead back
// to themselves (ELOOP).
func isLinkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
