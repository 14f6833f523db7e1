//go:build !linux

package fstx

import (
	"errors"
	"os"
)

// SwapDir puts the directory tmp in place of final.
func SwapDir(tmp, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, final)
	}
	return swapByRename(tmp, final)
}
