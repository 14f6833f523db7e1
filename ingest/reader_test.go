package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

type collect struct {
	recs   []string
	lines  []int
	parts  []int
	issues []Issue
}

func (c *collect) Record(r *Record) error {
	c.recs = append(c.recs, string(r.Raw))
	c.lines = append(c.lines, r.Line)
	c.parts = append(c.parts, r.Part)
	return nil
}
func (c *collect) Issue(is Issue) { c.issues = append(c.issues, is) }

func (c *collect) codes() []string {
	var out []string
	for _, is := range c.issues {
		out = append(out, is.Code)
	}
	return out
}

func read(t *testing.T, s string) *collect {
	t.Helper()
	var c collect
	r := Reader{MaxDepth: 2}
	if _, err := r.Read(context.Background(), strings.NewReader(s), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestReaderLineRules(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		recs  int
		codes []string
		lines []int
	}{
		{"plain", "{\"a\":1}\n{\"b\":2}\n", 2, nil, []int{1, 2}},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", 2, nil, []int{1, 2}},
		{"blank lines skipped", "\n{\"a\":1}\n   \n\t\r\n{\"b\":2}\n\n", 2, nil, []int{2, 5}},
		{"complete final record without newline", "{\"a\":1}\n{\"b\":2}", 2, []string{CodeNoTrailingNewline}, []int{1, 2}},
		{"torn final record", "{\"a\":1}\n{\"b\":", 1, []string{CodeTornFinalRecord}, []int{1}},
		{"torn final garbage", "{\"a\":1}\nxyz", 1, []string{CodeTornFinalRecord}, []int{1}},
		{"corrupt middle line", "{\"a\":1}\n{\"b\": oops}\n{\"c\":3}\n", 2, []string{CodeCorruptLine}, []int{1, 3}},
		{"incomplete middle line is corrupt", "{\"a\":1}\n{\"b\":\n{\"c\":3}\n", 2, []string{CodeCorruptLine}, []int{1, 3}},
		{"concatenated records", "{\"type\":\"x\"}{\"type\":\"y\"}\n", 2, []string{CodeConcatenatedRecords}, []int{1, 1}},
		{"concatenated with spaces", "{\"a\":1} {\"b\":2}\n", 2, []string{CodeConcatenatedRecords}, []int{1, 1}},
		{"fragment then record", "{\"type\":\"mess{\"type\":\"message\",\"id\":\"a\"}\n", 1, []string{CodeConcatenatedRecords}, []int{1}},
		{"record then fragment", "{\"type\":\"message\"}{\"type\":\"mess\n", 1, []string{CodeConcatenatedRecords}, []int{1}},
		{"nested block is not a resync point", "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"u\":\n{\"a\":1}\n", 1, []string{CodeCorruptLine}, []int{2}},
		{"final line concatenated and torn", "{\"a\":1}\n{\"type\":\"x\"}{\"type\":\"y\",\"id\"", 2, []string{CodeConcatenatedRecords, CodeTornFinalRecord}, []int{1, 2}},
		{"final line two records", "{\"type\":\"x\"}{\"type\":\"y\"}", 2, []string{CodeConcatenatedRecords}, []int{1, 1}},
		{"bom", "\xef\xbb\xbf{\"type\":\"session\"}\n", 1, []string{CodeBOM}, []int{1}},
		{"invalid utf8 is a note", "{\"a\":\"\xff\xfe\"}\n", 1, []string{CodeInvalidUTF8}, []int{1}},
		{"empty", "", 0, nil, nil},
		{"only blanks", "\n \n\r\n", 0, nil, nil},
		{"scalar values are records", "1\n\"s\"\n", 2, nil, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := read(t, tt.in)
			if len(c.recs) != tt.recs {
				t.Errorf("records = %d %q, want %d", len(c.recs), c.recs, tt.recs)
			}
			if strings.Join(c.codes(), ",") != strings.Join(tt.codes, ",") {
				t.Errorf("codes = %v, want %v (%v)", c.codes(), tt.codes, c.issues)
			}
			if tt.lines != nil && !equalInts(c.lines, tt.lines) {
				t.Errorf("lines = %v, want %v", c.lines, tt.lines)
			}
			for _, r := range c.recs {
				if !json.Valid([]byte(r)) {
					t.Errorf("record %q is not valid JSON", r)
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderSeqAndOffsets(t *testing.T) {
	in := "\xef\xbb\xbf{\"type\":\"session\"}\n\n{\"a\":1}{\"b\":2}\n{\"c\":3}\n"
	var offs []int64
	var seqs []int
	v := visitFunc(func(r *Record) error {
		offs = append(offs, r.Offset)
		seqs = append(seqs, r.Seq)
		if string(r.Raw) != in[r.Offset:r.Offset+int64(len(r.Raw))] {
			t.Errorf("record %q does not sit at offset %d", r.Raw, r.Offset)
		}
		return nil
	})
	r := Reader{MaxDepth: 1}
	if _, err := r.Read(context.Background(), strings.NewReader(in), v); err != nil {
		t.Fatal(err)
	}
	if !equalInts(seqs, []int{0, 1, 2, 3}) {
		t.Errorf("seqs = %v", seqs)
	}
}

type visitFunc func(*Record) error

func (f visitFunc) Record(r *Record) error { return f(r) }
func (f visitFunc) Issue(Issue)            {}

// TestHugeLine reads a 64 MiB line: no line-length limit (SPEC.md §1.2).
func TestHugeLine(t *testing.T) {
	const size = 64 << 20
	var b bytes.Buffer
	b.WriteString("{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"data\":\"")
	b.Write(bytes.Repeat([]byte("QUJD"), size/4))
	b.WriteString("\"}\n{\"type\":\"after\"}\n")
	c := read(t, b.String())
	if len(c.recs) != 3 || len(c.issues) != 0 {
		t.Fatalf("records = %d, issues = %v", len(c.recs), c.issues)
	}
	if len(c.recs[1]) < size {
		t.Fatalf("huge record has %d bytes", len(c.recs[1]))
	}
}

// slowReader returns at most n bytes per Read, to exercise refills.
type slowReader struct {
	r io.Reader
	n int
}

func (s slowReader) Read(p []byte) (int, error) {
	if len(p) > s.n {
		p = p[:s.n]
	}
	return s.r.Read(p)
}

func TestLineReaderSmallReads(t *testing.T) {
	in := "ab\r\n\ncdef\n" + strings.Repeat("x", 1000) + "\nlast"
	lr := NewLineReader(slowReader{strings.NewReader(in), 3})
	var got []string
	var nl []bool
	for {
		ln, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ln.Bytes))
		nl = append(nl, ln.Newline)
	}
	want := []string{"ab\r", "", "cdef", strings.Repeat("x", 1000), "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines = %q", got)
	}
	if !nl[3] || nl[4] {
		t.Fatalf("newline flags = %v", nl)
	}
}

// TestMemoryBoundedByLongestLine streams 200 MiB of short lines: the buffer
// must stay at its initial size (memory is bounded by the longest line, not
// the file).
func TestMemoryBoundedByLongestLine(t *testing.T) {
	line := []byte("{\"type\":\"message\",\"id\":\"abcdef01\",\"parentId\":null}\n")
	total := int64(200 << 20)
	src := &repeatReader{line: line, left: total}
	var r Reader
	r.MaxDepth = 1
	st, err := r.Read(context.Background(), src, visitFunc(func(*Record) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != total {
		t.Fatalf("read %d bytes", st.Bytes)
	}
	if c := cap(r.lines.buf); c > initialLineBuf {
		t.Fatalf("buffer grew to %d bytes on short lines", c)
	}
}

type repeatReader struct {
	line []byte
	left int64
	pos  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		k := copy(p[n:], r.line[r.pos:])
		if int64(k) > r.left {
			k = int(r.left)
		}
		n += k
		r.left -= int64(k)
		r.pos = (r.pos + k) % len(r.line)
	}
	return n, nil
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"{\"type\":\"session\",\"id\":\"x\"}\n{\"type\":\"message\"}\n",
		"{\"a\":1}{\"b\":2}\n{\"c\":",
		"\xef\xbb\xbf{}\r\n\n",
		"{\"type\":\"mess{\"type\":\"message\"}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c collect
		r := Reader{MaxDepth: 3}
		st, err := r.Read(context.Background(), slowReader{bytes.NewReader(b), 7}, &c)
		if err != nil {
			t.Fatal(err)
		}
		if st.Bytes != int64(len(b)) {
			t.Fatalf("read %d of %d bytes", st.Bytes, len(b))
		}
		last := 0
		for i, rec := range c.recs {
			if !json.Valid([]byte(rec)) {
				t.Fatalf("record %q is not valid JSON", rec)
			}
			if c.lines[i] < last {
				t.Fatalf("line numbers go back")
			}
			last = c.lines[i]
		}
		bad := map[int]bool{}
		for _, is := range c.issues {
			if is.Line < 1 || is.Line > st.Lines {
				t.Fatalf("issue on line %d of %d", is.Line, st.Lines)
			}
			if is.Code == CodeInvalidUTF8 {
				bad[is.Line] = true
			}
		}
		// invalid_utf8 is reported exactly for the non-blank lines that are
		// not valid UTF-8 (the scanner checks strings; fragments are checked whole).
		for i, line := range bytes.Split(b, []byte("\n")) {
			if i == 0 {
				line = bytes.TrimPrefix(line, bom)
			}
			if len(bytes.TrimLeft(line, " \t\r")) == 0 {
				continue
			}
			if want := !utf8.Valid(line); bad[i+1] != want {
				t.Fatalf("line %d %q: invalid_utf8 reported %v, want %v", i+1, line, bad[i+1], want)
			}
		}
	})
}

// TestReadFileMapped: files read through a mapping give exactly what the
// read(2) path gives; a file truncated while mapped is an error, not a crash.
func TestReadFileMapped(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("{\"type\":\"session\",\"id\":\"s\"}\n")
	for i := 0; b.Len() < 3*releaseEvery; i++ {
		fmt.Fprintf(&b, "{\"type\":\"message\",\"id\":\"%08x\",\"text\":\"%s\"}\n", i, strings.Repeat("x", i%5000))
	}
	b.WriteString("{\"type\":\"tail\"}") // no final newline
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var viaRead, viaMap collect
	var r Reader
	if _, err := r.Read(context.Background(), bytes.NewReader(b.Bytes()), &viaRead); err != nil {
		t.Fatal(err)
	}
	st, err := r.ReadFile(context.Background(), path, &viaMap)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(b.Len()) || len(viaMap.recs) != len(viaRead.recs) || strings.Join(viaMap.recs, "\n") != strings.Join(viaRead.recs, "\n") {
		t.Fatalf("mapped read differs: %d vs %d records", len(viaMap.recs), len(viaRead.recs))
	}
	if strings.Join(viaMap.codes(), ",") != strings.Join(viaRead.codes(), ",") {
		t.Fatalf("issues differ: %v vs %v", viaMap.codes(), viaRead.codes())
	}
	// Truncate the file under the mapping after the first record.
	n := 0
	_, err = r.ReadFile(context.Background(), path, visitFunc(func(*Record) error {
		if n++; n == 1 {
			return os.Truncate(path, 0)
		}
		return nil
	}))
	if mapsFiles && !errors.Is(err, ErrShrunk) {
		t.Fatalf("err = %v, want ErrShrunk", err)
	}
	if !mapsFiles && err != nil {
		t.Fatalf("err = %v, want none (files are read, not mapped, here)", err) // mmap_other.go
	}
}
