package ingest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		want NameKind
	}{
		{"s.jsonl", NameKind{Session: true}},
		{"s.jsonl.zst", NameKind{Session: true, Compression: CompressionZstd}},
		{"s.jsonl.gz", NameKind{Session: true, Compression: CompressionGzip}},
		{"id.jsonl.reset.2025-10-05T07-30-00-000Z", NameKind{Session: true, Archived: true}},
		{"id.jsonl.deleted.2025-10-04T12-00-00-000Z.zst", NameKind{Session: true, Archived: true, Compression: CompressionZstd}},
		{"id.jsonl.deleted.2025-10-04T12-00-00-000Z.gz", NameKind{Session: true, Archived: true, Compression: CompressionGzip}},
		{"id.jsonl.bak", NameKind{Session: true, Snapshot: true}},
		{"id.jsonl.bak-1", NameKind{Session: true, Snapshot: true}},
		{"id.jsonl.bak.zst", NameKind{Session: true, Snapshot: true, Compression: CompressionZstd}},
		{"id.checkpoint.23a0c0cc-4e5f.jsonl", NameKind{Session: true, Snapshot: true}},
		{"id.trajectory.jsonl", NameKind{Session: true, Trajectory: true}},
		{"id.jsonl.reset.", NameKind{}},
		{"id.jsonl.lock", NameKind{}},
		{"id.json", NameKind{}},
		{"notes.txt.gz", NameKind{Compression: CompressionGzip}}, // not a session name; decompressed when named as PATH
		{"home.tar.gz", NameKind{Compression: CompressionGzip}},
		{".sessions-etl-1-s.jsonl-x.tmp", NameKind{}},
		{".sessions-etl-1-x.jsonl", NameKind{}},
	}
	for _, tc := range tests {
		if got := KindOf(tc.name); got != tc.want {
			t.Errorf("KindOf(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if !KindOf("a.jsonl.gz").ReadOnly() || !KindOf("a.jsonl.bak").ReadOnly() || !KindOf("a.jsonl.reset.1").ReadOnly() || KindOf("a.jsonl").ReadOnly() {
		t.Error("ReadOnly")
	}
}

func zstdBytes(t testing.TB, b []byte) []byte {
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

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readSummary reads a file and describes what the reader saw: records
// (their raw bytes) and issues (code and line).
func readSummary(t *testing.T, path string) (string, error) {
	t.Helper()
	var sb strings.Builder
	rd := Reader{MaxDepth: 1}
	_, err := rd.ReadFile(context.Background(), path, sumVisitor{
		rec: func(r *Record) { sb.WriteString("R ") },
		iss: func(is Issue) { sb.WriteString(is.Code + " ") },
	})
	return sb.String(), err
}

type sumVisitor struct {
	rec func(*Record)
	iss func(Issue)
}

func (v sumVisitor) Record(r *Record) error { v.rec(r); return nil }
func (v sumVisitor) Issue(is Issue)         { v.iss(is) }

// TestCompressedKeepsReaderGuarantees: a .zst or .gz file reads exactly
// as its content does uncompressed: a torn final record, concatenated
// records, a line of several MiB (no line-length limit), CRLF, a gzip file
// of several members.
func TestCompressedKeepsReaderGuarantees(t *testing.T) {
	hdr := `{"type":"session","id":"a","version":3,"timestamp":"2025-01-01T00:00:00Z","cwd":"/x"}`
	big := `{"type":"message","x":"` + strings.Repeat("b", 5<<20) + `"}`
	contents := map[string]string{
		"torn":         hdr + "\n" + `{"type":"message","a":1}` + "\n" + `{"type":"mess`,
		"concatenated": hdr + "\n" + `{"type":"message","a":1}{"type":"message","a":2}` + "\n",
		"long line":    hdr + "\n" + big + "\n" + `{"type":"message"}` + "\n",
		"crlf":         hdr + "\r\n" + `{"type":"message"}` + "\r\n",
		"no newline":   hdr + "\n" + `{"type":"message"}`,
	}
	dir := t.TempDir()
	for name, content := range contents {
		plain := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
		if err := os.WriteFile(plain, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := readSummary(t, plain)
		if err != nil {
			t.Fatal(err)
		}
		half := len(content) / 2
		for ext, data := range map[string][]byte{
			".zst": zstdBytes(t, []byte(content)),
			".gz":  gzipBytes(t, []byte(content)),
			// two gzip members, as `cat a.gz b.gz` makes
			".2.gz": append(gzipBytes(t, []byte(content[:half])), gzipBytes(t, []byte(content[half:]))...),
		} {
			p := plain + ext
			if ext == ".2.gz" {
				p = strings.TrimSuffix(plain, ".jsonl") + "-2.jsonl.gz"
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readSummary(t, p)
			if err != nil || got != want {
				t.Errorf("%s%s: read %q (%v), want %q as uncompressed", name, ext, got, err, want)
			}
		}
	}
}

// TestCompressedDamage: a truncated or corrupt compressed file is an
// error wrapping ErrCompressed that names the format and the file; a
// line longer than MaxCompressedLine (a decompression bomb) is refused
// before it is held in memory, while a bomb of blank lines reads in
// bounded memory.
func TestCompressedDamage(t *testing.T) {
	dir := t.TempDir()
	content := []byte(strings.Repeat(`{"type":"session","id":"a","version":3,"timestamp":"2025-01-01T00:00:00Z"}`+"\n", 2000))
	z, g := zstdBytes(t, content), gzipBytes(t, content)
	cases := map[string][]byte{
		"trunc.jsonl.zst":   z[:len(z)/2],
		"trunc.jsonl.gz":    g[:len(g)/2],
		"garbage.jsonl.zst": []byte("this is not zstd at all"),
		"garbage.jsonl.gz":  []byte("this is not gzip at all"),
		"empty.jsonl.gz":    {},
	}
	for name, data := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readSummary(t, p)
		format := "zstd"
		if strings.HasSuffix(name, ".gz") {
			format = "gzip"
		}
		if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), format) {
			t.Errorf("%s: error %v, want ErrCompressed naming %s and the file", name, err, format)
		}
		if strings.HasPrefix(name, "trunc") && !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("%s: error %v does not say truncated", name, err)
		}
	}

	defer func(old int64) { MaxCompressedLine = old }(MaxCompressedLine)
	MaxCompressedLine = 1 << 20
	bomb := filepath.Join(dir, "bomb.jsonl.zst")
	if err := os.WriteFile(bomb, zstdBytes(t, bytes.Repeat([]byte("a"), 16<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readSummary(t, bomb)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), "decompression bomb") {
		t.Errorf("bomb: %v, want a refused line", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("bomb: %d MiB allocated for a refused 16 MiB line", grew>>20)
	}
	blank := filepath.Join(dir, "blank.jsonl.zst")
	if err := os.WriteFile(blank, zstdBytes(t, bytes.Repeat([]byte("\n"), 64<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := readSummary(t, blank)
	runtime.ReadMemStats(&after)
	if err != nil || got != "" {
		t.Errorf("64 MiB of newlines: %q, %v", got, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("64 MiB of newlines: %d MiB allocated", grew>>20)
	}
}
