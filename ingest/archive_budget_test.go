package ingest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArchiveReadAsListed: over a .tar.zst whose members are larger than
// maxPendingMember but fit the budget, a caller that reads every member
// as it is listed (Root.ReadAsListed, validate) gets each member from the
// listing: the stream is decompressed once, no cursor starts from the top;
// the same read without ReadAsListed needs cursors (what the flag saves).
// A caller that reads nothing does not stall the listing (budgetPatience),
// nor does a cancelled context.
func TestArchiveReadAsListed(t *testing.T) {
	oldM, oldB, oldP := maxPendingMember, maxPendingBytes, budgetPatience
	maxPendingMember, maxPendingBytes, budgetPatience = 1<<10, 16<<10, 100*time.Millisecond
	t.Cleanup(func() { maxPendingMember, maxPendingBytes, budgetPatience = oldM, oldB, oldP })

	var members []member
	want := map[string]string{}
	for i := range 40 {
		body := testHdrA + strings.Repeat(fmt.Sprintf(`{"type":"message","id":"m%d","parentId":"e1","message":{"role":"user","content":"%s"}}`+"\n", i, strings.Repeat("x", 200)), 15)
		name := fmt.Sprintf(".pi/agent/sessions/--x--/2025-09-10T08-00-00-000Z_s%02d.jsonl", i)
		members = append(members, member{name: name, body: body})
		want[name] = body
	}
	arch := filepath.Join(t.TempDir(), "home.tar.zst")
	writeTestArchive(t, arch, ArchiveTarZst, members)

	read := func(t *testing.T, asListed bool) int64 {
		rts, err := PathRoots([]string{arch})
		if err != nil {
			t.Fatal(err)
		}
		rts[0].ReadAsListed = asListed
		before := cursorsOpened.Load()
		files := make(chan File, 2)
		done := make(chan error)
		go func() { // the worker: reads each file as it comes
			var err error
			for f := range files {
				rc, oerr := OpenContent(f.Path)
				if oerr != nil {
					err = oerr
					continue
				}
				b, rerr := io.ReadAll(rc)
				rc.Close()
				if rerr != nil || string(b) != want[f.Member] {
					err = fmt.Errorf("%s: %d bytes, %v", f.Path, len(b), rerr)
				}
			}
			done <- err
		}()
		n := 0
		err = Discover(context.Background(), rts, func(f File) error { n++; files <- f; return nil }, func(p PathIssue) { t.Errorf("issue %+v", p) })
		close(files)
		if werr := <-done; werr != nil {
			t.Error(werr)
		}
		if err != nil || n != len(members) {
			t.Fatalf("discover: %d files, %v", n, err)
		}
		return cursorsOpened.Load() - before
	}
	if n := read(t, true); n != 0 {
		t.Errorf("read as listed: %d cursors started from the top, want 0", n)
	}
	if n := read(t, false); n == 0 {
		t.Errorf("read after the listing: no cursor started: the test does not show what ReadAsListed saves")
	}

	// A caller that reads nothing: the listing goes on after budgetPatience.
	rts, _ := PathRoots([]string{arch})
	rts[0].ReadAsListed = true
	n := 0
	start := time.Now()
	if err := Discover(context.Background(), rts, func(File) error { n++; return nil }, nil); err != nil || n != len(members) {
		t.Errorf("unread: %d files, %v", n, err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("unread: the listing took %v", el)
	}
	// A cancelled context stops a listing waiting for the budget.
	ctx, cancel := context.WithCancel(context.Background())
	budgetPatience = time.Hour
	n = 0
	errc := make(chan error, 1)
	go func() {
		errc <- Discover(ctx, rts, func(File) error { n++; return nil }, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if err == nil || n >= len(members) {
			t.Errorf("cancelled: %v after %d files", err, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled listing still waits")
	}
}
