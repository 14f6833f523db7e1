package fstx

import (
	"os"

	"golang.org/x/sys/windows"
)

// OpenFile is os.OpenFile for a file that exists, except that the handle
// shares delete access (FILE_SHARE_DELETE), which Go's own open does not
// ask for. Without it Windows refuses to rename another file over this one,
// or to delete it, while the handle is open ("Access is denied"): migrate
// holds a session open across the rename that replaces it (to carry over
// what an agent appends meanwhile), and an agent may replace a session we
// are reading. With it, Windows behaves as unix does. Flags other than
// O_RDONLY, O_WRONLY, O_RDWR and O_APPEND go to os.OpenFile unchanged.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&^(os.O_RDONLY|os.O_WRONLY|os.O_RDWR|os.O_APPEND) != 0 {
		return os.OpenFile(name, flag, perm)
	}
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// As Go's syscall.Open: every right GENERIC_WRITE grants but
		// FILE_WRITE_DATA, so that each write goes to the end.
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA |
			windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, windows.OPEN_EXISTING,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
