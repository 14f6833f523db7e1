package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression formats of session files (SPEC.md §7.2), File.Compression.
const (
	CompressionZstd = "zstd"
	CompressionGzip = "gzip"
)

// NameKind is what a file name says about a session file (SPEC.md §7.2).
type NameKind struct {
	Session bool // a session file at all
	// Archived: an OpenClaw archive beside the live file,
	// <name>.jsonl.reset.<ts> or <name>.jsonl.deleted.<ts>.
	Archived bool
	// Snapshot: a copy the agent or the user made, <name>.jsonl.bak* or
	// <name>.checkpoint.<id>.jsonl. Read like any session file, never
	// rewritten.
	Snapshot bool
	// Trajectory: <name>.trajectory.jsonl, OpenClaw's per-session call log
	// (not a session file unless it has a session header).
	Trajectory  bool
	Compression string // CompressionZstd, CompressionGzip or ""
}

// ReadOnly reports whether the file is never rewritten by migrate or
// moved by --relayout: archives, snapshots and compressed files.
func (k NameKind) ReadOnly() bool { return k.Archived || k.Snapshot || k.Compression != "" }

// KindOf classifies a file name: *.jsonl; an OpenClaw archive
// *.jsonl.reset.<ts> or *.jsonl.deleted.<ts>; a snapshot *.jsonl.bak*
// or *.checkpoint.<id>.jsonl; each optionally compressed (.zst, .gz).
// This tool's temporary files (TempPrefix) are not session files.
func KindOf(name string) NameKind {
	var k NameKind
	if strings.HasPrefix(name, TempPrefix) {
		return k
	}
	switch {
	case strings.HasSuffix(name, ".zst"):
		k.Compression, name = CompressionZstd, strings.TrimSuffix(name, ".zst")
	case strings.HasSuffix(name, ".gz"):
		k.Compression, name = CompressionGzip, strings.TrimSuffix(name, ".gz")
	}
	if strings.HasSuffix(name, ".jsonl") {
		k.Session = true
		stem := strings.TrimSuffix(name, ".jsonl")
		switch {
		case strings.HasSuffix(stem, ".trajectory"):
			k.Trajectory = true
		case strings.Contains(stem, ".checkpoint."):
			k.Snapshot = true
		}
		return k
	}
	i := strings.LastIndex(name, ".jsonl.")
	if i <= 0 {
		return k
	}
	switch rest := name[i+len(".jsonl."):]; {
	case strings.HasPrefix(rest, "reset.") && len(rest) > len("reset."),
		strings.HasPrefix(rest, "deleted.") && len(rest) > len("deleted."):
		k.Session, k.Archived = true, true
	case strings.HasPrefix(rest, "bak"):
		k.Session, k.Snapshot = true, true
	}
	return k
}

// maxZstdWindow bounds the memory a zstd stream may ask for: frames
// written with a larger window (zstd --long=28 and up) are refused, not
// read with unbounded memory.
const maxZstdWindow = 128 << 20

// MaxCompressedLine bounds one line of decompressed content: the reader
// holds a whole line in memory, and a few kilobytes of zstd can expand to
// a line of any length. No session line is this long; the limit applies to
// compressed input only (a plain file's line is as long as the file).
var MaxCompressedLine int64 = 256 << 20

// ErrCompressed wraps a decompression failure: a truncated or corrupt
// compressed stream.
var ErrCompressed = errors.New("compressed stream")

// decompressor wraps src in a streaming decompressor for compression,
// refusing lines longer than MaxCompressedLine.
func decompressor(src io.Reader, compression string) (io.ReadCloser, error) {
	return newDecompressor(src, compression, true)
}

// newDecompressor wraps src in a streaming decompressor; lines bounds the
// decompressed lines (not for an archive's stream, whose members are
// bounded when read). An archive's zstd stream (lines false) is decoded
// with a history buffer of twice its window: the low-memory one (window +
// one block) moves the whole window down after every block, which cost a
// third of the time of a validate over a .tar.zst.
func newDecompressor(src io.Reader, compression string, lines bool) (io.ReadCloser, error) {
	switch compression {
	case CompressionZstd:
		d, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(lines),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(1<<40))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", ErrCompressed, err)
		}
		return &errWrap{r: d, name: "zstd", lines: lines, close: func() error { d.Close(); return nil }}, nil
	case CompressionGzip:
		g, err := gzip.NewReader(bufio.NewReaderSize(src, 64<<10))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCompressed, err)
		}
		return &errWrap{r: g, name: "gzip", lines: lines, close: g.Close}, nil
	}
	return io.NopCloser(src), nil
}

// errWrap marks the errors of a decompressor as ErrCompressed, so that a
// truncated .zst reads as "zstd: unexpected EOF", not as an I/O error.
type errWrap struct {
	r     io.Reader
	lines bool  // refuse lines longer than MaxCompressedLine
	run   int64 // bytes since the last newline
	name  string
	close func() error
}

func (e *errWrap) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		e.run = int64(n - i - 1)
	} else {
		e.run += int64(n)
	}
	if e.lines && e.run > MaxCompressedLine {
		return n, fmt.Errorf("%w: %s: a line of more than %d MiB: refused (a decompression bomb?)", ErrCompressed, e.name, MaxCompressedLine>>20)
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %s: truncated (unexpected end of the compressed data)", ErrCompressed, e.name)
		} else {
			err = fmt.Errorf("%w: %s: %v", ErrCompressed, e.name, err)
		}
	}
	return n, err
}

func (e *errWrap) Close() error { return e.close() }

// OpenContent opens a session file for reading its content: a regular
// file (OpenRegular), decompressed while read when its name ends in .zst
// or .gz (KindOf).
//
// A member of a home archive discovery opened (ARCHIVE!/inner) is opened
// inside its archive.
func OpenContent(path string) (io.ReadCloser, error) {
	if ix, member, ok := splitMember(path); ok {
		rc, err := openMember(ix, member)
		if err != nil {
			return nil, err
		}
		if c := KindOf(baseName(member)).Compression; c != "" {
			d, err := decompressor(rc, c)
			if err != nil {
				rc.Close()
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			return struct {
				io.Reader
				io.Closer
			}{d, closers{d, rc}}, nil
		}
		return rc, nil
	}
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	c := KindOf(baseName(path)).Compression
	if c == "" {
		return f, nil
	}
	d, err := decompressor(f, c)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{d, closers{d, f}}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// readMember reads an archive member's content (decompressed when its
// name says so) with r.Read.
func (r *Reader) readMember(ctx context.Context, rc io.Reader, member string, v Visitor) (ReadStats, error) {
	if c := KindOf(baseName(member)).Compression; c != "" {
		d, err := decompressor(rc, c)
		if err != nil {
			return ReadStats{}, err
		}
		defer d.Close()
		rc = d
	}
	return r.Read(ctx, rc, v)
}

// readCompressed reads a compressed file's content with r.Read.
func (r *Reader) readCompressed(ctx context.Context, path string, v Visitor) (ReadStats, error) {
	rc, err := OpenContent(path)
	if err != nil {
		return ReadStats{}, err
	}
	defer rc.Close()
	st, err := r.Read(ctx, rc, v)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", path, err)
	}
	return st, nil
}
