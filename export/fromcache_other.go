//go:build !unix

package export

import "io/fs"

// fileInode is 0 where FileInfo has no inode number (the size and the
// modification time still tell a rewritten file).
func fileInode(fs.FileInfo) uint64 { return 0 }
