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
	own     []byte // the reader's own buffer, reused across streams
	buf     []byte // own, or a mapped file (ResetBytes)
	start   int    // first unread byte
	end     int    // end of buffered data
	scanned int    // bytes of buf[start:end] known to hold no '\n'
	off     int64
	line    int
	eof     bool

	mapped   bool           // buf is a mapped file: never refilled, never reused
	released int            // bytes of buf handed to release so far
	release  func(upTo int) // drops the pages of buf before upTo
}

// releaseEvery is how many consumed bytes of a mapped file accumulate
// before their pages are released: the mapping never holds more than this
// plus the current line in memory.
const releaseEvery = 16 << 20

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
	if cap(lr.own) == 0 || cap(lr.own) > keepLineBuf {
		lr.own = make([]byte, initialLineBuf)
	}
	lr.buf = lr.own[:cap(lr.own)]
	lr.r = r
	lr.start, lr.end, lr.scanned = 0, 0, 0
	lr.off = 0
	lr.line = 0
	lr.eof = false
	lr.mapped, lr.released, lr.release = false, 0, nil
}

// ResetBytes makes lr split data (a file mapped into memory) without
// copying it. release, when not nil, is called with an offset below which
// no returned line will be used again, every 16 MiB, so the caller can drop
// those pages (madvise) and keep memory bounded by the largest line.
func (lr *LineReader) ResetBytes(data []byte, release func(upTo int)) {
	lr.r = nil
	lr.buf = data
	lr.start, lr.end, lr.scanned = 0, len(data), 0
	lr.off = 0
	lr.line = 0
	lr.eof = true
	lr.mapped, lr.released, lr.release = true, 0, release
}

// Next returns the next line, or io.EOF after the last one. A stream that
// does not end in '\n' yields its last bytes as a Line with Newline false.
// Read errors other than io.EOF are returned as they are.
func (lr *LineReader) Next() (Line, error) {
	if lr.release != nil && lr.start-lr.released >= releaseEvery {
		lr.release(lr.start)
		lr.released = lr.start
	}
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
	if lr.mapped {
		return io.ErrUnexpectedEOF // unreachable: a mapped buffer is complete (eof)
	}
	if lr.start > 0 {
		n := copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		nb := make([]byte, 2*len(lr.buf))
		copy(nb, lr.buf[:lr.end])
		lr.buf, lr.own = nb, nb
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
