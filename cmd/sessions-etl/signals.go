//go:build unix || windows

package main

import (
	"os"
	"syscall"
)

// stopSignals end a run cleanly (the context is cancelled, files being
// rewritten are left whole): Ctrl-C, and SIGTERM, which Go also delivers on
// Windows when the console is closed or the user logs off or shuts down.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
