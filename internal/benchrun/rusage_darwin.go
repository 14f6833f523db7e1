//go:build darwin

package main

import (
	"os"
	"syscall"
)

// maxRSS is the peak resident set of a finished process in bytes (macOS
// reports ru_maxrss in bytes).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
