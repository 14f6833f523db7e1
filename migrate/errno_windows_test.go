//go:build windows

package migrate

import "golang.org/x/sys/windows"

// The errors tests inject: a full disk and an I/O error, as this system
// reports them.
var errNoSpace, errIO error = windows.ERROR_DISK_FULL, windows.ERROR_IO_DEVICE
