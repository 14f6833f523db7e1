package export

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTarZst writes a .tar.zst of the members (name → content), every
// member with the same mtime.
func writeTarZst(t *testing.T, p string, members [][2]string) {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, m := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m[0], Mode: 0o644, Size: int64(len(m[1])), ModTime: time.Date(2025, 9, 10, 8, 0, 0, 0, time.UTC), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, zstdOf(t, raw.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalArchivesAndCompressed: the incremental export keys an
// archive member by its path, size, mtime and a digest of its content,
// and a compressed file like any file: an unchanged archive is not read
// again; a member whose content changed (same size, same mtime) is, and
// only it; a compressed file that changed is.
func TestIncrementalArchivesAndCompressed(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	session := func(cwd string) string {
		return `{"type":"session","version":3,"id":"s-` + cwd + `","timestamp":"2025-09-10T08:00:00.000Z","cwd":"/` + cwd + `"}` + "\n" +
			`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-09-10T08:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	}
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "home.tar.zst")
			writeTarZst(t, arch, [][2]string{{".pi/agent/sessions/a.jsonl", session("aaa")}, {".pi/agent/sessions/b.jsonl", session("bbb")}})
			zf := filepath.Join(dir, "c.jsonl.zst")
			if err := os.WriteFile(zf, zstdOf(t, []byte(session("ccc"))), 0o644); err != nil {
				t.Fatal(err)
			}
			roots := []string{arch, zf}
			out := t.TempDir()
			sum := runExport(t, s, out, roots, nil)
			if sum.Read != 3 || sum.Rejected != 0 {
				t.Fatalf("first export: read %d, rejected %d", sum.Read, sum.Rejected)
			}
			sum = runExport(t, s, out, roots, nil)
			if sum.Read != 0 || sum.Unchanged != 3 {
				t.Errorf("unchanged: read %d, unchanged %d; want 0, 3", sum.Read, sum.Unchanged)
			}
			// Member a: other content, same size and mtime.
			writeTarZst(t, arch, [][2]string{{".pi/agent/sessions/a.jsonl", session("AAA")}, {".pi/agent/sessions/b.jsonl", session("bbb")}})
			sum = runExport(t, s, out, roots, nil)
			if sum.Read != 1 || sum.Unchanged != 2 {
				t.Errorf("a member changed: read %d, unchanged %d; want 1, 2", sum.Read, sum.Unchanged)
			}
			if err := os.WriteFile(zf, zstdOf(t, []byte(session("ccc")+session("ccc")[:0]+`{"type":"label","id":"e2","parentId":"e1","timestamp":"2025-09-10T08:00:02.000Z","label":"x"}`+"\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			sum = runExport(t, s, out, roots, nil)
			if sum.Read != 1 || sum.Unchanged != 2 {
				t.Errorf("the .zst changed: read %d, unchanged %d; want 1, 2", sum.Read, sum.Unchanged)
			}
			db := s.open(t, out)
			var cwds string
			queryOne(t, db, "SELECT string_agg(cwd, ',' ORDER BY cwd) FROM sessions", &cwds)
			var entries int
			queryOne(t, db, "SELECT entry_count FROM sessions WHERE cwd = '/ccc'", &entries)
			if cwds != "/AAA,/bbb,/ccc" || entries != 2 {
				t.Errorf("sessions after the changes: %s, c has %d entries", cwds, entries)
			}
			var path string
			queryOne(t, db, "SELECT path FROM files WHERE path LIKE '%b.jsonl'", &path)
			if path != arch+"!/.pi/agent/sessions/b.jsonl" {
				t.Errorf("files.path %q", path)
			}
		})
	}
}
