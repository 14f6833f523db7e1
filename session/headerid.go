package session

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// MaxHeaderBytes bounds how much of a file HeaderID reads: a header line
// is small, and a path may name anything (a device, a pipe, a huge file
// without a newline).
const MaxHeaderBytes = 1 << 20

// HeaderID reads the session id from the header of the session file read
// from r: its first record, or, in an oh-my-pi file, the record after the
// title slot (slotted is then true). ok is false when that record is not a
// session header or has no id. At most MaxHeaderBytes are read. It is the
// one header-id reader: migrate (parent paths), import (grouping, the
// store's index) and their tests ask it.
func HeaderID(r io.Reader) (id string, slotted, ok bool) {
	r = io.LimitReader(r, MaxHeaderBytes)
	head := make([]byte, TitleSlotSize)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if n == TitleSlotSize && head[n-1] == '\n' {
		if _, isSlot := ParseTitleSlot(head[:n-1]); isSlot {
			slotted, head = true, nil
		}
	}
	var hv headerVisitor
	rd := ingest.Reader{MaxDepth: 1}
	_, _ = rd.Read(context.Background(), io.MultiReader(bytes.NewReader(head), r), &hv)
	return hv.id, slotted, hv.id != ""
}

// ReadHeaderID is HeaderID of the regular file at path (never a pipe or a
// device; a compressed file is read as it is on disk, so it has no id).
func ReadHeaderID(path string) (string, bool) {
	f, err := ingest.OpenRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	id, _, ok := HeaderID(f)
	return id, ok
}

var errFirstRecord = errors.New("first record seen")

type headerVisitor struct{ id string }

func (h *headerVisitor) Record(r *ingest.Record) error {
	t := r.Tape
	if typ, _ := t.Str(t.Get(r.Root, "type")); typ == TypeSession {
		h.id, _ = t.Str(t.Get(r.Root, "id"))
	}
	return errFirstRecord
}
func (h *headerVisitor) Issue(ingest.Issue) {}
