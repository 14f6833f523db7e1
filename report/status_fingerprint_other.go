//go:build !linux

package report

import (
	"io/fs"
	"os"
	"path/filepath"
)

// fingerprintDir lists a directory and stats each entry by path (the
// portable version of status_fingerprint_linux.go: no change time or inode).
func fingerprintDir(f *fpHasher, dir string, recursive bool, skip []string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	ents := make([]fpEntry, len(names))
	for i, n := range names {
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		ents[i] = fpEntry{name: n, st: fpStatOf(fi)}
	}
	return fingerprintEntries(f, dir, ents, recursive, skip, fingerprintDir)
}

// fpStatOf is the fingerprint's view of a FileInfo.
func fpStatOf(fi fs.FileInfo) fpStat {
	return fpStat{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
