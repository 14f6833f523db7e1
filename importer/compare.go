package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"sync"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// upgradedStream returns the bytes of the session in src (size bytes) as
// they are in the store once plan is applied (plan nil or without edits:
// the original bytes). stop must be called when done; it ends the writer
// goroutine when the reader gave up early.
func upgradedStream(src io.ReaderAt, size int64, plan *upgrade.Plan) (r io.Reader, stop func()) {
	sr := io.NewSectionReader(src, 0, size)
	if plan == nil || !plan.NeedsWrite() {
		return sr, func() {}
	}
	pr, pw := io.Pipe()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		pw.CloseWithError(upgrade.Apply(pw, sr, plan))
	}()
	return pr, func() {
		pr.Close()
		<-finished
	}
}

// side is one copy of a session, as compared: its upgraded header and one
// hash per entry of its upgraded bytes. Entries are compared by their raw
// bytes first; where those differ, by their decoded JSON values (a copy
// re-serialized by the agent still matches), computed lazily by a second
// read through open.
type side struct {
	name   string
	header map[string]any
	sums   [][sha256.Size]byte
	open   func() (io.Reader, func())

	canonFrom int
	canon     [][sha256.Size]byte
	hasCanon  bool
}

// hashVisitor hashes the entries (records after the header) of a stream
// from entry index from on, raw or canonical, optionally feeding a
// validate.Checker too.
type hashVisitor struct {
	ck        *validate.Checker
	canonical bool
	from      int
	header    []byte
	sums      [][sha256.Size]byte
}

func (v *hashVisitor) Record(r *ingest.Record) error {
	if v.ck != nil {
		if err := v.ck.Record(r); err != nil {
			return err
		}
	}
	if r.Seq == 0 {
		v.header = bytes.Clone(r.Raw)
		return nil
	}
	if r.Seq-1 < v.from {
		return nil
	}
	if v.canonical {
		v.sums = append(v.sums, canonicalSum(r.Raw))
	} else {
		v.sums = append(v.sums, sha256.Sum256(r.Raw))
	}
	return nil
}

func (v *hashVisitor) Issue(is ingest.Issue) {
	if v.ck != nil {
		v.ck.Issue(is)
	}
}

// canonicalSum hashes a record's decoded JSON value: keys sorted, numbers
// and strings in one spelling, duplicate keys resolved as JavaScript does
// (the last wins), invalid UTF-8 read as U+FFFD.
func canonicalSum(raw []byte) [sha256.Size]byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return sha256.Sum256(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sha256.Sum256(raw)
	}
	return sha256.Sum256(b)
}

// readers are reused across streams: a Reader keeps its line buffer.
var readers = sync.Pool{New: func() any { return &ingest.Reader{MaxDepth: 1} }}

// readAll reads a whole stream with one of the pooled readers.
func readAll(ctx context.Context, r io.Reader, v ingest.Visitor) error {
	rd := readers.Get().(*ingest.Reader)
	defer readers.Put(rd)
	_, err := rd.Read(ctx, r, v)
	return err
}

// digest reads a whole stream with a hashVisitor.
func digest(ctx context.Context, r io.Reader, v *hashVisitor) error { return readAll(ctx, r, v) }

// newSide digests the stream open returns (raw hashes).
func newSide(ctx context.Context, name string, open func() (io.Reader, func())) (*side, error) {
	r, done := open()
	defer done()
	v := &hashVisitor{}
	if err := digest(ctx, r, v); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return sideFrom(name, v, open)
}

func sideFrom(name string, v *hashVisitor, open func() (io.Reader, func())) (*side, error) {
	s := &side{name: name, sums: v.sums, open: open}
	if len(v.header) > 0 {
		if err := json.Unmarshal(v.header, &s.header); err != nil {
			return nil, fmt.Errorf("%s: header: %w", name, err)
		}
	}
	return s, nil
}

// canonical returns the canonical hashes of the entries from index from on.
func (s *side) canonical(ctx context.Context, from int) ([][sha256.Size]byte, error) {
	if s.hasCanon && s.canonFrom <= from {
		return s.canon[min(from-s.canonFrom, len(s.canon)):], nil
	}
	r, done := s.open()
	defer done()
	v := &hashVisitor{canonical: true, from: from}
	if err := digest(ctx, r, v); err != nil {
		return nil, fmt.Errorf("read %s: %w", s.name, err)
	}
	s.canon, s.canonFrom, s.hasCanon = v.sums, from, true
	return s.canon, nil
}

// relation is how the entries of one copy relate to another's.
type relation int

const (
	relEqual   relation = iota // same entries
	relAPrefix                 // a's entries are a strict prefix of b's
	relBPrefix                 // b's entries are a strict prefix of a's
	relDiffer                  // an entry differs (at the returned index)
)

// relate compares the entries of a and b, record by record: raw bytes
// first, decoded JSON values where the bytes differ. It returns the
// relation and, for relDiffer, the index of the first differing entry.
func relate(ctx context.Context, a, b *side) (relation, int, error) {
	n := min(len(a.sums), len(b.sums))
	k := 0
	for k < n && a.sums[k] == b.sums[k] {
		k++
	}
	if k < n {
		ca, err := a.canonical(ctx, k)
		if err != nil {
			return relDiffer, k, err
		}
		cb, err := b.canonical(ctx, k)
		if err != nil {
			return relDiffer, k, err
		}
		if len(ca) < n-k || len(cb) < n-k {
			return relDiffer, k, errors.New("the file changed while it was compared")
		}
		for i := k; i < n; i++ {
			if ca[i-k] != cb[i-k] {
				return relDiffer, i, nil
			}
		}
	}
	switch {
	case len(a.sums) == len(b.sums):
		return relEqual, 0, nil
	case len(a.sums) < len(b.sums):
		return relAPrefix, 0, nil
	default:
		return relBPrefix, 0, nil
	}
}

// normHeader returns a header with the differences an upgrade causes taken
// out: no version, createdAt for timestamp, parentSessionId for a
// parentSession path that resolves.
func normHeader(h map[string]any, resolve func(string) (string, bool)) map[string]any {
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[k] = v
	}
	delete(out, "version")
	if ts, ok := out["timestamp"]; ok {
		if _, has := out["createdAt"]; !has {
			out["createdAt"] = ts
		}
		delete(out, "timestamp")
	}
	if ps, ok := out["parentSession"].(string); ok {
		if _, has := out["parentSessionId"]; has {
			delete(out, "parentSession")
		} else if id, ok := resolve(ps); ok {
			out["parentSessionId"] = id
			delete(out, "parentSession")
		}
	} else if out["parentSession"] == nil {
		delete(out, "parentSession")
	}
	return out
}

// headerDiff returns "" when two headers describe the same session: the
// same id, and equal values for every key both have, once the differences
// an upgrade causes are taken out. Otherwise it says what differs.
func headerDiff(a, b map[string]any, resolve func(string) (string, bool)) string {
	na, nb := normHeader(a, resolve), normHeader(b, resolve)
	if !reflect.DeepEqual(na["id"], nb["id"]) {
		return fmt.Sprintf("session id %v vs %v", na["id"], nb["id"])
	}
	keys := make([]string, 0, len(na))
	for k := range na {
		if _, ok := nb[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !reflect.DeepEqual(na[k], nb[k]) {
			return fmt.Sprintf("header %s is %s here and %s there", k, short(na[k]), short(nb[k]))
		}
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// headerOf reads only the first record of a stream and decodes it.
func headerOf(ctx context.Context, r io.Reader) (map[string]any, error) {
	v := &firstRecord{}
	if err := readAll(ctx, r, v); err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	var h map[string]any
	if len(v.raw) > 0 {
		if err := json.Unmarshal(v.raw, &h); err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
	}
	return h, nil
}

var errStop = errors.New("stop")

type firstRecord struct{ raw []byte }

func (f *firstRecord) Record(r *ingest.Record) error {
	f.raw = bytes.Clone(r.Raw)
	return errStop
}
func (f *firstRecord) Issue(ingest.Issue) {}

// checkingWriter validates the bytes written to it, as they are written,
// in a goroutine: the check a copy must pass before it is renamed into
// place, without reading the temporary file again.
type checkingWriter struct {
	pw   *io.PipeWriter
	done chan struct{}
	res  validate.Result
	err  error
}

func newCheckingWriter(ctx context.Context) *checkingWriter {
	pr, pw := io.Pipe()
	c := &checkingWriter{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		ck := validate.NewChecker()
		err := readAll(ctx, pr, ck)
		if err == nil {
			_, err = io.Copy(io.Discard, pr) // nothing is left; drain to be safe
		}
		pr.CloseWithError(err)
		c.res, c.err = ck.Finish(), err
	}()
	return c
}

func (c *checkingWriter) Write(p []byte) (int, error) { return c.pw.Write(p) }

// finish ends the stream and returns the verdict on what was written.
func (c *checkingWriter) finish() (validate.Result, error) {
	c.pw.Close()
	<-c.done
	return c.res, c.err
}

// abort stops the checker after a failed write; safe after finish.
func (c *checkingWriter) abort() {
	c.pw.CloseWithError(errStop)
	<-c.done
}
