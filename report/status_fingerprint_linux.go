//go:build linux

package report

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// fingerprintDir reads a directory's names and stats each entry relative
// to the open directory (fstatat: no path lookup from the root per file,
// no FileInfo per entry).
func fingerprintDir(f *fpHasher, dir string, recursive bool, skip []string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	ents := make([]fpEntry, len(names))
	var statErr error
	if err := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		for i, n := range names {
			if err := unix.Fstatat(int(fd), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				statErr = err
				return
			}
			ents[i] = fpEntry{name: n, st: fpStat{mode: unixMode(st.Mode), size: st.Size,
				mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}}
		}
	}); err != nil {
		return err
	}
	if statErr != nil {
		return statErr
	}
	return fingerprintEntries(f, dir, ents, recursive, skip, fingerprintDir)
}

// fpStatOf is the fingerprint's view of a FileInfo from os.Lstat.
func fpStatOf(fi fs.FileInfo) fpStat {
	st := fpStat{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if s, ok := fi.Sys().(*unix.Stat_t); ok {
		st.mode, st.ctime, st.ino = unixMode(s.Mode), s.Ctim.Nano(), s.Ino
	}
	return st
}

// unixMode is the type and permission bits of st_mode as an fs.FileMode
// (the type bits the walk needs: directory, symbolic link, other).
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
