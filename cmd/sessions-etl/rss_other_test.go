//go:build !linux

package main

import "os"

// peakRSS is 0 where the test does not read the peak resident set.
func peakRSS(*os.ProcessState) int64 { return 0 }
