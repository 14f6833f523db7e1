//go:build unix

package migrate

import "syscall"

// The errors tests inject: a full disk and an I/O error, as this system
// reports them.
var errNoSpace, errIO error = syscall.ENOSPC, syscall.EIO
