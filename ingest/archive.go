package ingest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// Archive formats of home archives given as PATH (SPEC.md §7.2).
const (
	ArchiveTar    = "tar"
	ArchiveTarGz  = "tar.gz"
	ArchiveTarZst = "tar.zst"
	ArchiveZip    = "zip"
)

// MemberSep separates an archive's path from a member's inner path in the
// paths shown for members: ARCHIVE!/inner/path.
const MemberSep = "!/"

// Path issue codes of archives.
const (
	// CodeArchiveMember: a member that is not read (a symbolic or hard
	// link, a device, a second member of the same name) or whose name was
	// cleaned (an absolute path, "..").
	CodeArchiveMember = "archive_member"
)

// ArchiveFormatOf returns the archive format a file name says (.tar,
// .tar.gz / .tgz, .tar.zst / .tzst, .zip), or "".
func ArchiveFormatOf(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".tar"):
		return ArchiveTar
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return ArchiveTarGz
	case strings.HasSuffix(n, ".tar.zst"), strings.HasSuffix(n, ".tzst"):
		return ArchiveTarZst
	case strings.HasSuffix(n, ".zip"):
		return ArchiveZip
	}
	return ""
}

// IsArchivePath reports whether p names a home archive: a regular file
// (links followed) whose name has an archive format.
func IsArchivePath(p string) bool {
	if ArchiveFormatOf(baseName(p)) == "" {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// cleanMember makes a member name a relative slash path inside the
// archive: "../x" and "/etc/x" become "x" and "etc/x" (nothing is ever
// written; the name is only shown). changed says it differs from name
// beyond a leading "./" or a trailing slash.
func cleanMember(name string) (clean string, changed bool) {
	c := strings.TrimLeft(path.Clean("/"+strings.ReplaceAll(name, "\\", "/")), "/")
	trimmed := strings.TrimSuffix(strings.TrimPrefix(name, "./"), "/")
	return c, c != trimmed
}

// archiveIndex is what discovery learnt of one archive, kept for reading
// its members: their ordinal in the stream (tar) and open readers.
type archiveIndex struct {
	path    string
	format  string
	mu      sync.Mutex
	ordinal map[string]int // member → position of its header in the stream
	isFile  map[int]bool   // ordinals of the members discovery passed on and nobody asked for yet
	cursors []*tarCursor   // idle sequential readers (tar formats)
	// pending holds small members a cursor went past before they were
	// asked for (workers ask in about discovery order, not exactly), so
	// that the worker that asks next does not decompress from the start.
	pending      map[int][]byte
	pendingBytes int64
	// busy maps the cursors in use to the ordinal each is reading; cond
	// (on mu) signals one coming back.
	busy map[*tarCursor]int
	cond *sync.Cond
	zr   *zip.ReadCloser
}

// archives holds the index of every archive discovery opened, by path.
var archives sync.Map // string → *archiveIndex

func lookupArchive(p string) *archiveIndex {
	if v, ok := archives.Load(p); ok {
		return v.(*archiveIndex)
	}
	return nil
}

// splitMember splits a member path ARCHIVE!/inner of an archive that
// discovery opened.
func splitMember(p string) (*archiveIndex, string, bool) {
	for i := strings.Index(p, MemberSep); i >= 0; {
		if ix := lookupArchive(p[:i]); ix != nil {
			return ix, p[i+len(MemberSep):], true
		}
		j := strings.Index(p[i+1:], MemberSep)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return nil, "", false
}

// ArchiveOf returns the archive holding the member path p (discovered by
// this process), or "".
func ArchiveOf(p string) string {
	if ix, _, ok := splitMember(p); ok {
		return ix.path
	}
	return ""
}

// tarStream opens an archive file as a tar stream, decompressed.
func tarStream(p, format string) (*os.File, io.ReadCloser, error) {
	f, err := OpenRegular(p)
	if err != nil {
		return nil, nil, err
	}
	var src io.ReadCloser = f
	switch format {
	case ArchiveTarGz:
		src, err = newDecompressor(f, CompressionGzip, false)
	case ArchiveTarZst:
		src, err = newDecompressor(f, CompressionZstd, false)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, src, nil
}

// walkArchive calls file for every session file among the members of the
// archive r.Path (a tar, compressed or not, or a zip), in stream order,
// and issue for the members it passes over and for damage. Member files
// get Path ARCHIVE!/member, Archive and Member set, Size and ModTime from
// the member's header, and, as Ino, a digest of the content (xxh3 for
// tar members, the CRC-32 for zip members), so that an incremental export
// re-reads a member whose content changed. Nothing is extracted.
func (w *walker) archive(r Root, fi fs.FileInfo) error {
	format := ArchiveFormatOf(baseName(r.Path))
	ix := &archiveIndex{path: r.Path, format: format, ordinal: map[string]int{}, isFile: map[int]bool{}, pending: map[int][]byte{},
		busy: map[*tarCursor]int{}}
	ix.cond = sync.NewCond(&ix.mu)
	if r.CountOnly {
		// A walk that only counts (another may be reading this archive):
		// its index is its own, and no member is held for reading.
		defer ix.closeZip()
	} else if old, loaded := archives.LoadOrStore(r.Path, ix); loaded {
		ix = old.(*archiveIndex)
		ix.mu.Lock()
		ix.ordinal, ix.isFile, ix.pending, ix.pendingBytes = map[string]int{}, map[int]bool{}, map[int][]byte{}, 0
		for _, c := range ix.cursors {
			c.close()
		}
		ix.cursors = nil
		ix.mu.Unlock()
	}
	var data []byte // the member's content, read while listing (tar), or nil
	member := func(name string, ord int, f File) error {
		clean, changed := cleanMember(name)
		vpath := r.Path + MemberSep + clean
		if clean == "" {
			return nil
		}
		if changed {
			w.report(vpath, w.source(r, vpath), CodeArchiveMember, SeverityWarning,
				fmt.Sprintf("member %q is shown as %q (an absolute path or \"..\" is not followed; nothing is extracted)", name, clean))
		}
		ix.mu.Lock() // workers may be reading earlier members
		_, dup := ix.ordinal[clean]
		if !dup {
			ix.ordinal[clean] = ord
			ix.isFile[ord] = true
			if data != nil {
				ix.pending[ord] = data // reserved in pendingBytes by the listing
			}
		} else if data != nil {
			ix.pendingBytes -= int64(len(data))
		}
		ix.mu.Unlock()
		if dup {
			w.report(vpath, w.source(r, vpath), CodeArchiveMember, SeverityWarning,
				fmt.Sprintf("a second member named %q: not read (the first one is)", name))
			return nil
		}
		f.Path, f.Source, f.Archive, f.Member, f.Kind = vpath, w.source(r, vpath), r.Path, clean, KindOf(path.Base(clean))
		if (inPiAgentDir(vpath) || f.Kind.Trajectory) && f.Kind.Compression == "" && data != nil && notASessionIn(bytes.NewReader(data)) {
			// As on disk: another kind of JSONL file (a member read
			// while listed; a larger one is validated). Nobody reads it:
			// its bytes are not held.
			ix.release(ord)
			w.report(vpath, f.Source, CodeNotASessionFile, SeverityNote, "another kind of JSONL file (its first record is not a session header): not read")
			return nil
		}
		return w.fn(f)
	}
	skipped := func(name, what string) {
		clean, _ := cleanMember(name)
		vpath := r.Path + MemberSep + clean
		w.report(vpath, w.source(r, vpath), CodeArchiveMember, SeverityWarning, what+": not read")
	}
	if format == ArchiveZip {
		zr, err := zip.OpenReader(r.Path)
		if err != nil {
			w.report(r.Path, w.source(r, r.Path), CodeUnreadable, SeverityError, "zip: "+strings.TrimPrefix(errText(err), "zip: "))
			return nil
		}
		ix.mu.Lock()
		if ix.zr != nil {
			ix.zr.Close()
		}
		ix.zr = zr
		ix.mu.Unlock()
		for i, zf := range zr.File {
			if err := w.ctx.Err(); err != nil {
				return err
			}
			mode := zf.Mode()
			switch {
			case mode.IsDir():
				continue
			case mode&fs.ModeSymlink != 0:
				skipped(zf.Name, "a symbolic link member (not followed)")
				continue
			case !mode.IsRegular():
				skipped(zf.Name, "a member that is not a regular file")
				continue
			}
			if !KindOf(path.Base(zf.Name)).Session {
				continue
			}
			data = nil
			if zf.UncompressedSize64 <= uint64(maxPendingMember) {
				if clean, _ := cleanMember(zf.Name); inPiAgentDir(r.Path+MemberSep+clean) || KindOf(path.Base(clean)).Trajectory {
					if rc, err := zf.Open(); err == nil {
						data, _ = io.ReadAll(io.LimitReader(rc, maxPendingMember))
						rc.Close()
					}
				}
			}
			if err := member(zf.Name, i, File{Size: int64(zf.UncompressedSize64), ModTime: zf.Modified,
				Mode: mode, Ino: uint64(zf.CRC32)<<32 | zf.UncompressedSize64&0xffffffff}); err != nil {
				return err
			}
		}
		return nil
	}
	f, src, err := tarStream(r.Path, format)
	if err != nil {
		w.report(r.Path, w.source(r, r.Path), CodeUnreadable, SeverityError, errText(err))
		return nil
	}
	defer f.Close()
	defer src.Close()
	tr := tar.NewReader(src)
	last := ""
	for ord := 0; ; ord++ {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			w.report(r.Path, w.source(r, r.Path), CodeUnreadable, SeverityError, archiveDamage(format, last, err))
			return nil
		}
		last = h.Name
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			if KindOf(path.Base(h.Name)).Session {
				skipped(h.Name, "a link member (not followed)")
			}
			continue
		default:
			continue
		}
		if !KindOf(path.Base(h.Name)).Session {
			continue
		}
		// A small member is kept for the worker that reads it (the stream
		// is decompressed once), within maxPendingBytes; a larger one, or
		// one beyond the budget, is read again by a cursor. When the
		// caller reads files as they are listed (Root.ReadAsListed), the
		// listing waits for budget instead, and keeps members up to the
		// whole budget.
		data = nil
		keep := !r.CountOnly && ix.reserve(w.ctx, h.Size, r.ReadAsListed)
		d := xxh3.New()
		if keep {
			data = make([]byte, h.Size)
			if _, err = io.ReadFull(tr, data); err == nil {
				_, _ = d.Write(data)
			} else {
				ix.mu.Lock()
				ix.pendingBytes -= h.Size
				ix.mu.Unlock()
				data = nil
			}
		} else {
			_, err = io.Copy(d, tr)
		}
		if err != nil {
			clean, _ := cleanMember(h.Name)
			vpath := r.Path + MemberSep + clean
			w.report(vpath, w.source(r, vpath), CodeUnreadable, SeverityError, archiveDamage(format, h.Name, err))
			return nil
		}
		if err := member(h.Name, ord, File{Size: h.Size, ModTime: h.ModTime, Mode: h.FileInfo().Mode(), Ino: d.Sum64()}); err != nil {
			return err
		}
	}
}

// archiveDamage describes an error in an archive's stream, after member
// last ("" before the first).
func archiveDamage(format, last string, err error) string {
	msg := errText(err)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "truncated (unexpected end of the data)"
	}
	msg = strings.TrimPrefix(msg, ErrCompressed.Error()+": ")
	if last != "" {
		return fmt.Sprintf("%s archive damaged in or after member %q: %s", format, last, msg)
	}
	return fmt.Sprintf("%s archive damaged before its first member: %s", format, msg)
}

// tarCursor is a sequential reader of a tar archive, positioned before
// the header of ordinal next.
type tarCursor struct {
	f    *os.File
	src  io.ReadCloser
	tr   *tar.Reader
	next int
}

func (c *tarCursor) close() {
	c.src.Close()
	c.f.Close()
}

// maxIdleCursors bounds the idle readers kept per archive (one per worker
// is enough: workers read members in about the order discovery gave them).
const maxIdleCursors = 4

// openMember opens the content of one member of an archive discovery
// opened. Members of a tar are read by a sequential cursor: the idle one
// closest before the member, else a new one from the start.
func openMember(ix *archiveIndex, member string) (io.ReadCloser, error) {
	fail := func(err error) error {
		return fmt.Errorf("%s%s%s: %w", ix.path, MemberSep, member, err)
	}
	ix.mu.Lock()
	ord, ok := ix.ordinal[member]
	if !ok {
		ix.mu.Unlock()
		return nil, fail(fs.ErrNotExist)
	}
	if ix.format == ArchiveZip {
		zr := ix.zr
		ix.mu.Unlock()
		if zr == nil || ord >= len(zr.File) {
			return nil, fail(fs.ErrNotExist)
		}
		rc, err := zr.File[ord].Open()
		if err != nil {
			return nil, fail(err)
		}
		return &memberReader{rc: rc, name: ix.path + MemberSep + member, format: "zip"}, nil
	}
	ix.isFile[ord] = false // asked for: no cursor going past it keeps it
	if data, ok := ix.pending[ord]; ok {
		delete(ix.pending, ord)
		ix.pendingBytes -= int64(len(data))
		ix.cond.Broadcast() // a listing may wait for the budget
		ix.mu.Unlock()
		return &memberReader{rc: io.NopCloser(bytes.NewReader(data)), name: ix.path + MemberSep + member, format: ix.format}, nil
	}
	var c *tarCursor
	for {
		best := -1
		for i, cc := range ix.cursors {
			if cc.next <= ord && (best < 0 || cc.next > ix.cursors[best].next) {
				best = i
			}
		}
		if best >= 0 {
			c = ix.cursors[best]
			ix.cursors = append(ix.cursors[:best], ix.cursors[best+1:]...)
			break
		}
		// A cursor reading an earlier member comes back before this
		// one: wait for it rather than decompress from the start.
		earlier := false
		for _, p := range ix.busy {
			earlier = earlier || p < ord
		}
		if !earlier {
			break
		}
		ix.cond.Wait()
		if data, ok := ix.pending[ord]; ok {
			delete(ix.pending, ord)
			ix.pendingBytes -= int64(len(data))
			ix.cond.Broadcast()
			ix.mu.Unlock()
			return &memberReader{rc: io.NopCloser(bytes.NewReader(data)), name: ix.path + MemberSep + member, format: ix.format}, nil
		}
	}
	if c == nil {
		ix.mu.Unlock()
		f, src, err := tarStream(ix.path, ix.format)
		if err != nil {
			return nil, fail(err)
		}
		c = &tarCursor{f: f, src: src, tr: tar.NewReader(src)}
		cursorsOpened.Add(1)
		ix.mu.Lock()
	}
	ix.busy[c] = ord
	ix.mu.Unlock()
	release := func(keep bool) {
		ix.mu.Lock()
		defer ix.mu.Unlock()
		delete(ix.busy, c)
		ix.cond.Broadcast()
		if !keep || len(ix.cursors) >= maxIdleCursors {
			c.close()
			return
		}
		ix.cursors = append(ix.cursors, c)
	}
	for c.next <= ord {
		h, err := c.tr.Next()
		cur := c.next
		c.next++
		if err != nil {
			release(false)
			if err == io.EOF {
				err = fs.ErrNotExist
			}
			return nil, fail(errors.New(archiveDamage(ix.format, "", err)))
		}
		if cur < ord {
			ix.keepPending(cur, h, c.tr)
		}
	}
	return &memberReader{rc: io.NopCloser(c.tr), name: ix.path + MemberSep + member, format: ix.format,
		done: release}, nil
}

// Bounds of archiveIndex.pending: members up to maxPendingMember bytes,
// maxPendingBytes in all per archive (variables for tests).
var (
	maxPendingMember int64 = 8 << 20
	maxPendingBytes  int64 = 64 << 20
)

// cursorsOpened counts the sequential readers started from the top of an
// archive (each a second decompression of the stream up to its member).
var cursorsOpened atomic.Int64

// keepPending buffers the member of ordinal ord a cursor is going past,
// when discovery passed it on, nobody read it yet, and it is small.
func (ix *archiveIndex) keepPending(ord int, h *tar.Header, r io.Reader) {
	ix.mu.Lock()
	want := ix.isFile[ord] && ix.pending[ord] == nil && h.Size <= maxPendingMember && ix.pendingBytes+h.Size <= maxPendingBytes
	if want {
		ix.pendingBytes += h.Size // reserved
	}
	ix.mu.Unlock()
	if !want {
		return
	}
	data, err := io.ReadAll(io.LimitReader(r, h.Size))
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err != nil || int64(len(data)) != h.Size {
		ix.pendingBytes -= h.Size
		return // damage: the request for it meets it again
	}
	ix.pending[ord] = data
}

// memberReader reads one member: errors name the archive and member, a
// line longer than MaxCompressedLine is refused (a decompression bomb),
// and Close gives a tar cursor back (done).
type memberReader struct {
	rc     io.ReadCloser
	name   string
	format string
	run    int64
	bad    bool
	eof    bool
	done   func(ok bool)
}

func (m *memberReader) Read(p []byte) (int, error) {
	n, err := m.rc.Read(p)
	if i := lastNewline(p[:n]); i >= 0 {
		m.run = int64(n - i - 1)
	} else {
		m.run += int64(n)
	}
	if m.run > MaxCompressedLine {
		m.bad = true
		return n, fmt.Errorf("%s: %w: %s: a line of more than %d MiB: refused (a decompression bomb?)", m.name, ErrCompressed, m.format, MaxCompressedLine>>20)
	}
	if err == io.EOF {
		m.eof = true
	} else if err != nil {
		m.bad = true
		msg := errText(err)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "truncated (unexpected end of the data)"
		}
		err = fmt.Errorf("%s: %w: %s archive: %s", m.name, ErrCompressed, m.format, strings.TrimPrefix(msg, ErrCompressed.Error()+": "))
	}
	return n, err
}

func (m *memberReader) Close() error {
	err := m.rc.Close()
	if m.done != nil {
		m.done(m.eof && !m.bad)
		m.done = nil
	}
	return err
}

func lastNewline(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}
