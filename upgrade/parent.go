package upgrade

import (
	"path/filepath"
	"strings"

	"github.com/sessions-etl/sessions-etl/session"
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
	if id, ok := session.ReadHeaderID(parentPath); ok {
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
