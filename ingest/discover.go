package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Source labels: which agent's home a file belongs to (SPEC.md §1.1).
const (
	SourcePi     = "pi"
	SourceAtomic = "atomic"
	SourcePrime  = "prime"
	SourceCustom = "custom"
)

// Root is a place to look for session files.
type Root struct {
	Path      string // a directory or a single file
	Recursive bool   // descend into subdirectories
	Source    string // source label for files found here (its store's); "" derives it from each file's path
	// AgentDir marks pi's agent directory (the legacy flat location, also
	// when moved by PI_CODING_AGENT_DIR): its other JSONL files are passed
	// over (not_a_session_file), as under .pi/agent.
	AgentDir bool
	// Archive: Path is a home archive (.tar, .tar.gz, .tgz, .tar.zst,
	// .zip) read as the tree it contains (set by PathRoots; SPEC.md §7.2).
	Archive bool
	// ReadAsListed says the caller reads (opens) every file discovery
	// passes on while discovery goes on, as validate does: the listing of
	// a compressed tar then waits for the members it holds in memory to
	// be read rather than leaving the next ones to a second decompression
	// (bounded by maxPendingBytes; it never waits long for a member nobody
	// asks for).
	ReadAsListed bool
	// CountOnly says the walk only lists files (sizes, identities) while
	// another walk of the same roots may be reading them (export's
	// progress total): a home archive is listed without its members being
	// made readable through it, so the reading walk's are left alone.
	CountOnly bool
	// Stores, for a root given as PATH, are the roots of the known stores
	// (ingest.Store.Roots): a file found inside one of them is labelled
	// with that store's label (the deepest; SPEC.md §7.1: the label comes
	// from the store a file is in), so that a PATH inside pi's store moved
	// by PI_CODING_AGENT_DIR reads as pi, not custom.
	Stores []Root
	// Labels, when not empty, keeps only the files (and path issues) whose
	// source label is one of them (--source).
	Labels []string
	// Skip lists directories never entered below this root: this tool's
	// state directory, whose run directories hold backups of session files
	// (SPEC.md §1.1: skip this tool's temporary files and backups).
	Skip []string
	// Confine keeps the walk inside the root: a directory link whose target
	// lies outside it is reported (CodeLinkOutsideRoot) and not followed.
	// Writing commands (migrate, import) set it.
	Confine bool
}

// CodeLinkOutsideRoot reports a directory link that leads out of its root,
// which a writing command does not follow.
const CodeLinkOutsideRoot = "link_outside_root"

// File is one session file found by [Discover].
type File struct {
	Path    string // absolute path as reached (symbolic links in it are not resolved); ARCHIVE!/inner for an archive member (ARCHIVE as given)
	Source  string // source label: the store's (ingest.Labels, a config store's name), else SourceOf
	Size    int64  // bytes
	ModTime time.Time
	Mode    fs.FileMode
	Dev     uint64
	Ino     uint64
	// Kind is what the file's name says (SPEC.md §7.2): an OpenClaw
	// archive, a snapshot, compressed. Kind.ReadOnly files are never
	// rewritten or moved.
	Kind NameKind
	// Archive is the home archive (given as PATH) the file is a member
	// of, and Member its cleaned inner path; Path is then
	// Archive + MemberSep + Member, Size and ModTime the member's, and Ino
	// a digest of its content (Dev 0). Empty for files on disk.
	Archive, Member string
}

// PathIssue is a problem found while discovering files: a broken link, a
// directory link cycle, an unreadable directory or file.
type PathIssue struct {
	Path   string
	Source string
	Issue  Issue
}

// TempPrefix starts the names of this tool's temporary files and is skipped
// by discovery (SPEC.md §1.1, §2.3).
const TempPrefix = ".sessions-etl-"

// DefaultRootCandidates returns every default root of SPEC.md §1.1 under
// home, whether it exists or not: the pi, Atomic and Prime session
// directories (recursive) and pi's legacy flat agent directory (its own
// *.jsonl files only).
func DefaultRootCandidates(home string) []Root {
	return []Root{
		{Path: filepath.Join(home, ".pi", "agent", "sessions"), Recursive: true, Source: SourcePi},
		{Path: filepath.Join(home, ".pi", "agent"), Recursive: false, Source: SourcePi},
		{Path: filepath.Join(home, ".atomic", "agent", "sessions"), Recursive: true, Source: SourceAtomic},
		{Path: filepath.Join(home, ".prime", "agent", "sessions"), Recursive: true, Source: SourcePrime},
	}
}

// RootState is what a stat of a default root found.
type RootState int

const (
	RootPresent    RootState = iota // a directory
	RootMissing                     // not there (ENOENT, ENOTDIR), or not a directory
	RootUnreadable                  // stat failed otherwise (EACCES on a parent, ELOOP, I/O)
)

func (s RootState) String() string {
	switch s {
	case RootPresent:
		return "present"
	case RootMissing:
		return "missing"
	}
	return "unreadable"
}

// statRoot is os.Stat; tests replace it to provoke what a process running
// as root cannot (a parent directory it may not search).
var statRoot = os.Stat

// DefaultRootState says whether the default root at path is there: a
// directory, missing (does not exist, a parent is not a directory, or it
// is not a directory), or unreadable (its stat failed for another reason,
// such as a parent directory of mode 000).
func DefaultRootState(path string) RootState {
	st, err := statRoot(path)
	switch {
	case err == nil && st.IsDir():
		return RootPresent
	case err == nil, errors.Is(err, fs.ErrNotExist), isNotDir(err):
		return RootMissing
	}
	return RootUnreadable
}

// DefaultRoots returns the default roots of SPEC.md §1.1 under home
// ([DefaultRootCandidates]) that exist as directories, and those whose
// stat failed other than with "does not exist" ([RootUnreadable]): an
// unreadable root is not a missing one, and [Discover] reports it as an
// unreadable path (error), as it does any directory it cannot read.
func DefaultRoots(home string) []Root {
	var out []Root
	for _, r := range DefaultRootCandidates(home) {
		if DefaultRootState(r.Path) != RootMissing {
			out = append(out, r)
		}
	}
	return out
}

// PathRoots turns command-line paths into recursive roots whose source is
// derived from each file's path. Relative paths are made absolute, except
// a home archive's: its members are shown as ARCHIVE!/inner with ARCHIVE
// as given on the command line (cleaned; SPEC.md §7.2, case c28), and it is
// opened by that path.
func PathRoots(paths []string) ([]Root, error) {
	out := make([]Root, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", p, err)
		}
		if IsArchivePath(abs) {
			out = append(out, Root{Path: filepath.Clean(p), Recursive: true, Archive: true})
			continue
		}
		out = append(out, Root{Path: abs, Recursive: true})
	}
	return out, nil
}

// SourceOf labels a path by its nearest agent home segment (SPEC.md
// §1.1, §7.1): .pi, .atomic, .prime, .omp, .openclaw, or kimchi/harness
// (kimchi's store under the config directory); else "custom".
func SourceOf(path string) string {
	segs := strings.Split(filepath.ToSlash(path), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		switch segs[i] {
		case ".pi":
			return SourcePi
		case ".atomic":
			return SourceAtomic
		case ".prime":
			return SourcePrime
		case ".omp":
			return SourceOmp
		case ".openclaw":
			return SourceOpenClaw
		case "kimchi":
			if i+1 < len(segs) && segs[i+1] == "harness" {
				return SourceKimchi
			}
		}
	}
	return SourceCustom
}

// IsSessionName reports whether a directory entry name is a candidate
// session file (KindOf): *.jsonl, OpenClaw's *.jsonl.reset.<ts> and
// *.jsonl.deleted.<ts> archives, *.jsonl.bak* snapshots, each possibly
// compressed (.zst, .gz); not one of this tool's temporary files.
func IsSessionName(name string) bool {
	return KindOf(name).Session
}

// devIno identifies a file whatever path reached it: device and inode on
// Unix, volume serial number and file index on Windows (statIDs in
// fileid_*.go).
type devIno struct{ dev, ino uint64 }

// readDirBatch is how many directory entries are read, sorted and handled
// at a time: directories are streamed, never listed whole into memory.
const readDirBatch = 1024

type walker struct {
	skip      map[devIno]bool
	ctx       context.Context
	fn        func(File) error
	issue     func(PathIssue)
	seenFiles map[devIno]bool
	seenDirs  map[devIno]bool
	ancestors []devIno
	above     map[devIno]bool // the directories above the current root: links to them are cycles
	rootReal  string          // the current root, links resolved
	labels    []string        // the root's Labels
}

// aboveRoot collects the directories above the root at path (its real
// path's parents up to the file system root): a link to one of them leads
// back over the root, a cycle.
func aboveRoot(real string) map[devIno]bool {
	out := map[devIno]bool{}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			out[statIDs(d, fi)] = true
		}
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// Discover walks the roots in order and calls fn for every session file
// (SPEC.md §1.1): regular *.jsonl files, following symbolic links to files
// and directories, skipping *.lock directories and this tool's temporary
// files. A file reached twice (two roots, links, hard links) is passed once.
// Directory link cycles, broken links and unreadable directories are passed
// to issue and the walk goes on. A root that is a file is passed as is,
// whatever its name. Within a directory, entries are handled in name order
// per batch of 1024. Discover returns fn's first error, or ctx.Err().
func Discover(ctx context.Context, roots []Root, fn func(File) error, issue func(PathIssue)) error {
	w := &walker{ctx: ctx, fn: fn, issue: issue, seenFiles: map[devIno]bool{}, seenDirs: map[devIno]bool{}}
	for _, r := range roots {
		w.skip = map[devIno]bool{}
		for _, p := range r.Skip {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				if id := statIDs(p, fi); id != (devIno{}) {
					w.skip[id] = true
				}
			}
		}
		w.rootReal, w.above = r.Path, nil
		if real, err := filepath.EvalSymlinks(r.Path); err == nil {
			w.rootReal, w.above = real, aboveRoot(real)
		}
		w.labels = r.Labels
		if err := w.root(r); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) report(path, source, code string, sev Severity, msg string) {
	if w.issue != nil && (len(w.labels) == 0 || slices.Contains(w.labels, source)) {
		w.issue(PathIssue{Path: path, Source: source, Issue: Issue{Severity: sev, Code: code, Message: msg}})
	}
}

// source labels a file by the store it was found in (SPEC.md §7.1), then
// by its path (SourceOf).
func (w *walker) source(r Root, path string) string {
	if r.Source != "" {
		return r.Source
	}
	if l := StoreLabelOf(r.Stores, path); l != "" {
		return l
	}
	return SourceOf(path)
}

// StoreLabelOf returns the label of the store root among stores that holds
// path (the deepest one; a non-recursive root holds only the files
// directly in it), or "".
func StoreLabelOf(stores []Root, path string) string {
	label, depth := "", -1
	for _, s := range stores {
		rel, err := filepath.Rel(s.Path, path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		if !s.Recursive && strings.ContainsRune(rel, filepath.Separator) {
			continue
		}
		if d := len(s.Path); d > depth && s.Source != "" {
			label, depth = s.Source, d
		}
	}
	return label
}

func (w *walker) root(r Root) error {
	fi, err := statRoot(r.Path)
	if err != nil {
		if lfi, lerr := os.Lstat(r.Path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			w.report(r.Path, w.source(r, r.Path), CodeBrokenLink, SeverityWarning, "symbolic link to a missing target")
			return nil
		}
		w.report(r.Path, w.source(r, r.Path), CodeUnreadable, SeverityError, errText(err))
		return nil
	}
	if r.Archive && fi.Mode().IsRegular() {
		return w.archive(r, fi)
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			w.report(r.Path, w.source(r, r.Path), CodeUnreadable, SeverityError, "not a regular file")
			return nil
		}
		return w.file(r, r.Path, fi)
	}
	return w.dir(r, r.Path, fi)
}

// notASession reports whether the file's first record is a JSON object
// whose "type" is a string other than "session" (another kind of JSONL
// file, not a damaged session). At most 1 MiB is read.
func notASession(path string) bool {
	f, err := OpenContent(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return notASessionIn(f)
}

// notASessionIn is notASession over a content stream.
func notASessionIn(f io.Reader) bool {
	var typ string
	var isObj, seen bool
	rd := Reader{MaxDepth: 1}
	_, _ = rd.Read(context.Background(), io.LimitReader(f, 1<<20), visitFirst(func(rec *Record) {
		seen = true
		isObj = rec.Tape.Kind(rec.Root) == KindObject
		typ, _ = rec.Tape.Str(rec.Tape.Get(rec.Root, "type"))
	}))
	return seen && isObj && typ != "session"
}

// visitFirst calls fn with the first record and stops.
type visitFirst func(*Record)

func (v visitFirst) Record(r *Record) error { v(r); return errFirstSeen }
func (visitFirst) Issue(Issue)              {}

var errFirstSeen = errors.New("first record seen")

// CodeNotASessionFile notes a file of another kind in a directory that
// holds session files among others (pi's agent directory, see inPiAgentDir).
const CodeNotASessionFile = "not_a_session_file"

// inPiAgentDir reports whether path is directly inside pi's agent
// directory (a directory "agent" whose parent is ".pi": the legacy flat
// location of SPEC.md §1.1), which also holds other JSONL files of the
// agent, such as its prompt history. Discovery passes over such a file
// when its first record is a JSON object that is not a session header
// (code not_a_session_file), however the walk reached it: from the
// default roots or from a directory named on the command line. A file
// named on the command line itself is always validated.
func inPiAgentDir(path string) bool {
	dir := filepath.Dir(path)
	return filepath.Base(dir) == "agent" && filepath.Base(filepath.Dir(dir)) == ".pi"
}

func (w *walker) file(r Root, path string, fi fs.FileInfo) error {
	kind := KindOf(filepath.Base(path))
	if path != r.Path && (inPiAgentDir(path) || r.AgentDir && filepath.Dir(path) == r.Path || kind.Trajectory) && notASession(path) {
		w.report(path, w.source(r, path), CodeNotASessionFile, SeverityNote, "another kind of JSONL file (its first record is not a session header): not read")
		return nil
	}
	src := w.source(r, path)
	if len(r.Labels) > 0 && !slices.Contains(r.Labels, src) {
		return nil
	}
	id := statIDs(path, fi)
	if id != (devIno{}) {
		if w.seenFiles[id] {
			return nil
		}
		w.seenFiles[id] = true
	}
	return w.fn(File{Path: path, Source: src, Size: fi.Size(), ModTime: fi.ModTime(),
		Mode: fi.Mode(), Dev: id.dev, Ino: id.ino, Kind: kind})
}

func (w *walker) dir(r Root, path string, fi fs.FileInfo) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	id := statIDs(path, fi)
	if id == (devIno{}) {
		// No identity (Windows could not open the directory for its
		// attributes): walk it without the cycle and seen checks; reading
		// it will most likely fail and be reported.
		return w.walkDir(r, path)
	}
	if w.skip[id] {
		return nil
	}
	if slices.Contains(w.ancestors, id) || w.above[id] {
		w.report(path, w.source(r, path), CodeSymlinkCycle, SeverityWarning, "directory link leads back to one of its ancestors: not followed")
		return nil
	}
	if w.seenDirs[id] {
		return nil // reached before through another path: its files were passed then
	}
	w.seenDirs[id] = true
	w.ancestors = append(w.ancestors, id)
	defer func() { w.ancestors = w.ancestors[:len(w.ancestors)-1] }()
	return w.walkDir(r, path)
}

// walkDir passes the entries of the directory at path, in name order per
// batch.
func (w *walker) walkDir(r Root, path string) error {
	d, err := os.Open(path)
	if err != nil {
		w.report(path, w.source(r, path), CodeUnreadable, SeverityError, errText(err))
		return nil
	}
	defer d.Close()
	for {
		ents, err := d.ReadDir(readDirBatch)
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range ents {
			if err := w.entry(r, path, e); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return nil
		}
		if err != nil {
			w.report(path, w.source(r, path), CodeUnreadable, SeverityError, errText(err))
			return nil
		}
	}
}

func (w *walker) entry(r Root, dir string, e fs.DirEntry) error {
	name := e.Name()
	if strings.HasPrefix(name, TempPrefix) {
		return nil
	}
	full := filepath.Join(dir, name)
	t := e.Type()
	if t&fs.ModeSymlink != 0 {
		fi, err := os.Stat(full)
		if isLinkLoop(err) {
			w.report(full, w.source(r, full), CodeSymlinkCycle, SeverityWarning, "symbolic link that leads back to itself: not followed")
			return nil
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if IsSessionName(name) || r.Recursive {
					w.report(full, w.source(r, full), CodeBrokenLink, SeverityWarning, "symbolic link to a missing target")
				}
				return nil
			}
			w.report(full, w.source(r, full), CodeUnreadable, SeverityError, errText(err))
			return nil
		}
		if fi.IsDir() {
			if !r.Recursive || strings.HasSuffix(name, ".lock") {
				return nil
			}
			if id := statIDs(full, fi); r.Confine && !slices.Contains(w.ancestors, id) && !w.above[id] && !w.inRoot(full) {
				w.report(full, w.source(r, full), CodeLinkOutsideRoot, SeverityWarning, "directory link leads out of the root: not followed by a command that writes")
				return nil
			}
			return w.dir(r, full, fi)
		}
		if fi.Mode().IsRegular() && IsSessionName(name) {
			return w.file(r, full, fi)
		}
		return nil
	}
	if t.IsDir() {
		if !r.Recursive || strings.HasSuffix(name, ".lock") {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			w.report(full, w.source(r, full), CodeUnreadable, SeverityError, errText(err))
			return nil
		}
		return w.dir(r, full, fi)
	}
	if !t.IsRegular() || !IsSessionName(name) {
		return nil
	}
	fi, err := e.Info()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since the directory was read
		}
		w.report(full, w.source(r, full), CodeUnreadable, SeverityError, errText(err))
		return nil
	}
	return w.file(r, full, fi)
}

// inRoot reports whether the directory at path, links resolved, lies
// inside the current root.
func (w *walker) inRoot(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(w.rootReal, real)
	return err == nil && filepath.IsLocal(rel)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
