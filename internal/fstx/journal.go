package fstx

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
	// OpRun, the first record, names the roots the run may write under:
	// undo acts on nothing outside them.
	OpRun = "run"
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
	Roots        []string  `json:"roots,omitempty"` // OpRun: the roots, as given and canonical
}

// RunDir is one migrate (or import) run's directory: journal.jsonl plus, with
// backups, a copy of every original under backup/.
type RunDir struct {
	ID     string
	Dir    string
	Backup bool

	mu      sync.Mutex
	journal *os.File
	n       int           // backups present
	seq     int           // backups numbered
	pending *JournalEntry // the OpRun record, written with the first entry
	entries int           // journal lines written
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
	if err := SyncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("fsync run directory: %w", err)
	}
	return &RunDir{ID: id, Dir: dir, Backup: backup, journal: f}, nil
}

// Backup is one original being copied into the run's backup directory.
// Finish makes it durable; a transaction that fails afterwards calls
// Discard, so that no backup the journal does not list is left behind
// (on a full disk they would eat the space that is already short).
type Backup struct {
	Rel string // path relative to the run directory (the journal's "backup")

	run  *RunDir
	f    *os.File
	path string
	done bool
}

// Write copies bytes of the original into the backup.
func (b *Backup) Write(p []byte) (int, error) { return Faults.Write(b.f, p) }

// Finish fsyncs and closes the backup.
func (b *Backup) Finish() error {
	if err := Faults.Sync(b.f); err != nil {
		b.f.Close()
		return fmt.Errorf("fsync backup %s: %w", b.path, err)
	}
	if err := b.f.Close(); err != nil {
		return fmt.Errorf("close backup %s: %w", b.path, err)
	}
	return nil
}

// Keep marks the backup as listed by the journal: Discard leaves it.
func (b *Backup) Keep() {
	if b != nil {
		b.done = true
	}
}

// Discard removes the backup unless Keep was called. Safe to defer, and
// on a nil *Backup.
func (b *Backup) Discard() {
	if b == nil || b.done {
		return
	}
	b.done = true
	b.f.Close()
	os.Remove(b.path)
	b.run.mu.Lock()
	b.run.n--
	b.run.mu.Unlock()
}

// Drop removes the backup even when journaled: for a transaction whose
// rename never happened (the file is as it was; undo finds it
// already_original without the backup).
func (b *Backup) Drop() {
	if b == nil {
		return
	}
	b.done = false
	b.Discard()
}

// NewBackup creates the next backup file for the original at orig.
func (r *RunDir) NewBackup(orig string) (*Backup, error) {
	r.mu.Lock()
	r.seq++
	r.n++
	n := r.seq
	r.mu.Unlock()
	rel := filepath.Join("backup", fmt.Sprintf("%06d-%s", n, filepath.Base(orig)))
	p := filepath.Join(r.Dir, rel)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		r.mu.Lock()
		r.n--
		r.mu.Unlock()
		return nil, fmt.Errorf("create backup of %s: %w", orig, err)
	}
	return &Backup{Rel: rel, run: r, f: f, path: p}, nil
}

// BackupFile copies the file at path into the run's backup directory
// (fsynced). The caller Keeps it once journaled, else Discards it.
func (r *RunDir) BackupFile(path string) (*Backup, error) {
	src, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	b, err := r.NewBackup(path)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(b, src); err != nil {
		b.Discard()
		return nil, fmt.Errorf("back up %s: %w", path, err)
	}
	if err := b.Finish(); err != nil {
		b.Discard()
		return nil, err
	}
	return b, nil
}

// RecordRoots sets the run's OpRun record, written before its first
// entry: the directories it may write under (each as given and, when
// different, canonical). Undo refuses every path outside them.
func (r *RunDir) RecordRoots(roots []string, now time.Time) error {
	var all []string
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			return err
		}
		all = append(all, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			all = append(all, real)
		}
	}
	r.mu.Lock()
	r.pending = &JournalEntry{Op: OpRun, Roots: all, Time: now}
	r.mu.Unlock()
	return nil
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
	if r.pending != nil {
		pb, err := json.Marshal(r.pending)
		if err != nil {
			return err
		}
		b = append(append(pb, '\n'), b...)
		r.pending = nil
	}
	if _, err := r.journal.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	r.entries++
	if err := Faults.Sync(r.journal); err != nil {
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
	all, err := readJournal(dir)
	out := all[:0]
	for _, e := range all {
		if e.Op != OpRun {
			out = append(out, e)
		}
	}
	return out, err
}

// readJournal is ReadJournal with the OpRun records.
func readJournal(dir string) ([]JournalEntry, error) {
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

// ModeString is the journal's spelling of a mode: the permission bits and
// the setuid (04000), setgid (02000) and sticky (01000) bits, in octal.
func ModeString(m fs.FileMode) string {
	v := uint64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return "0" + strconv.FormatUint(v, 8)
}

// ParseMode reads a journal mode (ModeString); ok is false when s is not
// one.
func ParseMode(s string) (fs.FileMode, bool) {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || s == "" || v > 0o7777 {
		return 0, false
	}
	m := fs.FileMode(v & 0o777)
	if v&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if v&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if v&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, true
}
