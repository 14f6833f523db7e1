//go:build linux

package main

import (
	"os"
	"syscall"
)

// maxRSS is the peak resident set of a finished process in bytes (Linux
// reports ru_maxrss in KiB).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
