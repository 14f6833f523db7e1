package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// Sources that are not plain files on disk (SPEC.md §7.2): a compressed
// file (.zst, .gz), a member of a home archive given as SOURCE
// (ARCHIVE!/inner), an oh-my-pi file opening with its title slot. Their
// content is read once, streaming (decompressed, the slot left out), into
// a spool the upgrade then reads like a file: in memory up to spoolMem
// bytes, beyond that in an unlinked temporary file in sessions-etl's state
// directory, gone when the source is done. The copy is the content
// upgraded like any legacy file; an omp title is kept as the session's
// name by a session_info entry appended to the copy.

// spoolMem is how much of one source's content is held in memory (a
// variable for tests).
var spoolMem int64 = 8 << 20

// content is what the importer reads of one source file.
type content struct {
	ra   io.ReaderAt
	size int64
	// disk is the file on disk the content comes from (the file itself,
	// or its archive) and diskMeta what it was when the content was read:
	// a change of it is a change of the source.
	disk     string
	diskMeta fstx.Meta
	// copyMeta is the permission bits and times the copy gets: the
	// file's, or the archive member's.
	copyMeta fstx.Meta
	// lineShift is the number of lines of the file before the content
	// (1: an omp title slot), added to the plan's line numbers.
	lineShift int
	// slot is the omp title slot left out, nil when there is none.
	slot *session.TitleSlot
	// titleNote says what became of the slot's title.
	titleNote string
	close     func() error
}

// plain reports whether f is read as it is on disk.
func (sf *srcFile) plain() bool {
	return sf.file.Archive == "" && sf.file.Kind.Compression == "" && !sf.slot
}

// openContent opens the content of a source file: the file itself when it
// is plain, else its spooled content (see above).
func (im *importer) openContent(ctx context.Context, sf *srcFile) (*content, error) {
	f := sf.file
	if sf.plain() {
		fh, err := ingest.OpenRegular(f.Path)
		if err != nil {
			return nil, err
		}
		meta, err := fstx.Stat(fh)
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("stat %s: %w", f.Path, err)
		}
		return &content{ra: fh, size: meta.Size, disk: f.Path, diskMeta: meta, copyMeta: meta, close: fh.Close}, nil
	}
	disk := f.Path
	if f.Archive != "" {
		disk = f.Archive
	}
	fi, err := os.Stat(disk)
	if err != nil {
		return nil, err
	}
	c := &content{disk: disk, diskMeta: fstx.MetaOf(fi)}
	c.copyMeta = c.diskMeta
	if f.Archive != "" {
		// The member's own bits and time (a member without permission
		// bits gets the owner's read and write).
		c.copyMeta.Mode = f.Mode.Perm()
		if c.copyMeta.Mode&0o600 != 0o600 {
			c.copyMeta.Mode |= 0o600
		}
		if !f.ModTime.IsZero() {
			c.copyMeta.Mtime, c.copyMeta.Atime = f.ModTime, f.ModTime
		}
		c.copyMeta.UID, c.copyMeta.GID = -1, -1
	}
	rc, err := ingest.OpenContent(f.Path)
	if err != nil {
		return nil, err
	}
	sp := &spool{dir: im.opts.StateDir}
	err = c.fill(ctx, sp, rc)
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		sp.Close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	c.ra, c.size, c.close = sp, sp.size, sp.Close
	return c, nil
}

// fill copies the content of rc into sp, leaving out an omp title slot and
// appending the session_info entry that keeps its title.
func (c *content) fill(ctx context.Context, sp *spool, rc io.Reader) error {
	head := make([]byte, session.TitleSlotSize)
	n, err := io.ReadFull(rc, head)
	head = head[:n]
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if n == session.TitleSlotSize && head[n-1] == '\n' {
		if s, ok := session.ParseTitleSlot(head[:n-1]); ok {
			c.slot, c.lineShift, head = &s, 1, nil
		}
	}
	if _, err := sp.Write(head); err != nil {
		return err
	}
	if _, err := io.Copy(sp, ctxReader{ctx, rc}); err != nil {
		return err
	}
	if c.slot == nil {
		return nil
	}
	line, note := titleEntry(sp, *c.slot)
	c.titleNote = note
	if line != nil {
		_, err = sp.Write(line)
	}
	return err
}

// titleEntry returns the line that keeps an omp title as the session's
// name in the copy (SPEC.md §7.2: import copies omp files keeping the
// title as the name): a session_info entry after the last entry, unless
// the last entry already names the session so, or there is no title. note
// says what was done (or why the title could not be kept).
func titleEntry(sp *spool, slot session.TitleSlot) (line []byte, note string) {
	if slot.Title == "" {
		return nil, "the oh-my-pi title slot (line 1) is not copied; its title is empty"
	}
	last, nl, err := lastLine(sp, sp.size)
	if err != nil {
		return nil, fmt.Sprintf("the title %q could not be kept: %v", slot.Title, err)
	}
	var rec map[string]any
	if json.Unmarshal(last, &rec) != nil {
		return nil, fmt.Sprintf("the title %q is not kept: the file's last line is not a complete record", slot.Title)
	}
	typ, _ := rec["type"].(string)
	id, _ := rec["id"].(string)
	if typ == "session_info" && rec["name"] == slot.Title {
		return nil, fmt.Sprintf("the oh-my-pi title slot (line 1) is not copied; its title %q is already the session's name", slot.Title)
	}
	if typ == "session" || id == "" {
		return nil, fmt.Sprintf("the title %q is not kept: the file has no entry to hang a session_info entry on", slot.Title)
	}
	ts := slot.UpdatedAt
	if _, err := validate.ParseTime(ts); err != nil {
		ts, _ = rec["timestamp"].(string)
	}
	// A deterministic id: a second import writes the same bytes.
	sum := sha256.Sum256([]byte("omp-title\x00" + id + "\x00" + slot.Title + "\x00" + ts))
	var b bytes.Buffer
	if !nl {
		b.WriteByte('\n')
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ParentID  string `json:"parentId"`
		Timestamp string `json:"timestamp"`
		Name      string `json:"name"`
	}{"session_info", hex.EncodeToString(sum[:4]), id, ts, slot.Title})
	return b.Bytes(), fmt.Sprintf("the oh-my-pi title slot (line 1) is not copied; its title %q is kept as the session's name (a session_info entry appended to the copy)", slot.Title)
}

// lastLine returns the last non-blank line of the first size bytes of ra,
// and whether a newline ends them.
func lastLine(ra io.ReaderAt, size int64) ([]byte, bool, error) {
	const chunk = 64 << 10
	var tail []byte
	nl := false
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		b := make([]byte, end-start)
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return nil, false, err
		}
		if end == size {
			nl = b[len(b)-1] == '\n'
		}
		tail = append(b, tail...)
		t := bytes.TrimRight(tail, " \t\r\n")
		if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
			return t[i+1:], nl, nil
		}
		if int64(len(tail)) > 64<<20 {
			return nil, nl, errors.New("the last line is longer than 64 MiB")
		}
		end = start
	}
	return bytes.TrimRight(tail, " \t\r\n"), nl, nil
}

// shiftLines adds n to the line numbers of changes (the content starts n
// lines into the file).
func shiftLines(cs []upgrade.Change, n int) []upgrade.Change {
	if n == 0 || len(cs) == 0 {
		return cs
	}
	out := make([]upgrade.Change, len(cs))
	for i, c := range cs {
		if c.Line > 0 {
			c.Line += n
		}
		out[i] = c
	}
	return out
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// spool holds a source's content: in memory up to spoolMem bytes, then in
// an unlinked temporary file in dir (removed on Close where an open file
// cannot be unlinked).
type spool struct {
	dir  string
	buf  []byte
	f    *os.File
	name string // the temporary file's name while it must still be removed
	size int64
}

func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && s.size+int64(len(p)) <= spoolMem {
		s.buf = append(s.buf, p...)
		s.size += int64(len(p))
		return len(p), nil
	}
	if s.f == nil {
		dir := s.dir
		if dir == "" {
			dir = os.TempDir()
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return 0, err
		}
		f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-spool-*.tmp", fstx.TempPrefix, os.Getpid()))
		if err != nil {
			return 0, err
		}
		s.f = f
		if os.Remove(f.Name()) != nil {
			s.name = f.Name() // Windows: removed on Close
		}
		if _, err := f.Write(s.buf); err != nil {
			return 0, err
		}
		s.buf = nil
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	if s.f != nil {
		return s.f.ReadAt(p, off)
	}
	if off >= int64(len(s.buf)) {
		return 0, io.EOF
	}
	n := copy(p, s.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *spool) Close() error {
	s.buf = nil
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		_ = os.Remove(s.name)
	}
	s.f = nil
	return err
}

// readHeaderID reads the session id of a source file's header (line 2 of
// an omp file) when that is cheap: a file on disk (decompressed), or an
// archive member the archive gives without a pass over it
// (ingest.PeekMember). ok is false otherwise; the member then forms a
// group of its own, and the store decides (already_imported rather than
// duplicate when another source held the same session).
func readHeaderID(f ingest.File) (id string, slot, ok bool) {
	var rc io.ReadCloser
	if f.Archive != "" {
		if rc, ok = ingest.PeekMember(f.Path); !ok {
			return "", false, false
		}
	} else {
		var err error
		if rc, err = ingest.OpenContent(f.Path); err != nil {
			return "", false, false
		}
	}
	defer rc.Close()
	return session.HeaderID(rc)
}

// copyName is the file name a source's content has: its name without a
// compression suffix.
func copyName(p string) string {
	base := filepath.Base(p)
	for _, suf := range []string{".zst", ".gz"} {
		if b, ok := strings.CutSuffix(base, suf); ok && b != "" {
			return b
		}
	}
	return base
}
