package fstx

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// SwapDir puts the directory tmp in place of final. On Linux both names
// are exchanged in one renameat2(RENAME_EXCHANGE), so final never goes
// missing; the old dataset, now at tmp, is then removed.
func SwapDir(tmp, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, final)
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, final, unix.RENAME_EXCHANGE)
	if err == nil {
		return os.RemoveAll(tmp)
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTSUP) {
		return err
	}
	return swapByRename(tmp, final)
}
