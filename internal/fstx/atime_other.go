//go:build unix && !linux && !darwin

package fstx

import "syscall"

// fillAtime keeps the mtime as the access time where Stat_t differs.
func fillAtime(m *Meta, st *syscall.Stat_t) {}
