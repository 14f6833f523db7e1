//go:build !linux

package export

import (
	"errors"
	"os"
)

// swapDir puts the directory tmp in place of final.
func swapDir(tmp, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, final)
	}
	return swapByRename(tmp, final)
}
