//go:build linux

package main

import (
	"os"
	"syscall"
)

// peakRSS is the peak resident set of a finished process in bytes (0 when
// the system does not say).
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
