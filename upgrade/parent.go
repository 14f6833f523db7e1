package upgrade

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// ParentIndex resolves parentSession paths to session ids by the rules of
// SPEC.md §2.1, among the session files it was told about. Build it with Add
// for every scanned file before resolving; it is then safe for concurrent
// Resolve calls.
type ParentIndex struct {
	byBase map[string]map[string]bool // file name → session ids
}

// NewParentIndex returns an empty index.
func NewParentIndex() *ParentIndex {
	return &ParentIndex{byBase: map[string]map[string]bool{}}
}

// Add records that the file at path holds session id.
func (ix *ParentIndex) Add(path, id string) {
	base := filepath.Base(path)
	if ix.byBase[base] == nil {
		ix.byBase[base] = map[string]bool{}
	}
	ix.byBase[base][id] = true
}

// Resolve returns the session id of the parent at parentPath: (1) the id
// in the header of the file at that path, (2) the id of the one scanned
// session whose file name matches, (3) the id in a <ts>_<id>.jsonl name.
func (ix *ParentIndex) Resolve(parentPath string) (string, bool) {
	if id, ok := ReadHeaderID(parentPath); ok {
		return id, true
	}
	base := filepath.Base(parentPath)
	if ids := ix.byBase[base]; len(ids) == 1 {
		for id := range ids {
			return id, true
		}
	}
	if name, ok := strings.CutSuffix(base, ".jsonl"); ok {
		if _, id, ok := strings.Cut(name, "_"); ok && id != "" {
			return id, true
		}
	}
	return "", false
}

var errStop = errors.New("stop")

type headerVisitor struct{ id string }

func (h *headerVisitor) Record(r *ingest.Record) error {
	t := r.Tape
	if typ, _ := t.Str(t.Get(r.Root, "type")); typ == "session" {
		h.id, _ = t.Str(t.Get(r.Root, "id"))
	}
	return errStop
}
func (h *headerVisitor) Issue(ingest.Issue) {}

// maxHeaderBytes bounds how much of a file ReadHeaderID reads: a header
// line is small, and a parent path may name anything (a device, a pipe).
const maxHeaderBytes = 1 << 20

// ReadHeaderID reads the session id from the header (first record) of the
// session file at path; ok is false when there is none. Only regular files
// are opened (never a pipe or a device), and at most 1 MiB is read.
func ReadHeaderID(path string) (string, bool) {
	f, err := ingest.OpenRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var hv headerVisitor
	rd := ingest.Reader{MaxDepth: 1}
	_, _ = rd.Read(context.Background(), io.LimitReader(f, maxHeaderBytes), &hv)
	return hv.id, hv.id != ""
}
