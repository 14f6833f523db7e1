package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unicode/utf8"
	"unsafe"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// Record is one complete JSON value read from a session file. Raw and Tape
// alias the reader's buffers: they are valid only during the
// [Visitor.Record] call that receives them.
type Record struct {
	Line   int    // 1-based physical line number
	Seq    int    // 0-based index among complete records (header = 0): the "parsed lines" of SPEC.md §2.1
	Part   int    // 0 for the first record on its line; 1, 2, … for further records of a concatenated line
	Offset int64  // byte offset of Raw's first byte in the file
	Raw    []byte // the record's exact bytes, without surrounding whitespace
	Tape   *Tape  // shallow parse of Raw's line; Root is the record's root node
	Root   int
	Final  bool // the record is on the last line and that line has no '\n'
	Split  bool // the record shares its line with other records or fragments
	// LineStart and LineEnd are the file offsets of the record's line: its
	// first byte (after a BOM) and the end of its content, before "\r\n"
	// or "\n" (JSON whitespace at the end is excluded).
	LineStart, LineEnd int64
	CRLF               bool // the line ends with "\r\n"
}

// Visitor receives what a [Reader] finds, in file order.
type Visitor interface {
	// Record is called for every complete JSON value. Returning an error
	// stops the read and the error is returned by Read.
	Record(r *Record) error
	// Issue is called for every line-level problem (codes torn_final_record,
	// corrupt_line, concatenated_records, bom, invalid_utf8, no_trailing_newline).
	Issue(is Issue)
}

// ReadStats summarises one read.
type ReadStats struct {
	Bytes     int64 // bytes read
	Lines     int   // physical lines, including blank ones
	Records   int   // complete JSON values passed to Record
	Fragments int   // byte ranges that were not complete values
}

// Reader reads session files record by record, following the line rules of
// SPEC.md §1.2: no line-length limit, CRLF accepted, blank lines skipped, the
// final-record rule, concatenated records split, a leading BOM reported and
// dropped. A Reader reuses its buffers across files; it is not safe for
// concurrent use (use one per worker).
type Reader struct {
	// MaxDepth is the nesting depth recorded on each record's Tape (see
	// [Tape]). Validation needs 1; usage extraction needs 4.
	MaxDepth int

	lines LineReader
	tape  Tape
	rec   Record
	spans []span
}

type span struct {
	start, end int
	root       int // -1 for a fragment
	incomplete bool
}

// maxResync bounds the attempts to find a record after a broken prefix on
// one line, so adversarial lines cannot make reading quadratic.
const maxResync = 32

// recordStart is how every record written by the agents begins
// (JSON.stringify of an entry puts "type" first). Inside a valid JSON string
// these bytes cannot occur unescaped.
var recordStart = []byte(`{"type"`)

// ErrNotRegular is returned by OpenRegular for a path that is not a
// regular file (a pipe, a device, a directory).
var ErrNotRegular = fstx.ErrNotRegular

// OpenRegular opens path for reading only if it is a regular file. It
// never blocks on a pipe (the open is non-blocking) and checks the type of
// what it opened, not of what a stat saw earlier. On Windows the handle
// lets an agent rename over or delete the file while it is read (fstx.OpenFile).
func OpenRegular(path string) (*os.File, error) { return fstx.OpenRegular(path) }

// ReadFile opens path (a regular file, see OpenRegular) and reads it with
// r.Read. The error wraps the *os.PathError of a failed open or read.
//
// A file whose name ends in .zst or .gz is decompressed while read
// (KindOf, OpenContent); a failure of the decompressor wraps ErrCompressed.
func (r *Reader) ReadFile(ctx context.Context, path string, v Visitor) (ReadStats, error) {
	if ix, member, ok := splitMember(path); ok {
		rc, err := openMember(ix, member)
		if err != nil {
			return ReadStats{}, err
		}
		defer rc.Close()
		return r.readMember(ctx, rc, member, v)
	}
	if KindOf(baseName(path)).Compression != "" {
		return r.readCompressed(ctx, path, v)
	}
	f, err := OpenRegular(path)
	if err != nil {
		return ReadStats{}, err
	}
	defer f.Close()
	var st ReadStats
	if fi, serr := f.Stat(); serr == nil && mapsFiles && fi.Size() >= mapMin && fi.Size() <= maxMapped {
		st, err = r.readMapped(ctx, f, int(fi.Size()), v)
	} else {
		st, err = r.Read(ctx, f, v)
	}
	if err != nil {
		return st, fmt.Errorf("read %s: %w", path, err)
	}
	return st, nil
}

// On Unix, files of at least mapMin bytes are read through a read-only
// shared memory mapping instead of read(2): the kernel does not copy them
// into a buffer (mmap_unix.go; elsewhere every file is read, mmap_other.go).
const (
	mapMin    = 256 << 10
	maxMapped = 1 << 40
)

// ErrShrunk reports a file that became shorter while it was read through a
// mapping (truncated by another process).
var ErrShrunk = errors.New("the file shrank while it was read")

// readMapped reads a file of size bytes through a memory mapping, releasing
// the pages behind the cursor every 16 MiB (memory stays bounded by the
// largest line). A fault because the file shrank meanwhile is an error,
// not a crash.
func (r *Reader) readMapped(ctx context.Context, f *os.File, size int, v Visitor) (st ReadStats, err error) {
	data, merr := mapFile(f, size)
	if merr != nil {
		return r.Read(ctx, f, v) // not mappable here: read it
	}
	defer unmapFile(data)
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			// Only a memory fault inside the mapping is the file shrinking;
			// anything else is a bug and keeps panicking.
			fault, ok := p.(interface{ Addr() uintptr })
			base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
			if !ok || fault.Addr() < base || fault.Addr() >= base+uintptr(len(data)) {
				panic(p)
			}
			err = ErrShrunk
		}
	}()
	r.lines.ResetBytes(data, func(upTo int) {
		page := os.Getpagesize()
		if n := upTo / page * page; n > 0 {
			releasePages(data[:n])
		}
	})
	return r.readLines(ctx, v)
}

// Read reads a whole stream, calling v for every record and issue. It stops
// early when ctx is cancelled (returning ctx.Err()) or when v.Record fails.
func (r *Reader) Read(ctx context.Context, src io.Reader, v Visitor) (ReadStats, error) {
	r.lines.Reset(src)
	return r.readLines(ctx, v)
}

func (r *Reader) readLines(ctx context.Context, v Visitor) (ReadStats, error) {
	var st ReadStats
	r.tape.MaxDepth = r.MaxDepth
	seq := 0
	for {
		ln, err := r.lines.Next()
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		st.Lines++
		st.Bytes += int64(len(ln.Bytes))
		if ln.Newline {
			st.Bytes++
		}
		if st.Lines&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		b := ln.Bytes
		off := ln.Offset
		if ln.No == 1 && bytes.HasPrefix(b, bom) {
			v.Issue(Issue{Line: 1, Severity: SeverityError, Code: CodeBOM,
				Message: "UTF-8 byte-order mark before the header: the agent cannot parse the header"})
			b = b[len(bom):]
			off += int64(len(bom))
		}
		s := skipWS(b, 0)
		if s == len(b) {
			continue // blank line
		}
		r.tape.Reset(b)
		r.split(b, s)
		// The scanner checks UTF-8 inside strings (the only place non-ASCII
		// bytes are valid); a line with fragments is checked whole.
		if r.tape.BadUTF8 || (len(r.spans) > 0 && r.spans[len(r.spans)-1].root < 0 || len(r.spans) > 1) && !utf8.Valid(b) {
			v.Issue(Issue{Line: ln.No, Severity: SeverityNote, Code: CodeInvalidUTF8,
				Message: "invalid UTF-8 bytes (read as U+FFFD; the original bytes are kept)"})
		}
		values, fragments := 0, 0
		for _, sp := range r.spans {
			if sp.root >= 0 {
				values++
			} else {
				fragments++
			}
		}
		st.Fragments += fragments
		last := r.spans[len(r.spans)-1]
		switch {
		case !ln.Newline && values == 0:
			v.Issue(Issue{Line: ln.No, Severity: SeverityError, Code: CodeTornFinalRecord,
				Message: fmt.Sprintf("final record is incomplete (%d bytes, no newline): a crash cut the last append", len(b)-s)})
		case !ln.Newline && (values > 1 || fragments > 0):
			v.Issue(Issue{Line: ln.No, Severity: SeverityError, Code: CodeConcatenatedRecords,
				Message: describeSplit(values, fragments, len(b))})
			if last.root < 0 {
				v.Issue(Issue{Line: ln.No, Severity: SeverityError, Code: CodeTornFinalRecord,
					Message: fmt.Sprintf("final record is incomplete (%d bytes, no newline): a crash cut the last append", last.end-last.start)})
			}
		case !ln.Newline:
			v.Issue(Issue{Line: ln.No, Severity: SeverityNote, Code: CodeNoTrailingNewline,
				Message: "the final record is complete but has no trailing newline"})
		case values == 0:
			v.Issue(Issue{Line: ln.No, Severity: SeverityError, Code: CodeCorruptLine,
				Message: "not valid JSON: " + r.describeError(b, s)})
		case values > 1 || fragments > 0:
			msg := describeSplit(values, fragments, len(b))
			if fragments == 1 && r.spans[0].root < 0 && bytes.Equal(b[r.spans[0].start:r.spans[0].end], bom) {
				msg = "a UTF-8 byte-order mark in front of the record (files with BOMs pasted together): the agent drops the line"
			}
			v.Issue(Issue{Line: ln.No, Severity: SeverityError, Code: CodeConcatenatedRecords, Message: msg})
		}
		part := 0
		for _, sp := range r.spans {
			if sp.root < 0 {
				continue
			}
			r.rec = Record{Line: ln.No, Seq: seq, Part: part, Offset: off + int64(sp.start),
				Raw: b[sp.start:sp.end:sp.end], Tape: &r.tape, Root: sp.root,
				Final: !ln.Newline, Split: values > 1 || fragments > 0,
				LineStart: off, LineEnd: off + int64(trimRightWS(b, len(b))),
				CRLF: ln.Newline && len(b) > 0 && b[len(b)-1] == '\r'}
			seq++
			part++
			st.Records++
			if err := v.Record(&r.rec); err != nil {
				return st, err
			}
		}
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

func describeSplit(values, fragments, size int) string {
	switch {
	case fragments == 0:
		return fmt.Sprintf("%d complete records on one line (a newline went missing): the agent drops them all", values)
	case values == 1 && fragments == 1:
		return fmt.Sprintf("1 complete record glued to an incomplete fragment on one %d-byte line", size)
	default:
		return fmt.Sprintf("%d complete records and %d fragments on one %d-byte line", values, fragments, size)
	}
}

// describeError re-parses the start of a broken line to say where it breaks.
func (r *Reader) describeError(b []byte, s int) string {
	var t Tape
	t.Reset(b)
	_, _, err := t.Parse(s)
	if err == nil {
		return "unexpected data"
	}
	return fmt.Sprintf("%s at column %d", err.Msg, err.Offset+1)
}

// split fills r.spans with the values and fragments of line b, starting at
// the first non-blank byte s. Values are parsed one after another; when a
// parse fails, the rest of the line is searched for the start of a record
// that, with the values after it, reaches the end of the line.
func (r *Reader) split(b []byte, s int) {
	r.spans = r.spans[:0]
	pos := s
	for pos < len(b) {
		root, end, err := r.tape.Parse(pos)
		if err == nil {
			r.spans = append(r.spans, span{start: pos, end: end, root: root})
			pos = skipWS(b, end)
			continue
		}
		next := r.resync(b, pos)
		if next < 0 {
			r.spans = append(r.spans, span{start: pos, end: trimRightWS(b, len(b)), root: -1, incomplete: err.Incomplete})
			return
		}
		r.spans = append(r.spans, span{start: pos, end: next, root: -1})
		pos = next
	}
}

// resync returns the offset after from of a record start from which the
// rest of the line parses as whole values, or -1.
func (r *Reader) resync(b []byte, from int) int {
	var probe Tape
	probe.MaxDepth = 0
	at := from + 1
	for try := 0; try < maxResync && at < len(b); try++ {
		i := bytes.Index(b[at:], recordStart)
		if i < 0 {
			return -1
		}
		c := at + i
		probe.Reset(b)
		ok := true
		for p := c; p < len(b); {
			_, end, err := probe.Parse(p)
			if err != nil {
				ok = false
				break
			}
			p = skipWS(b, end)
		}
		if ok {
			return c
		}
		at = c + 1
	}
	return -1
}

func trimRightWS(b []byte, end int) int {
	for end > 0 && isWS[b[end-1]] {
		end--
	}
	return end
}
