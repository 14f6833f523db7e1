package migrate

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Journal operations.
const (
	OpRewrite = "rewrite" // a file replaced by its migrated form
	OpMove    = "move"    // a file moved by --relayout
	OpCreate  = "create"  // a file created (import)
	OpUpdate  = "update"  // a file replaced by a longer version of itself (import)
	OpMkdir   = "mkdir"   // a directory created for a move (--relayout); undo removes it when empty
	// OpMoveFailed follows the OpMove record (same path and from) of a move
	// whose rename failed: the file never left its old path.
	OpMoveFailed = "move_failed"
)

// JournalEntry is one line of a run's journal.jsonl: enough to tell what a
// run did to a file and to undo it (SPEC.md §2.3 step 5). Times are RFC 3339
// with nanoseconds; hashes are hex SHA-256 of the whole file.
type JournalEntry struct {
	Op           string    `json:"op"`
	Path         string    `json:"path"`           // the file as it is after the operation
	From         string    `json:"from,omitempty"` // OpMove: where it was
	Size         int64     `json:"size"`           // bytes before
	Mtime        time.Time `json:"mtime"`          // mtime before (restored after)
	Mode         string    `json:"mode"`           // permission bits, octal
	SHA256Before string    `json:"sha256_before,omitempty"`
	SHA256After  string    `json:"sha256_after"`
	Backup       string    `json:"backup,omitempty"` // backup file, relative to the run directory
	FromVersion  int       `json:"from_version,omitempty"`
	Changes      int       `json:"changes,omitempty"`
	Repairs      []string  `json:"repairs,omitempty"`
	Time         time.Time `json:"time"`
}

// RunDir is one migrate (or import) run's directory: journal.jsonl plus, with
// backups, a copy of every original under backup/.
type RunDir struct {
	ID     string
	Dir    string
	Backup bool

	mu      sync.Mutex
	journal *os.File
	n       int // backups taken
	entries int // journal lines written
}

// NewRunID returns a run id: the UTC start time and 4 random hex digits,
// e.g. 20261129T134500Z-3f2a. Ids sort by time.
func NewRunID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// StartRun creates the run directory base/id with an empty journal.
func StartRun(base, id string, backup bool) (*RunDir, error) {
	dir := filepath.Join(base, id)
	if err := os.MkdirAll(filepath.Join(dir, "backup"), 0o700); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "journal.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("fsync run directory: %w", err)
	}
	return &RunDir{ID: id, Dir: dir, Backup: backup, journal: f}, nil
}

// BackupFile copies the file at path into the run's backup directory
// (fsynced) and returns the copy's path relative to the run directory.
func (r *RunDir) BackupFile(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	f, rel, err := r.backupWriter(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	return rel, finishBackup(f)
}

// backupWriter creates the next backup file and returns it with its path
// relative to the run directory. The caller writes the original into it and
// then calls finishBackup.
func (r *RunDir) backupWriter(orig string) (*os.File, string, error) {
	r.mu.Lock()
	r.n++
	n := r.n
	r.mu.Unlock()
	rel := filepath.Join("backup", fmt.Sprintf("%06d-%s", n, filepath.Base(orig)))
	f, err := os.OpenFile(filepath.Join(r.Dir, rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("create backup of %s: %w", orig, err)
	}
	return f, rel, nil
}

func finishBackup(f *os.File) error {
	if err := syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("fsync backup %s: %w", f.Name(), err)
	}
	return f.Close()
}

// Record appends one entry to the journal and fsyncs it. It is safe for
// concurrent use.
func (r *RunDir) Record(e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.journal.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	r.entries++
	if err := syncFile(r.journal); err != nil {
		return fmt.Errorf("fsync journal: %w", err)
	}
	return nil
}

// Empty reports whether nothing was journaled.
func (r *RunDir) Empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.entries == 0 && r.n == 0
}

// Close closes the journal. A run that journaled nothing leaves no
// directory behind.
func (r *RunDir) Close() error {
	err := r.journal.Close()
	if r.Empty() {
		_ = os.RemoveAll(r.Dir)
	}
	return err
}

// ReadJournal reads the entries of the run directory dir, in order. A torn
// last line (the process was killed while writing it) is ignored: its
// operation had not started.
func ReadJournal(dir string) ([]JournalEntry, error) {
	f, err := os.Open(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []JournalEntry
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var e JournalEntry
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				return nil, fmt.Errorf("journal %s: %w", f.Name(), jerr)
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ResolveRun finds a run directory: run may be a directory path or a run id
// under base.
func ResolveRun(base, run string) (string, error) {
	if st, err := os.Stat(run); err == nil && st.IsDir() {
		return run, nil
	}
	dir := filepath.Join(base, run)
	if _, err := os.Stat(filepath.Join(dir, "journal.jsonl")); err != nil {
		return "", fmt.Errorf("run %q: no journal in %s or %s: %w", run, run, dir, fs.ErrNotExist)
	}
	return dir, nil
}

func modeString(m fs.FileMode) string { return "0" + strconv.FormatUint(uint64(m.Perm()), 8) }

func parseMode(s string) fs.FileMode {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0"), 8, 32)
	if err != nil || s == "" {
		return 0o600
	}
	return fs.FileMode(v)
}
