//go:build !windows

package fstx

import "os"

// OpenFile is os.OpenFile. (On Windows it also lets the file be renamed
// over or deleted while it is open, as it always can be here.)
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
