//go:build windows

package ingest

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/windows"
)

// statIDs is the identity of the file at path: the serial number of its
// volume and its file index, the pair os.SameFile compares on Windows
// (a FileInfo from a directory listing or os.Stat does not carry them, so
// the file is opened for its attributes only, sharing everything). Links
// are followed, as os.Stat follows them. The zero value means unknown.
func statIDs(path string, _ fs.FileInfo) devIno {
	p, err := windows.UTF16PtrFromString(fixLongPath(path))
	if err != nil {
		return devIno{}
	}
	h, err := windows.CreateFile(p, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return devIno{}
	}
	defer windows.CloseHandle(h)
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		return devIno{}
	}
	return devIno{uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)}
}

// fixLongPath lets CreateFile open an absolute path longer than MAX_PATH
// (os does the same for its own calls): \\?\C:\… and \\?\UNC\server\….
func fixLongPath(path string) string {
	if len(path) < 248 || len(path) < 2 {
		return path
	}
	switch {
	case len(path) >= 4 && path[:4] == `\\?\`:
		return path
	case path[0] == '\\' && path[1] == '\\':
		return `\\?\UNC\` + path[2:]
	case path[1] == ':':
		return `\\?\` + path
	}
	return path
}

// isNotDir: a path through a file is reported by Windows as "path not
// found", which errors.Is(err, fs.ErrNotExist) already recognizes.
func isNotDir(error) bool { return false }

// isLinkLoop reports a stat that failed because symbolic links or junctions
// lead back to themselves.
func isLinkLoop(err error) bool { return errors.Is(err, windows.ERROR_CANT_RESOLVE_FILENAME) }
