package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFileIdentity: statIDs (fileid_unix.go, fileid_windows.go) gives one
// identity to a file reached by two names (a hard link) and different ones
// to different files and directories; the identity is what Discover uses
// to pass a file once. Runs on every platform that has hard links.
func TestFileIdentity(t *testing.T) {
	dir := t.TempDir()
	a, b, link := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "a-link.jsonl")
	writeFile(t, a, "{}\n")
	writeFile(t, b, "{}\n")
	must(t, os.Link(a, link))
	id := func(p string) devIno {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return statIDs(p, fi)
	}
	ia, ib, il, id0 := id(a), id(b), id(link), id(dir)
	if ia == (devIno{}) || ib == (devIno{}) || id0 == (devIno{}) {
		t.Fatalf("no identity: a %v, b %v, dir %v", ia, ib, id0)
	}
	if ia != il {
		t.Errorf("hard link: %v, file: %v, want the same identity", il, ia)
	}
	if ia == ib || ia == id0 || ib == id0 {
		t.Errorf("different files share an identity: a %v, b %v, dir %v", ia, ib, id0)
	}
	if ia.dev != ib.dev || ia.dev != id0.dev {
		t.Errorf("one directory, several devices: %v %v %v", ia, ib, id0)
	}
	// Discover passes the file once, under the first name in name order.
	files, _ := discover(t, []Root{{Path: dir, Recursive: true}})
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.Path))
		if f.Dev != ia.dev && f.Dev != ib.dev || f.Ino == 0 {
			t.Errorf("%s: Dev %d Ino %d not recorded", f.Path, f.Dev, f.Ino)
		}
	}
	if len(names) != 2 || names[0] != "a-link.jsonl" || names[1] != "b.jsonl" {
		t.Errorf("files %v, want [a-link.jsonl b.jsonl]", names)
	}
}

// TestMapFile: where files are mapped (mmap_unix.go) a mapping holds the
// file's bytes and pages can be released and read again; elsewhere
// (mmap_other.go) mapFile refuses and ReadFile reads.
func TestMapFile(t *testing.T) {
	content := bytes.Repeat([]byte("{\"type\":\"message\"}\n"), 40000) // 760 KB, more than mapMin
	path := filepath.Join(t.TempDir(), "m.jsonl")
	must(t, os.WriteFile(path, content, 0o600))
	f, err := OpenRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := mapFile(f, len(content))
	if !mapsFiles {
		if err == nil || data != nil {
			t.Fatalf("mapFile = %d bytes, %v; want a refusal where files are not mapped", len(data), err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(data)
	if !bytes.Equal(data, content) {
		t.Fatal("mapping differs from the file")
	}
	page := os.Getpagesize()
	releasePages(data[:len(data)/page*page])
	if !bytes.Equal(data, content) {
		t.Fatal("released pages read back differently")
	}
	var c collect
	var r Reader
	st, err := r.ReadFile(context.Background(), path, &c)
	if err != nil || st.Records != 40000 || len(c.recs) != 40000 {
		t.Fatalf("ReadFile: %+v, %d records, %v", st, len(c.recs), err)
	}
}

// TestOpenRegularDir: OpenRegular refuses a directory on every platform
// (a FIFO on Unix: fifo_unix_test.go).
func TestOpenRegularDir(t *testing.T) {
	f, err := OpenRegular(t.TempDir())
	if err == nil {
		f.Close()
		t.Fatal("OpenRegular opened a directory")
	}
}
