package ingest

import (
	"bytes"
	"errors"
	"io"
)

// Line is one physical line of a session file (SPEC.md §1.2).
type Line struct {
	No      int    // 1-based line number
	Offset  int64  // byte offset of the line's first byte in the stream
	Bytes   []byte // the line without its '\n' (a trailing '\r' is kept: it is JSON whitespace)
	Newline bool   // false only for the bytes after the last '\n' of the stream
}

// LineReader splits a stream into lines on '\n' with no length limit. Its
// buffer grows to hold the longest line seen, so memory per stream is
// bounded by the largest line, not by the stream's size. Line.Bytes aliases
// the buffer and is valid until the next call to Next.
type LineReader struct {
	r       io.Reader
	buf     []byte
	start   int // first unread byte
	end     int // end of buffered data
	scanned int // bytes of buf[start:end] known to hold no '\n'
	off     int64
	line    int
	eof     bool
}

const (
	initialLineBuf = 256 << 10
	keepLineBuf    = 8 << 20 // a buffer grown beyond this is dropped on Reset
)

// NewLineReader returns a LineReader reading from r.
func NewLineReader(r io.Reader) *LineReader {
	lr := &LineReader{}
	lr.Reset(r)
	return lr
}

// Reset makes lr read from r, reusing its buffer unless a huge line made it
// larger than 8 MiB.
func (lr *LineReader) Reset(r io.Reader) {
	if cap(lr.buf) == 0 || cap(lr.buf) > keepLineBuf {
		lr.buf = make([]byte, initialLineBuf)
	}
	lr.buf = lr.buf[:cap(lr.buf)]
	lr.r = r
	lr.start, lr.end, lr.scanned = 0, 0, 0
	lr.off = 0
	lr.line = 0
	lr.eof = false
}

// Next returns the next line, or io.EOF after the last one. A stream that
// does not end in '\n' yields its last bytes as a Line with Newline false.
// Read errors other than io.EOF are returned as they are.
func (lr *LineReader) Next() (Line, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.start+lr.scanned:lr.end], '\n'); i >= 0 {
			j := lr.start + lr.scanned + i
			ln := Line{No: lr.line + 1, Offset: lr.off, Bytes: lr.buf[lr.start:j:j], Newline: true}
			lr.line++
			lr.off += int64(j + 1 - lr.start)
			lr.start = j + 1
			lr.scanned = 0
			return ln, nil
		}
		lr.scanned = lr.end - lr.start
		if lr.eof {
			if lr.start == lr.end {
				return Line{}, io.EOF
			}
			ln := Line{No: lr.line + 1, Offset: lr.off, Bytes: lr.buf[lr.start:lr.end:lr.end]}
			lr.line++
			lr.off += int64(lr.end - lr.start)
			lr.start = lr.end
			lr.scanned = 0
			return ln, nil
		}
		if err := lr.fill(); err != nil {
			return Line{}, err
		}
	}
}

// fill reads more data, moving the partial line to the front of the buffer
// or growing the buffer when the partial line fills it.
func (lr *LineReader) fill() error {
	if lr.start > 0 {
		n := copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		nb := make([]byte, 2*len(lr.buf))
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	for {
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if errors.Is(err, io.EOF) {
			lr.eof = true
			return nil
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}
