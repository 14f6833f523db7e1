//go:build !unix && !windows

package main

import "os"

// stopSignals end a run cleanly (see signals.go).
var stopSignals = []os.Signal{os.Interrupt}
