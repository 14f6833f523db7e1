package importer

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/validate"
)

// archMember is one member of a test archive.
type archMember struct {
	name string
	body []byte
	link string // a symbolic link member to this target
}

var memberTime = time.Date(2025, 9, 10, 8, 0, 0, 0, time.UTC)

func compress(t *testing.T, data []byte, how string) []byte {
	t.Helper()
	var b bytes.Buffer
	switch how {
	case "gz":
		w := gzip.NewWriter(&b)
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case "zst":
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		return data
	}
	return b.Bytes()
}

// archiveBytes builds an archive of format ("tar", "tar.gz", "tar.zst",
// "zip") holding members.
func archiveBytes(t *testing.T, format string, members []archMember) []byte {
	t.Helper()
	var raw bytes.Buffer
	if format == "zip" {
		zw := zip.NewWriter(&raw)
		for _, m := range members {
			h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: memberTime}
			body := m.body
			if m.link != "" {
				h.SetMode(os.ModeSymlink | 0o777)
				body = []byte(m.link)
			} else {
				h.SetMode(0o640)
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(body); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return raw.Bytes()
	}
	tw := tar.NewWriter(&raw)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Mode: 0o640, Size: int64(len(m.body)), ModTime: memberTime, Typeflag: tar.TypeReg}
		if m.link != "" {
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, m.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return compress(t, raw.Bytes(), strings.TrimPrefix(strings.TrimPrefix(format, "tar"), "."))
}

const (
	sidC = "0c0c0c0c-4e5f-4a6b-8c7d-0c0c0c0c0001"
	sidD = "0d0d0d0d-4e5f-4a6b-8c7d-0d0d0d0d0002"
)

const sessDir = ".pi/agent/sessions/--home-dev-proj--/"

func sessName(id string) string { return "2025-06-01T10-00-00-000Z_" + id + ".jsonl" }

// TestImportCompressedAndArchivedSources imports the same two v3 sessions
// from each kind of source that is not a plain file (SPEC.md §7.2): .zst
// and .gz files, every home-archive format given as SOURCE, a compressed
// member inside a tar, and a content spooled to a temporary file. Each
// copy is the decompressed content upgraded (checked independently of
// package upgrade), with the member's or the file's mtime; a second run is
// already_imported and writes nothing; undo removes the copies; the sources
// are never modified; no temporary file is left.
func TestImportCompressedAndArchivedSources(t *testing.T) {
	plainC, plainD := v3Session(sidC, 6), v3Session(sidD, 3)
	big := v3Session(sidD, 400) // > the spool's memory in the spooled case
	cases := []struct {
		name  string
		spool int64 // spoolMem for the run; 0: the default
		build func(t *testing.T, dir string) (src string, paths map[string]string)
		wantD []byte
		mtime time.Time // the copies' mtime; zero: the source file's
	}{
		{name: "zst and gz files", build: func(t *testing.T, dir string) (string, map[string]string) {
			c := filepath.Join(dir, sessDir, sessName(sidC)+".zst")
			d := filepath.Join(dir, sessDir, sessName(sidD)+".gz")
			mustWrite(t, c, compress(t, plainC, "zst"), 0o600, mtime1)
			mustWrite(t, d, compress(t, plainD, "gz"), 0o600, mtime1)
			return filepath.Join(dir, ".pi"), map[string]string{sidC: c, sidD: d}
		}, wantD: plainD, mtime: mtime1},
		{name: "tar", build: archiveCase("tar", plainC, plainD, ""), wantD: plainD, mtime: memberTime},
		{name: "tar.gz", build: archiveCase("tar.gz", plainC, plainD, ""), wantD: plainD, mtime: memberTime},
		{name: "tar.zst", build: archiveCase("tar.zst", plainC, plainD, ""), wantD: plainD, mtime: memberTime},
		{name: "zip", build: archiveCase("zip", plainC, plainD, ""), wantD: plainD, mtime: memberTime},
		{name: "zst member of a tar", build: archiveCase("tar", plainC, plainD, "zst"), wantD: plainD, mtime: memberTime},
		{name: "tar.zst spooled to a file", spool: 4 << 10, build: archiveCase("tar.zst", plainC, big, ""), wantD: big, mtime: memberTime},
		{name: "gz file spooled to a file", spool: 4 << 10, build: func(t *testing.T, dir string) (string, map[string]string) {
			c := filepath.Join(dir, sessDir, sessName(sidC))
			d := filepath.Join(dir, sessDir, sessName(sidD)+".gz")
			mustWrite(t, c, plainC, 0o600, mtime1)
			mustWrite(t, d, compress(t, big, "gz"), 0o600, mtime1)
			return filepath.Join(dir, ".pi"), map[string]string{sidC: c, sidD: d}
		}, wantD: big, mtime: mtime1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.spool > 0 {
				old := spoolMem
				spoolMem = tc.spool
				t.Cleanup(func() { spoolMem = old })
			}
			dir := t.TempDir()
			src, paths := tc.build(t, dir)
			store := filepath.Join(t.TempDir(), "store")
			e := newEnv(t)
			before := snapshot(t, dir)

			out := e.run(t, []string{src}, store, nil)
			want := map[string][]byte{sidC: plainC, sidD: tc.wantD}
			for id, p := range paths {
				r := out.byPath[p]
				copyPath := filepath.Join(store, "--home-dev-proj--", sessName(id))
				if r.Result != ResultImported || r.SessionID != id || r.Target != copyPath || r.FromVersion != 3 {
					t.Fatalf("%s: %+v, want imported to %s", p, r, copyPath)
				}
				if res := validateFile(t, copyPath); res.Status != validate.StatusCurrent {
					t.Errorf("%s: the copy validates as %s", p, res.Status)
				}
				checkUpgradedCopy(t, p, want[id], mustRead(t, copyPath), "")
				if fi, err := os.Stat(copyPath); err != nil || !fi.ModTime().Equal(tc.mtime) {
					t.Errorf("%s: copy mtime %v, want %v (%v)", p, fi.ModTime(), tc.mtime, err)
				}
			}
			if len(out.results) != len(paths) || out.sum.Failed != 0 {
				t.Fatalf("results %+v", out.results)
			}
			storeAfter := snapshot(t, store)

			out2 := e.run(t, []string{src}, store, nil)
			for _, p := range paths {
				if r := out2.byPath[p]; r.Result != ResultAlreadyImported {
					t.Errorf("second run: %s: %+v", p, r)
				}
			}
			if out2.sum.RunID != "" {
				t.Errorf("second run journaled: %s", out2.sum.RunDir)
			}
			if d := diffSnapshots(storeAfter, snapshot(t, store)); len(d) > 0 {
				t.Errorf("second run changed the store: %v", d)
			}

			e.undo(t, out.sum.RunID)
			if left := storeFiles(t, store); len(left) != 0 {
				t.Errorf("after undo the store holds %v", left)
			}
			if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
				t.Errorf("sources changed: %v", d)
			}
			if temps, _ := filepath.Glob(filepath.Join(e.state, fstx.TempPrefix+"*")); len(temps) > 0 {
				t.Errorf("temporary files left: %v", temps)
			}
		})
	}
}

// archiveCase builds home.<format> holding c and d as members of a pi
// home (d compressed as memberCompression when not "").
func archiveCase(format string, c, d []byte, memberCompression string) func(t *testing.T, dir string) (string, map[string]string) {
	return func(t *testing.T, dir string) (string, map[string]string) {
		dName := sessDir + sessName(sidD)
		if memberCompression != "" {
			d = compress(t, d, memberCompression)
			dName += "." + memberCompression
		}
		arch := filepath.Join(dir, "home."+format)
		mustWrite(t, arch, archiveBytes(t, format, []archMember{{name: sessDir + sessName(sidC), body: c}, {name: dName, body: d}}), 0o600, mtime1)
		return arch, map[string]string{sidC: arch + ingest.MemberSep + sessDir + sessName(sidC), sidD: arch + ingest.MemberSep + dName}
	}
}

// TestImportHostileArchiveMembers: a member named "../x" is read under its
// cleaned name (the warning goes with its result, nothing is written
// outside the store), a symbolic link member is not followed, a
// decompression bomb and a truncated member fail with a message naming the
// archive and member, and none of them keeps the good members from being
// imported.
func TestImportHostileArchiveMembers(t *testing.T) {
	old := ingest.MaxCompressedLine
	ingest.MaxCompressedLine = 1 << 20
	t.Cleanup(func() { ingest.MaxCompressedLine = old })
	bomb := compress(t, bytes.Repeat([]byte("a"), 3<<20), "zst")
	good := v3Session(sidC, 4)
	evil := v3Session(sidD, 2)
	dir := t.TempDir()
	arch := filepath.Join(dir, "home.tar.gz")
	data := archiveBytes(t, "tar.gz", []archMember{
		{name: sessDir + sessName(sidC), body: good},
		{name: "../" + sessName(sidD), body: evil},
		{name: sessDir + "link.jsonl", link: "/etc/passwd"},
		{name: sessDir + "bomb.jsonl.zst", body: bomb},
	})
	mustWrite(t, arch, data, 0o600, mtime1)
	// The same archive cut short: its last member is truncated.
	truncated := filepath.Join(dir, "cut.tar")
	tarData := archiveBytes(t, "tar", []archMember{
		{name: sessDir + sessName(sidC), body: good},
		{name: sessDir + "2025-06-02T10-00-00-000Z_cut.jsonl", body: v3Session("0e0e0e0e-4e5f-4a6b-8c7d-0e0e0e0e0003", 50)},
	})
	mustWrite(t, truncated, tarData[:len(tarData)-1024-600], 0o600, mtime1)

	store := filepath.Join(t.TempDir(), "store")
	e := newEnv(t)
	before := snapshot(t, dir)
	out := e.run(t, []string{arch, truncated}, store, nil)

	m := arch + ingest.MemberSep
	if r := out.byPath[m+sessDir+sessName(sidC)]; r.Result != ResultImported {
		t.Errorf("good member: %+v", r)
	}
	r := out.byPath[m+sessName(sidD)]
	if r.Result != ResultImported || r.Target != filepath.Join(store, "--home-dev-proj--", sessName(sidD)) || !hasNote(r, `"../`+sessName(sidD)+`"`) {
		t.Errorf("../ member: %+v, want imported into the store with a note on its name", r)
	}
	if r := out.byPath[m+sessDir+"link.jsonl"]; r.Result != ResultSkipped || r.Reason != ingest.CodeArchiveMember || r.Failed() {
		t.Errorf("link member: %+v, want skipped archive_member (not an error)", r)
	}
	r = out.byPath[m+sessDir+"bomb.jsonl.zst"]
	if r.Result != ResultFailed || !strings.Contains(r.Detail, "decompression bomb") || !strings.Contains(r.Detail, m+sessDir+"bomb.jsonl.zst") {
		t.Errorf("bomb: %+v, want failed naming the member", r)
	}
	var cut *Result
	for i, r := range out.results {
		if strings.HasPrefix(r.Path, truncated) && r.Result == ResultFailed {
			cut = &out.results[i]
		}
	}
	if cut == nil || !strings.Contains(cut.Detail, "truncated") || !strings.Contains(cut.Path, "_cut.jsonl") {
		t.Errorf("truncated archive: %+v in %+v", cut, out.results)
	}
	if r := out.byPath[truncated+ingest.MemberSep+sessDir+sessName(sidC)]; r.Result != ResultDuplicate && r.Result != ResultAlreadyImported {
		t.Errorf("the good member of the truncated archive: %+v", r)
	}
	if got := storeFiles(t, store); len(got) != 2 || len(got[sidC]) != 1 || len(got[sidD]) != 1 {
		t.Errorf("store holds %v, want %s and %s once each", got, sidC, sidD)
	}
	if out.sum.Failed != 2 {
		t.Errorf("%d files not imported, want 2 (the bomb, the truncated member): %+v", out.sum.Failed, out.results)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Errorf("sources changed: %v", d)
	}
	if _, err := os.Lstat(filepath.Join(dir, sessName(sidD))); err == nil {
		t.Errorf("a member was extracted beside the archive")
	}
}

func hasNote(r Result, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n.What, s) {
			return true
		}
	}
	return false
}

// TestImportOmpKeepsTitle: an oh-my-pi file opening with its title slot
// (SPEC.md §7.2), plain and compressed, is imported without the slot,
// its title kept as the session's name (a session_info entry appended,
// line numbers of the notes those of the source file); a second run is
// already_imported; the source is untouched.
func TestImportOmpKeepsTitle(t *testing.T) {
	const title = "Fix flaky login test"
	slot := `{"type":"title","v":1,"title":"` + title + `","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`
	slot += strings.Repeat(" ", session.TitleSlotSize-len(slot)-3) + "\"}\n"
	if len(slot) != session.TitleSlotSize {
		t.Fatalf("slot is %d bytes", len(slot))
	}
	body := v3Session(sidC, 4)
	for _, how := range []string{"", "zst"} {
		t.Run("compressed="+how, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, ".omp", "agent", "sessions", "--home-dev-proj--", sessName(sidC))
			data := append([]byte(slot), body...)
			if how != "" {
				name += "." + how
				data = compress(t, data, how)
			}
			mustWrite(t, name, data, 0o600, mtime1)
			store := filepath.Join(t.TempDir(), "store")
			e := newEnv(t)
			before := snapshot(t, dir)
			out := e.run(t, []string{filepath.Join(dir, ".omp")}, store, nil)
			r := out.byPath[name]
			copyPath := filepath.Join(store, "--home-dev-proj--", sessName(sidC))
			if r.Result != ResultImported || r.Target != copyPath || !hasNote(r, title) {
				t.Fatalf("%+v", r)
			}
			for _, c := range r.Changes {
				if strings.Contains(c.What, "header") && c.Line != 2 {
					t.Errorf("change %+v: the header is line 2 of the source", c)
				}
			}
			got := mustRead(t, copyPath)
			if bytes.Contains(got, []byte(`"type":"title"`)) {
				t.Errorf("the slot was copied")
			}
			recs := records(t, "copy", got)
			last := recs[len(recs)-1]
			if last["type"] != "session_info" || last["name"] != title || last["parentId"] != "e0000004" || last["timestamp"] != "2025-12-05T14:05:00.000Z" {
				t.Errorf("last record %v, want a session_info naming the session", last)
			}
			checkUpgradedCopy(t, "copy", body, got[:bytes.LastIndex(got[:len(got)-1], []byte("\n"))+1], "")
			if res := validateFile(t, copyPath); res.Status != validate.StatusCurrent || res.Entries != 5 {
				t.Errorf("copy: %s, %d entries", res.Status, res.Entries)
			}
			out2 := e.run(t, []string{filepath.Join(dir, ".omp")}, store, nil)
			if r := out2.byPath[name]; r.Result != ResultAlreadyImported {
				t.Errorf("second run: %+v", r)
			}
			if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
				t.Errorf("source changed: %v", d)
			}
		})
	}
}

// TestImportSkipsOpenClawArchives: reset and deleted archives (compressed
// or not) are skipped with the reason archived, not an error; the live
// session beside them is imported.
func TestImportSkipsOpenClawArchives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents", "ops", "sessions")
	live := filepath.Join(dir, sidC+".jsonl")
	reset := filepath.Join(dir, sidC+".jsonl.reset.2025-10-05T07-30-00-000Z")
	deleted := filepath.Join(dir, sidD+".jsonl.deleted.2025-10-04T12-00-00-000Z.zst")
	mustWrite(t, live, v3Session(sidC, 4), 0o600, mtime1)
	mustWrite(t, reset, v3Session(sidC, 2), 0o600, mtime1)
	mustWrite(t, deleted, compress(t, v3Session(sidD, 2), "zst"), 0o600, mtime1)
	out := newEnv(t).run(t, []string{dir}, filepath.Join(t.TempDir(), "store"), nil)
	if r := out.byPath[live]; r.Result != ResultImported {
		t.Errorf("live: %+v", r)
	}
	for _, p := range []string{reset, deleted} {
		if r := out.byPath[p]; r.Result != ResultSkipped || r.Reason != ReasonArchived || r.Failed() {
			t.Errorf("%s: %+v, want skipped archived", p, r)
		}
	}
}
