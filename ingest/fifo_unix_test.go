//go:build unix

package ingest

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenRegularFIFO: a FIFO named like a session file is refused at once
// (fstx.OpenRegular opens without blocking), not waited on for a writer.
func TestOpenRegularFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe.jsonl")
	must(t, unix.Mkfifo(path, 0o600))
	done := make(chan error, 1)
	go func() {
		f, err := OpenRegular(path)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("err = %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenRegular blocked on a FIFO")
	}
}
