package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/pipeline"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// Results of importing one source file (the "result" of `import --json`).
const (
	ResultImported        = "imported"         // written to the store as a new v4 file (or, with --dry-run, would be)
	ResultAlreadyImported = "already_imported" // the store holds this session with the same entries (or more: see Reason)
	ResultUpdated         = "updated"          // the store's copy was replaced atomically: see Reason
	ResultConflict        = "conflict"         // the store, or another source, holds this id with different entries: nothing written
	ResultDuplicate       = "duplicate"        // the same session, handled from another source file (DuplicateOf)
	ResultSkipped         = "skipped"          // not importable: Reason is its validate status, or a migrate reason
	ResultFailed          = "failed"           // an error stopped the import of this file; the store is unchanged for it
)

// Reasons that go with the results above (besides validate statuses and
// the upgrade.Reason* strings for skipped files).
const (
	ReasonSourceExtends  = "source_extends_target" // updated: the source grew since it was imported
	ReasonTargetUpgraded = "target_upgraded"       // updated: the store held the same entries in an older format; upgraded in place
	ReasonTargetExtends  = "target_extends_source" // already_imported: the store's copy continues the source (the user went on in Atomic)
	ReasonEntriesDiffer  = "entries_differ"        // conflict: same id, different entries
	ReasonHeaderDiffers  = "header_differs"        // conflict: same id and entries, different header values
	ReasonTargetInvalid  = "target_invalid"        // conflict: the store's file with this id does not load
	ReasonPathTaken      = "target_path_taken"     // conflict: the file name the copy needs holds another session
	ReasonInTarget       = "in_target"             // skipped: the source file is inside the target store
	ReasonArchived       = "archived"              // skipped: an OpenClaw reset/deleted archive (see skipDetail)
	ReasonUnusableID     = "unusable_id"           // skipped: the session id cannot be part of a file name
	ReasonChanged        = "changed_during_import" // failed: the source or the store's copy kept changing while it was read
	ReasonLocked         = "locked"                // failed: the agent holds the store's copy
	ReasonError          = "error"                 // failed: an I/O or other error, see Detail
)

// Options configures [Run].
type Options struct {
	Sources []ingest.Root // where to look for sessions to import
	Target  string        // the Atomic store directory (e.g. ~/.atomic/agent/sessions)
	Flat    bool          // write every session directly into Target instead of per-cwd directories
	Workers int
	DryRun  bool
	// RunsDir is where run directories (journal, backups of replaced
	// files) are created; StateDir holds sessions-etl's advisory locks.
	RunsDir  string
	StateDir string
	LockWait time.Duration   // how long to wait for the agent's lock on a store file being replaced
	Lock     fstx.LockConfig // zero: fstx.DefaultLockConfig
	// Repair and KeepUnresolvedParent: see upgrade.PlanOptions. Repairs are
	// applied to the copy, never to the source.
	Repair               bool
	KeepUnresolvedParent bool
	Now                  func() time.Time
	// Progress, when set, is called with the byte size of each source file done.
	Progress func(int64)
}

// RemovedKept is where the bytes an import's repair leaves out of the copy
// remain: the source is never modified, and an import backs up only the
// store files it replaces.
const RemovedKept = "the source file keeps it"

// Result is what happened to one source file.
type Result struct {
	Path        string           `json:"path"`
	Source      string           `json:"source"`
	SessionID   string           `json:"session_id,omitempty"`
	Result      string           `json:"result"`
	Reason      string           `json:"reason,omitempty"`
	Detail      string           `json:"detail,omitempty"`
	Target      string           `json:"target,omitempty"`       // the store file the session is (or would be) in
	DuplicateOf string           `json:"duplicate_of,omitempty"` // duplicate: the source file imported instead
	FromVersion int              `json:"from_version,omitempty"`
	EarlyV4     bool             `json:"early_v4,omitempty"`
	Changes     []upgrade.Change `json:"changes,omitempty"`
	Repairs     []upgrade.Change `json:"repairs,omitempty"`
	Notes       []upgrade.Change `json:"notes,omitempty"`
	Size        int64            `json:"size_bytes"`
}

// Failed reports whether the result makes `import` exit 1: a conflict, a
// failure, or a file skipped for an error (an empty file, or a file that
// is already inside the store, is fine).
func (r Result) Failed() bool {
	switch r.Result {
	case ResultConflict, ResultFailed:
		return true
	case ResultSkipped:
		switch r.Reason {
		case string(validate.StatusEmpty), ReasonInTarget, ReasonArchived, ingest.CodeArchiveMember, ingest.CodeBrokenLink, ingest.CodeSymlinkCycle, ingest.CodeNotASessionFile:
			return false // nothing to import, nothing the user must fix
		}
		return true
	}
	return false
}

// Wrote reports whether the result changed the store.
func (r Result) Wrote() bool { return r.Result == ResultImported || r.Result == ResultUpdated }

// Summary counts the results of a run.
type Summary struct {
	Files        int                       `json:"files"`
	Bytes        int64                     `json:"bytes"`
	ByResult     map[string]int            `json:"by_result"`
	Failed       int                       `json:"files_not_imported"`
	DryRun       bool                      `json:"dry_run"`
	TempsRemoved int                       `json:"stale_temp_files_removed"`
	ByReason     map[string]int            `json:"by_reason"`
	BySource     map[string]map[string]int `json:"by_source"` // source → result → files
	RunID        string                    `json:"run_id,omitempty"`
	RunDir       string                    `json:"run_dir,omitempty"`
	Target       string                    `json:"target"`
	Elapsed      time.Duration             `json:"-"`
}

// DefaultSources returns the default import sources under home: the pi and
// Prime roots of SPEC.md §1.1 that exist (not Atomic's: that is the store).
func DefaultSources(home string) []ingest.Root {
	var out []ingest.Root
	for _, r := range ingest.DefaultRoots(home) {
		if r.Source == ingest.SourcePi || r.Source == ingest.SourcePrime {
			out = append(out, r)
		}
	}
	return out
}

// DefaultTarget returns the default store, ~/.atomic/agent/sessions.
func DefaultTarget(home string) string {
	return filepath.Join(home, ".atomic", "agent", "sessions")
}

// srcFile is one discovered source file (or a discovery problem).
type srcFile struct {
	file     ingest.File
	id       string // header session id, "" when unreadable
	issue    *ingest.PathIssue
	inTarget bool
	skip     string // ReasonArchived: not imported
	slot     bool   // an oh-my-pi file opening with its title slot
	notes    []upgrade.Change
}

// group is the source files that share a session id (or one file without
// an id), handled together by one worker.
type group struct {
	id      string
	members []*srcFile
}

// Run imports every session file under opts.Sources into opts.Target. It
// scans the store's headers, discovers and groups the sources by session
// id, then handles the groups in parallel. emit receives one result per
// source file: groups in order of their first file's discovery, the files
// of a group in discovery order.
func Run(ctx context.Context, opts Options, emit func(Result) error) (Summary, error) {
	start := time.Now()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lock == (fstx.LockConfig{}) {
		opts.Lock = fstx.DefaultLockConfig
	}
	sum := Summary{ByResult: map[string]int{}, ByReason: map[string]int{}, BySource: map[string]map[string]int{}, DryRun: opts.DryRun}
	if opts.Target == "" {
		return sum, errors.New("import: no target directory")
	}
	target, err := filepath.Abs(opts.Target)
	if err != nil {
		return sum, fmt.Errorf("target %s: %w", opts.Target, err)
	}
	sum.Target = target
	if st, err := os.Stat(target); err == nil && !st.IsDir() {
		return sum, fmt.Errorf("target %s is not a directory", target)
	}

	// Phase 1: the store's headers (id → files).
	store, err := scanStore(ctx, target)
	if err != nil {
		return sum, err
	}
	ix := upgrade.NewParentIndex()
	for id, paths := range store.byID {
		for _, p := range paths {
			ix.Add(p, id)
		}
	}

	// Phase 2: discover the sources, read their headers, group by id.
	var groups []*group
	byID := map[string]*group{}
	err = ingest.Discover(ctx, opts.Sources, func(f ingest.File) error {
		sf := &srcFile{file: f}
		if f.Archive == "" && (store.files[devIno{f.Dev, f.Ino}] || within(target, f.Path)) {
			sf.inTarget = true
			groups = append(groups, &group{members: []*srcFile{sf}})
			return nil
		}
		if f.Kind.Archived {
			sf.skip = ReasonArchived
			groups = append(groups, &group{members: []*srcFile{sf}})
			return nil
		}
		id, slot, ok := readHeaderID(f)
		sf.slot = slot
		if ok {
			sf.id = id
			ix.Add(f.Path, id)
			if g := byID[id]; g != nil {
				g.members = append(g.members, sf)
				return nil
			}
			g := &group{id: id, members: []*srcFile{sf}}
			byID[id] = g
			groups = append(groups, g)
			return nil
		}
		groups = append(groups, &group{members: []*srcFile{sf}})
		return nil
	}, func(pi ingest.PathIssue) {
		groups = append(groups, &group{members: []*srcFile{{issue: &pi}}})
	})
	if err != nil {
		return sum, err
	}
	groups = attachMemberNotes(groups)

	// Phase 3: the groups, in parallel. A real run first removes the
	// temporary files an interrupted run left in the store.
	im := &importer{opts: opts, target: target, store: store, ix: ix}
	if !opts.DryRun {
		for _, dir := range store.dirs {
			removed, _ := fstx.CleanStaleTemps(dir)
			sum.TempsRemoved += len(removed)
		}
		run, err := fstx.StartRun(opts.RunsDir, fstx.NewRunID(opts.Now()), true)
		if err != nil {
			return sum, err
		}
		defer func() { _ = run.Close() }() // a run that journaled nothing leaves no directory
		im.run = run
		if err := run.RecordRoots([]string{target}, opts.Now().UTC()); err != nil {
			return sum, err
		}
		sum.RunID, sum.RunDir = run.ID, run.Dir
	}

	workers := max(opts.Workers, 1)
	err = pipeline.Ordered(ctx, workers, workers*32,
		func(ctx context.Context, yield func(*group) error) error {
			for _, g := range groups {
				if err := yield(g); err != nil {
					return err
				}
			}
			return nil
		},
		func(ctx context.Context, _ int, g *group) ([]Result, error) {
			rs := im.group(ctx, g)
			if err := ctx.Err(); err != nil {
				return rs, err
			}
			if opts.Progress != nil {
				for _, m := range g.members {
					opts.Progress(m.file.Size)
				}
			}
			return rs, nil
		},
		func(rs []Result) error {
			for _, r := range rs {
				sum.add(r)
				if err := emit(r); err != nil {
					return err
				}
			}
			return nil
		})
	im.removeEmptyDirs()
	sum.Elapsed = time.Since(start)
	if im.run != nil && im.run.Empty() {
		sum.RunID, sum.RunDir = "", ""
	}
	return sum, err
}

// attachMemberNotes turns the warnings about an archive member that is
// read all the same (a name with ".." or a leading "/", shown cleaned)
// into notes of that member's result, so that it is listed once.
func attachMemberNotes(groups []*group) []*group {
	files := map[string]*srcFile{}
	for _, g := range groups {
		for _, m := range g.members {
			if m.issue == nil && m.file.Archive != "" {
				files[m.file.Path] = m
			}
		}
	}
	if len(files) == 0 {
		return groups
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g.members) == 1 {
			if is := g.members[0].issue; is != nil && is.Issue.Severity != ingest.SeverityError {
				if sf := files[is.Path]; sf != nil {
					sf.notes = append(sf.notes, upgrade.Change{What: is.Issue.Message})
					continue
				}
			}
		}
		out = append(out, g)
	}
	return out
}

func (s *Summary) add(r Result) {
	s.Files++
	s.Bytes += r.Size
	s.ByResult[r.Result]++
	if r.Reason != "" {
		s.ByReason[r.Reason]++
	}
	src := r.Source
	if src == "" {
		src = ingest.SourceCustom
	}
	if s.BySource[src] == nil {
		s.BySource[src] = map[string]int{}
	}
	s.BySource[src][r.Result]++
	if r.Failed() {
		s.Failed++
	}
}

// Sources returns the source labels of the summary in a stable order.
func (s *Summary) Sources() []string {
	out := make([]string, 0, len(s.BySource))
	for k := range s.BySource {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// skipDetail says why a source file is not imported (SPEC.md §7.2).
// OpenClaw's archives are read by validate, export and report (their
// records were billed) but never imported: a reset archive is an earlier
// epoch under the live session's id (the store holds one session per id,
// so importing it would replace the live session's copy or conflict with
// it), and a deleted archive is a session the user deleted (importing it
// would bring it back into the agent's session list). Compressed files,
// archive members and omp files are imported (see content.go).
var skipDetail = map[string]string{
	ReasonArchived: "an OpenClaw reset/deleted archive: not imported (a reset archive is an earlier epoch under the live session's id, a deleted one a session the user deleted); validate, export and report count its records",
}

// within reports whether path is dir or lies below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// importer holds what the workers share.
type importer struct {
	opts   Options
	target string
	store  *store
	ix     *upgrade.ParentIndex
	run    *fstx.RunDir // nil in a dry run

	dirMu    sync.Mutex // serializes directory creation (and its record)
	madeDirs []string   // directories created, parents first
}
