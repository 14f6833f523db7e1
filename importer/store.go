package importer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

type devIno struct{ dev, ino uint64 }

// store is what the target directory held when the run started: the
// session files by header id (found by reading headers, not by file name).
type store struct {
	root  string
	mu    sync.Mutex
	byID  map[string][]string
	files map[devIno]bool // every session file, to keep them out of the sources
	dirs  []string        // directories, for stale temp file cleanup
}

func scanStore(ctx context.Context, root string) (*store, error) {
	s := &store{root: root, byID: map[string][]string{}, files: map[devIno]bool{}}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return s, nil
	} else if err != nil {
		return nil, fmt.Errorf("target %s: %w", root, err)
	}
	err := ingest.Discover(ctx, []ingest.Root{{Path: root, Recursive: true, Source: ingest.SourceAtomic, Confine: true}}, func(f ingest.File) error {
		s.files[devIno{f.Dev, f.Ino}] = true
		if id, ok := upgrade.ReadHeaderID(f.Path); ok {
			s.byID[id] = append(s.byID[id], f.Path)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("scan target %s: %w", root, err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: discovery already passed over it
		}
		if d.IsDir() {
			if strings.HasSuffix(d.Name(), ".lock") {
				return filepath.SkipDir
			}
			s.dirs = append(s.dirs, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan target %s: %w", root, err)
	}
	return s, nil
}

// lookup returns the store files holding session id.
func (s *store) lookup(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.byID[id]...)
}

// add records a store file that appeared during the run (another process
// created it).
func (s *store) add(id, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.byID[id] {
		if p == path {
			return
		}
	}
	s.byID[id] = append(s.byID[id], path)
}

// remove forgets a store file that vanished during the run.
func (s *store) remove(id, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byID[id][:0]
	for _, p := range s.byID[id] {
		if p != path {
			ps = append(ps, p)
		}
	}
	s.byID[id] = ps
}

// usableID reports whether a session id can be part of a file name.
func usableID(id string) bool {
	return id != "" && len(id) <= 200 && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// targetName is the file name of a new copy: the source's own name when it
// is <ts>_<id>.jsonl for this id, else <ts>_<id>.jsonl with ts from the
// header's createdAt formatted like pi (2025-05-01T12-00-00-000Z), falling
// back to the source's mtime.
func targetName(srcPath, id string, hdr map[string]any, mtime time.Time) string {
	base := filepath.Base(srcPath)
	if name, ok := strings.CutSuffix(base, ".jsonl"); ok {
		if ts, sid, ok := strings.Cut(name, "_"); ok && ts != "" && sid == id {
			return base
		}
	}
	t := mtime
	for _, k := range []string{"createdAt", "timestamp"} {
		if s, ok := hdr[k].(string); ok {
			if pt, err := validate.ParseTime(s); err == nil {
				t = pt
				break
			}
		}
	}
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(t.UTC().Format("2006-01-02T15:04:05.000Z"))
	return ts + "_" + id + ".jsonl"
}

// createdDirsFile lists, in the run directory, the directories an import
// created, so that undo can remove them again when they are empty.
const createdDirsFile = "created-dirs.txt"

// mkdirs creates dir and its missing parents, first recording them in the
// run directory.
func (im *importer) mkdirs(dir string) error {
	im.dirMu.Lock()
	defer im.dirMu.Unlock()
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(im.run.Dir, createdDirsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("record created directories: %w", err)
	}
	w := bufio.NewWriter(f)
	for i := len(missing) - 1; i >= 0; i-- {
		fmt.Fprintln(w, missing[i])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("record created directories: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("record created directories: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record created directories: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		im.madeDirs = append(im.madeDirs, missing[i])
	}
	return nil
}

// removeEmptyDirs removes the directories this run created that are still
// empty (every import into them failed), deepest first. It runs when all
// workers are done.
func (im *importer) removeEmptyDirs() {
	im.dirMu.Lock()
	defer im.dirMu.Unlock()
	for i := len(im.madeDirs) - 1; i >= 0; i-- {
		_ = os.Remove(im.madeDirs[i]) // fails, as it should, when not empty
	}
}
