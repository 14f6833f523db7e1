package ingest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// member is one entry of a test archive.
type member struct {
	name, body string
	link       string // a symbolic link to this target
	dir        bool
}

// WriteTestArchive writes members as an archive of format to p.
func writeTestArchive(t testing.TB, p, format string, members []member) {
	t.Helper()
	var raw bytes.Buffer
	if format == ArchiveZip {
		zw := zip.NewWriter(&raw)
		for _, m := range members {
			h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: time.Date(2025, 9, 10, 8, 0, 0, 0, time.UTC)}
			switch {
			case m.link != "":
				h.SetMode(os.ModeSymlink | 0o777)
			case m.dir:
				h.Name += "/"
				h.SetMode(os.ModeDir | 0o755)
			default:
				h.SetMode(0o644)
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			body := m.body
			if m.link != "" {
				body = m.link
			}
			if _, err := w.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		tw := tar.NewWriter(&raw)
		for _, m := range members {
			h := &tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body)), ModTime: time.Date(2025, 9, 10, 8, 0, 0, 0, time.UTC), Typeflag: tar.TypeReg}
			switch {
			case m.link != "":
				h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, m.link, 0
			case m.dir:
				h.Typeflag, h.Size, h.Mode = tar.TypeDir, 0, 0o755
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				if _, err := tw.Write([]byte(m.body)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data := raw.Bytes()
	switch format {
	case ArchiveTarGz:
		data = gzipBytes(t, data)
	case ArchiveTarZst:
		data = zstdBytes(t, data)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	testHdrA = `{"type":"session","version":3,"id":"a","timestamp":"2025-09-10T08:00:00.000Z","cwd":"/x"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-09-10T08:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	testHdrB = `{"type":"session","version":3,"id":"b","timestamp":"2025-09-10T08:00:00.000Z","cwd":"/y"}` + "\n"
)

// discoverAll discovers roots and returns the files (path → file) and the
// path issues ("code path: message").
func discoverAll(t *testing.T, roots ...string) (map[string]File, []string) {
	t.Helper()
	rts, err := PathRoots(roots)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]File{}
	var issues []string
	err = Discover(context.Background(), rts, func(f File) error { files[f.Path] = f; return nil },
		func(p PathIssue) { issues = append(issues, p.Issue.Code+" "+p.Path+": "+p.Issue.Message) })
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(issues)
	return files, issues
}

// TestArchiveFormats: every archive format given as PATH is read as the
// tree it contains: session files (a compressed member too) shown as
// ARCHIVE!/inner/path, labelled by their path, read exactly as on disk;
// directories and other members passed over; nothing written.
func TestArchiveFormats(t *testing.T) {
	members := []member{
		{name: ".pi", dir: true},
		{name: ".pi/agent/sessions/--x--/a.jsonl", body: testHdrA},
		{name: "./.omp/agent/sessions/b.jsonl.zst", body: string(zstdBytes(t, []byte(testHdrB)))},
		{name: "notes.txt", body: "not a session"},
		{name: ".pi/agent/history.jsonl", body: `{"type":"prompt","text":"hi"}` + "\n"},
	}
	for _, tc := range []struct{ format, name string }{
		{ArchiveTar, "home.tar"}, {ArchiveTarGz, "home.tar.gz"}, {ArchiveTarGz, "home.tgz"},
		{ArchiveTarZst, "home.tar.zst"}, {ArchiveZip, "home.zip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tc.name)
			writeTestArchive(t, p, tc.format, members)
			if !IsArchivePath(p) || ArchiveFormatOf(tc.name) != tc.format {
				t.Fatalf("%s not recognised as %s", tc.name, tc.format)
			}
			files, issues := discoverAll(t, p)
			a, b := p+"!/.pi/agent/sessions/--x--/a.jsonl", p+"!/.omp/agent/sessions/b.jsonl.zst"
			if len(issues) != 1 || !strings.HasPrefix(issues[0], CodeNotASessionFile+" "+p+"!/.pi/agent/history.jsonl:") {
				t.Errorf("issues %q, want pi's prompt history passed over as on disk (not_a_session_file)", issues)
			}
			issues = nil
			if len(files) != 2 || files[a].Source != SourcePi || files[b].Source != SourceOmp || len(issues) != 0 {
				t.Fatalf("files %v, issues %v", files, issues)
			}
			if files[a].Archive != p || files[a].Member != ".pi/agent/sessions/--x--/a.jsonl" || files[a].Size != int64(len(testHdrA)) ||
				files[b].Kind.Compression != CompressionZstd || ArchiveOf(a) != p {
				t.Errorf("member facts: %+v %+v", files[a], files[b])
			}
			for path, want := range map[string]string{a: "R R ", b: "R "} {
				// Twice, and out of order: a tar member after a later one
				// is found again.
				for i := 0; i < 2; i++ {
					if got, err := readSummary(t, path); err != nil || got != want {
						t.Errorf("read %s: %q, %v; want %q", path, got, err, want)
					}
				}
			}
			rc, err := OpenContent(b)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(rc)
			rc.Close()
			if err != nil || buf.String() != testHdrB {
				t.Errorf("OpenContent(%s) = %q, %v", b, buf.String(), err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("the archive's directory holds %d entries: something was extracted", len(ents))
			}
			// The digest changes with the content only.
			again, _ := discoverAll(t, p)
			if again[a].Ino != files[a].Ino || files[a].Ino == files[b].Ino {
				t.Errorf("digests: %x %x %x", again[a].Ino, files[a].Ino, files[b].Ino)
			}
		})
	}
}

// TestHostileArchives: a truncated archive, members named ../x or /etc/x,
// link members and a decompression bomb each get a clear issue or error
// naming the archive and the member, and never hurt the rest of the run.
func TestHostileArchives(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.jsonl")
	if err := os.WriteFile(plain, []byte(testHdrB), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("truncated", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "home.tar.gz")
		big := strings.Repeat(`{"type":"message","x":"`+strings.Repeat("z", 100)+`"}`+"\n", 2000)
		writeTestArchive(t, p, ArchiveTarGz, []member{{name: "s/a.jsonl", body: testHdrA}, {name: "s/b.jsonl", body: testHdrB + big}})
		raw, _ := os.ReadFile(p)
		if err := os.WriteFile(p, raw[:len(raw)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		files, issues := discoverAll(t, p, plain)
		if _, ok := files[p+"!/s/a.jsonl"]; !ok || len(files) != 2 {
			t.Errorf("files before the damage and after the archive: %v", files)
		}
		if _, ok := files[plain]; !ok {
			t.Error("the next PATH was not read")
		}
		if len(issues) != 1 || !strings.Contains(issues[0], "unreadable "+p+"!/s/b.jsonl: ") || !strings.Contains(issues[0], "truncated") {
			t.Errorf("issues %q, want one unreadable naming the member and truncated", issues)
		}
	})

	t.Run("names and links", func(t *testing.T) {
		for _, format := range []string{ArchiveTar, ArchiveZip} {
			p := filepath.Join(t.TempDir(), "home."+format)
			writeTestArchive(t, p, format, []member{
				{name: "../up.jsonl", body: testHdrA},
				{name: "/etc/abs.jsonl", body: testHdrB},
				{name: "link.jsonl", link: "/etc/passwd"},
			})
			files, issues := discoverAll(t, p)
			up, abs := p+"!/up.jsonl", p+"!/etc/abs.jsonl"
			if len(files) != 2 || files[up].Member != "up.jsonl" || files[abs].Member != "etc/abs.jsonl" {
				t.Errorf("%s: files %v", format, files)
			}
			want := []string{
				CodeArchiveMember + " " + abs + `: member "/etc/abs.jsonl" is shown as "etc/abs.jsonl"`,
				CodeArchiveMember + " " + p + "!/link.jsonl: a ",
				CodeArchiveMember + " " + up + `: member "../up.jsonl" is shown as "up.jsonl"`,
			}
			if len(issues) != len(want) {
				t.Fatalf("%s: issues %q", format, issues)
			}
			for i := range want {
				if !strings.HasPrefix(issues[i], want[i]) {
					t.Errorf("%s: issue %q, want %q…", format, issues[i], want[i])
				}
			}
			if got, err := readSummary(t, up); err != nil || got != "R R " {
				t.Errorf("%s: read %s: %q %v", format, up, got, err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(p)), "up.jsonl")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: something was written outside", format)
			}
		}
	})

	t.Run("bomb", func(t *testing.T) {
		defer func(old int64) { MaxCompressedLine = old }(MaxCompressedLine)
		MaxCompressedLine = 1 << 20
		p := filepath.Join(t.TempDir(), "bomb.tar.zst")
		writeTestArchive(t, p, ArchiveTarZst, []member{{name: "s/bomb.jsonl", body: strings.Repeat("a", 16<<20)}, {name: "s/ok.jsonl", body: testHdrB}})
		files, issues := discoverAll(t, p)
		if len(files) != 2 || len(issues) != 0 {
			t.Fatalf("files %v issues %v", files, issues)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := readSummary(t, p+"!/s/bomb.jsonl")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), p+"!/s/bomb.jsonl") || !strings.Contains(err.Error(), "decompression bomb") {
			t.Errorf("bomb: %v", err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 40<<20 {
			t.Errorf("bomb: %d MiB allocated", grew>>20)
		}
		if got, err := readSummary(t, p+"!/s/ok.jsonl"); err != nil || got != "R " {
			t.Errorf("the member after the bomb: %q %v", got, err)
		}
	})
}

// FuzzArchive feeds arbitrary bytes to the archive and decompression
// readers as each format: discovery and reading every member found must
// return (an error or issues), never panic or hang.
func FuzzArchive(f *testing.F) {
	dir := f.TempDir()
	for _, format := range []string{ArchiveTar, ArchiveTarGz, ArchiveTarZst, ArchiveZip} {
		p := filepath.Join(dir, "seed."+format)
		writeTestArchive(f, p, format, []member{{name: "a.jsonl", body: testHdrA}, {name: "../b.jsonl.gz", body: string(gzipBytes(f, []byte(testHdrB)))}})
		raw, _ := os.ReadFile(p)
		for i := uint8(0); i < 4; i++ {
			f.Add(raw, i)
		}
	}
	f.Add([]byte{}, uint8(1))
	names := []string{"f.tar", "f.tar.gz", "f.tar.zst", "f.zip"}
	MaxCompressedLine = 1 << 20 // a few fuzzed bytes may expand to a bomb
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		p := filepath.Join(t.TempDir(), names[int(which)%len(names)])
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rts := []Root{{Path: p, Recursive: true, Archive: true}}
		var paths []string
		_ = Discover(context.Background(), rts, func(f File) error { paths = append(paths, f.Path); return nil }, func(PathIssue) {})
		rd := Reader{MaxDepth: 1}
		for _, mp := range paths {
			if !strings.HasPrefix(mp, p+MemberSep) {
				t.Fatalf("member path %q outside the archive", mp)
			}
			_, _ = rd.ReadFile(context.Background(), mp, sumVisitor{rec: func(*Record) {}, iss: func(Issue) {}})
		}
		// The same bytes as a compressed session file.
		for _, ext := range []string{".jsonl.gz", ".jsonl.zst"} {
			q := filepath.Join(t.TempDir(), "s"+ext)
			if err := os.WriteFile(q, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _ = rd.ReadFile(context.Background(), q, sumVisitor{rec: func(*Record) {}, iss: func(Issue) {}})
		}
	})
}
