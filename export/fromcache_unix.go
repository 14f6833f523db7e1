//go:build unix

package export

import (
	"io/fs"
	"syscall"
)

// fileInode is fi's inode number (0 when the FileInfo has none).
func fileInode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
