package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// TestFaultInjection injects ENOSPC and EIO at the write, fsync and rename
// steps (and at the backup and journal fsync): the original must stay
// byte-identical, no temporary file may be left, and the file is reported
// as failed.
func TestFaultInjection(t *testing.T) {
	type seam struct {
		name    string
		install func(err error) (restore func())
	}
	seams := []seam{
		{"write", func(e error) func() {
			old := fstx.Faults.Write
			fstx.Faults.Write = func(f *os.File, b []byte) (int, error) { return 0, e }
			return func() { fstx.Faults.Write = old }
		}},
		{"write after 100 bytes", func(e error) func() {
			old := fstx.Faults.Write
			written := 0
			fstx.Faults.Write = func(f *os.File, b []byte) (int, error) {
				if written+len(b) > 100 {
					n, _ := f.Write(b[:100-written])
					written += n
					return n, e
				}
				written += len(b)
				return f.Write(b)
			}
			return func() { fstx.Faults.Write = old }
		}},
		{"fsync", func(e error) func() {
			old := fstx.Faults.Sync
			fstx.Faults.Sync = func(f *os.File) error {
				if filepath.Ext(f.Name()) == ".tmp" {
					return e
				}
				return old(f)
			}
			return func() { fstx.Faults.Sync = old }
		}},
		{"fsync of backup and journal", func(e error) func() {
			old := fstx.Faults.Sync
			fstx.Faults.Sync = func(f *os.File) error {
				if filepath.Ext(f.Name()) != ".tmp" {
					return e
				}
				return old(f)
			}
			return func() { fstx.Faults.Sync = old }
		}},
		{"rename", func(e error) func() {
			old := fstx.Faults.Rename
			fstx.Faults.Rename = func(a, b string) error { return &os.LinkError{Op: "rename", Old: a, New: b, Err: e} }
			return func() { fstx.Faults.Rename = old }
		}},
		{"create temp", func(e error) func() {
			old := fstx.Faults.CreateTemp
			fstx.Faults.CreateTemp = func(dir, pattern string) (*os.File, error) { return nil, &os.PathError{Op: "open", Path: dir, Err: e} }
			return func() { fstx.Faults.CreateTemp = old }
		}},
	}
	for _, s := range seams {
		for _, errno := range []error{errNoSpace, errIO} {
			t.Run(fmt.Sprintf("%s/%v", s.name, errno), func(t *testing.T) {
				root := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
				before := snapshot(t, root)
				restore := s.install(errno)
				out := runMigrate(t, root, nil)
				restore()
				r := out.results["session.jsonl"]
				if r.Result != ResultFailed {
					t.Errorf("result %s (%s), want failed", r.Result, r.Detail)
				}
				if !r.Failed() {
					t.Errorf("a failed file must count as not upgraded")
				}
				if !bytes.Contains([]byte(r.Detail), []byte(errno.Error())) {
					t.Errorf("detail %q does not name the error %v", r.Detail, errno)
				}
				if !equalSnap(before, snapshot(t, root)) {
					t.Errorf("original modified after an injected %v at %s", errno, s.name)
				}
				ents, _ := os.ReadDir(root)
				for _, e := range ents {
					if e.Name() != "session.jsonl" && e.Name() != "expected.json" {
						t.Errorf("left behind: %s", e.Name())
					}
				}
				// With the fault gone, a re-run completes the job.
				again := runMigrate(t, root, nil)
				if again.results["session.jsonl"].Result != ResultUpgraded {
					t.Errorf("re-run: %+v", again.results["session.jsonl"])
				}
			})
		}
	}
}
