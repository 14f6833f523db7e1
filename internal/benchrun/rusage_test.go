package main

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestMaxRSS: the peak memory of a finished process, in bytes on Linux and
// macOS (rusage_linux.go multiplies the KiB Linux reports; rusage_darwin.go
// takes macOS's bytes), unknown (0) elsewhere.
func TestMaxRSS(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := maxRSS(cmd.ProcessState)
	switch runtime.GOOS {
	case "linux", "darwin":
		// A Go test binary has at least 1 MiB resident and far less than 1 GiB.
		if got < 1<<20 || got > 1<<30 {
			t.Errorf("maxRSS = %d bytes, want between 1 MiB and 1 GiB", got)
		}
	default:
		if got != 0 {
			t.Errorf("maxRSS = %d, want 0 (not measured here)", got)
		}
	}
}
