//go:build faultseam

package fstx

import (
	"os"
	"path/filepath"
	"time"
)

// The seam PauseAfterRenameEnv and PauseTargetEnv (write.go) describe:
// compiled only with `go build -tags faultseam`, never in a release.
func init() {
	marker := os.Getenv(PauseAfterRenameEnv)
	if marker == "" {
		return
	}
	pattern := os.Getenv(PauseTargetEnv)
	pause := func(rename func(from, to string) error) func(from, to string) error {
		return func(from, to string) error {
			if err := rename(from, to); err != nil {
				return err
			}
			if ok, _ := filepath.Match(pattern, filepath.Base(to)); !ok && pattern != "" {
				return nil
			}
			if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
				_, _ = f.WriteString(to + "\n")
				_ = f.Sync()
				_ = f.Close()
			}
			for {
				time.Sleep(time.Hour)
			}
		}
	}
	Faults.Rename = pause(Faults.Rename)
	Faults.RenameNoReplace = pause(Faults.RenameNoReplace)
}
