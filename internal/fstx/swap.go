package fstx

import (
	"os"
)

// swapByRename replaces final with tmp by two renames: the old dataset
// moves aside first, so a reader may briefly find no dataset, never a
// mixed one.
func swapByRename(tmp, final string) error {
	old := tmp + ".old"
	if err := os.Rename(final, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		if rerr := os.Rename(old, final); rerr != nil {
			return rerr
		}
		return err
	}
	return os.RemoveAll(old)
}
