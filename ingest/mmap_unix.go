//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package ingest

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapsFiles says whether ReadFile reads large files through a memory
// mapping on this platform.
const mapsFiles = true

// mapFile maps the first size bytes of f read-only and shared, and tells
// the kernel they will be read in order.
func mapFile(f *os.File, size int) ([]byte, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, nil
}

// unmapFile releases a mapping made by mapFile.
func unmapFile(data []byte) { _ = unix.Munmap(data) }

// releasePages tells the kernel the pages of data are not needed again
// (they are behind the cursor). A page is read again from the file if it is
// touched after all, so this is only a hint.
func releasePages(data []byte) { _ = unix.Madvise(data, unix.MADV_DONTNEED) }
