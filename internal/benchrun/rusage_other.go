//go:build !linux && !darwin

package main

import "os"

// maxRSS: not measured on this platform (0 is shown as unknown).
func maxRSS(*os.ProcessState) int64 { return 0 }
