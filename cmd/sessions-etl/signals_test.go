package main

import (
	"os"
	"runtime"
	"slices"
	"testing"
)

// TestStopSignals: Ctrl-C stops a run everywhere; so does SIGTERM on Unix
// and Windows (signals.go), the only signal a service manager or a closing
// console sends.
func TestStopSignals(t *testing.T) {
	if !slices.Contains(stopSignals, os.Signal(os.Interrupt)) {
		t.Errorf("stopSignals %v lack os.Interrupt", stopSignals)
	}
	want := 1
	if runtime.GOOS != "js" && runtime.GOOS != "wasip1" && runtime.GOOS != "plan9" {
		want = 2
	}
	if len(stopSignals) != want || want == 2 && stopSignals[1].String() != "terminated" {
		t.Errorf("stopSignals = %v, want %d (Interrupt, SIGTERM where there is one)", stopSignals, want)
	}
}
