package export

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/pipeline"
	"github.com/sessions-etl/sessions-etl/internal/userdirs"
	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/queries"
	"github.com/sessions-etl/sessions-etl/validate"
)

// CostMode selects how cost_* columns are filled (SPEC.md §4 --cost).
type CostMode string

// Cost modes.
const (
	CostAuto      CostMode = "auto"      // recorded when present and non-zero for non-zero tokens, else calculated
	CostRecorded  CostMode = "recorded"  // usage.cost only
	CostCalculate CostMode = "calculate" // the price table only
)

// ParseCostMode checks a --cost value ("" is auto).
func ParseCostMode(s string) (CostMode, error) {
	switch CostMode(s) {
	case "", CostAuto:
		return CostAuto, nil
	case CostRecorded, CostCalculate:
		return CostMode(s), nil
	}
	return "", fmt.Errorf("unknown cost mode %q (want auto, recorded or calculate)", s)
}

// Mode says which tables an export keeps.
type Mode string

// Export modes.
const (
	// ModeFull keeps every table of SPEC.md §3 (Tables): the export.
	ModeFull Mode = "full"
	// ModeUsage keeps only what the reports read (UsageTables): files,
	// sessions, usage, ingest_issues and tool_uses, a compact table of the
	// tool call and result blocks, instead of entries and content_blocks.
	// It is how `report` ingests: much less to build, append and commit.
	// It writes no Parquet.
	ModeUsage Mode = "usage"
)

// ParseMode checks a mode name ("" is full).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeFull:
		return ModeFull, nil
	case ModeUsage:
		return ModeUsage, nil
	}
	return "", fmt.Errorf("unknown export mode %q (want full or usage)", s)
}

// usageSchemaVersion is the schema version a ModeUsage database records:
// not SchemaVersion, so that a sessions-etl from before the usage mode,
// which knows only SchemaVersion, rebuilds such a database instead of
// updating tables it does not have.
const usageSchemaVersion = 1000 + SchemaVersion

// SchemaVersionOf is the schema version a database of mode m written by
// this sessions-etl records (table _sessions_etl, key schema_version): a
// reader of a database it does not refresh compares it with the stored one.
func SchemaVersionOf(m Mode) int { return m.schemaVersion() }

func (m Mode) schemaVersion() int {
	if m == ModeUsage {
		return usageSchemaVersion
	}
	return SchemaVersion
}

// Tables returns the tables of a database of mode m.
func (m Mode) Tables() []*Table {
	if m == ModeUsage {
		return UsageTables
	}
	return Tables
}

// ErrUsageModeParquet is returned by Run for ModeUsage with a Parquet
// directory.
var ErrUsageModeParquet = errors.New("export: the usage mode writes a DuckDB database only, no Parquet")

// Progress receives what a run is doing. Methods are called from several
// goroutines.
type Progress interface {
	Phase(name string) // "reading", "deriving", "writing parquet"
	Add(bytes int64)   // bytes of session files read
}

// ProgressTotal is implemented by a Progress that shows how much is left:
// Grow is called, from another goroutine, with the size of each file that
// will be read (a separate walk that runs ahead of the reading), so the
// total is known long before the files are read.
type ProgressTotal interface {
	Grow(bytes int64)
}

type noProgress struct{}

func (noProgress) Phase(string) {}
func (noProgress) Add(int64)    {}

// Options configure [Run].
type Options struct {
	Roots   []ingest.Root
	Workers int // files parsed in parallel; < 1 means 1

	// DuckDBPath is the DuckDB database to write (the DuckDB sink). It is
	// also where the incremental state lives; without it the state is kept
	// in ParquetDir/_state.duckdb.
	DuckDBPath string
	// ParquetDir is the directory of the Parquet datasets (one directory
	// per table). Empty: no Parquet sink.
	ParquetDir string

	// Machine is the machine column of every row (SPEC.md §7.7; the
	// command's --machine, default the host name). A database made with
	// another machine name is rebuilt. With PartitionBy it names the
	// machine=NAME partition this export owns in ParquetDir.
	Machine string
	// PartitionBy selects the Parquet layout: "" (ParquetDir/<table>/part-…)
	// or a partitioned root shared by several machines (partition.go):
	// PartitionMachine, PartitionMonth, PartitionDay or PartitionSource.
	PartitionBy string
	// Private makes the Parquet directories 0700 and files 0600; otherwise
	// they are 0777 and 0666 less the umask (0755 and 0644 under 022).
	Private bool
	// WorkDir, with PartitionBy, is this machine's own directory outside
	// the shared root: the state database (without DuckDBPath) and the
	// unpartitioned datasets each run updates incrementally and the
	// partitions are made from. Required with PartitionBy.
	WorkDir string

	// Mode selects the tables ("" is ModeFull). A database made in another
	// mode is rebuilt: every file is read again.
	Mode      Mode
	NoContent bool // text and arguments_json are NULL (sizes stay); ModeUsage keeps no content anyway
	WithRaw   bool // entries.raw_json holds each record's JSON (ModeFull only)
	// SkipToolUses (ModeUsage only) leaves tool_uses empty when the
	// database is made or rebuilt, for reports that do not read it (a
	// tenth of a cold report); the database records it (no_tool_uses in
	// its state) and keeps it on later runs with SkipToolUses. A database
	// that has tool_uses keeps them; one without is rebuilt by a run
	// without SkipToolUses.
	SkipToolUses bool
	CostMode     CostMode // "" is auto
	// Prices is the price table for calculated costs (nil: pricing.Default()).
	// PricingID identifies it, so that a different table re-prices
	// everything; empty: derived from its Source and Retrieved date.
	Prices    *pricing.Table
	PricingID string

	Progress Progress
	// Allocator is used for the Arrow batches of the Parquet sink (nil:
	// memory.DefaultAllocator). Tests pass a checked allocator.
	Allocator memory.Allocator
	// MemoryLimit is DuckDB's memory_limit (default DefaultMemoryLimit).
	MemoryLimit string

	// Then, when set, is called once the run has committed, with the
	// database still open (a handle on the run's own DuckDB instance),
	// before Run closes it: `report` answers there instead of opening the
	// file again (a new instance that reads every table back from disk;
	// up to a tenth of a cold report). Run may call it again if it retries
	// (a DuckDB memory error after it). Its error is Run's.
	Then func(ctx context.Context, db *sql.DB) error
}

// DefaultMemoryLimit is DuckDB's memory limit during an export. DuckDB
// uses about twice as much while loading large strings. Measured on the
// 1 GB home, both sinks: 128 MB peaks some 40 MB higher in the same time;
// 64 MB some 40 MB lower but 10% slower (more spilled to disk).
const DefaultMemoryLimit = "96MB"

// exportRowGroupRows is the DuckDB row group size of a ModeFull export.
// DuckDB keeps the rows of a row group in memory until it is complete;
// its default, 122 880 rows, is some 350 MB of content_blocks text, which
// it spills to disk (compressed) and reads back. Smaller groups are written
// to the database as they fill (measured on the 1 GB home, DuckDB sink:
// peak RSS −40 MB and faster at 16 384 rows).
const exportRowGroupRows = 16384

// ErrNoSink is returned by Run when neither DuckDBPath nor ParquetDir is set.
var ErrNoSink = errors.New("export: no output: give a DuckDB file, a Parquet directory, or both")

// StateFileName is the state database kept in the Parquet directory when
// there is no DuckDB sink.
const StateFileName = "_state.duckdb"

// DefaultDBPath is the DuckDB database `report` and `query` use by default:
// sessions.duckdb in userdirs.CacheDir ($XDG_CACHE_HOME/sessions-etl on
// every system when set, else ~/.cache, ~/Library/Caches or
// %LOCALAPPDATA%).
func DefaultDBPath() (string, error) {
	dir := userdirs.CacheDir(userdirs.Current())
	if !filepath.IsAbs(dir) && filepath.VolumeName(dir) == "" && len(dir) > 0 && os.IsPathSeparator(dir[0]) {
		dir, _ = filepath.Abs(dir) // Windows: \x on the current drive
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("no cache directory for the default database: neither $XDG_CACHE_HOME (an absolute path) nor the home directory is known (%s)", dir)
	}
	return filepath.Join(dir, "sessions.duckdb"), nil
}

// TableCount is the row bookkeeping of one table.
type TableCount struct {
	Table   string `json:"table"`
	Rows    int64  `json:"rows"`    // rows after the run
	Added   int64  `json:"added"`   // rows inserted by the run
	Removed int64  `json:"removed"` // rows of changed or deleted files removed by the run
	Updated int64  `json:"updated"` // rows whose derived columns changed
}

// RejectedFile is a file whose records are not exported, or a path that
// could not be read at all (an unreadable directory, a non-regular file
// named as a root: Status "unreadable", no files row), with the first error
// that decided it (a row of the rejected_files view).
type RejectedFile struct {
	Path    string `json:"path"`
	Status  string `json:"status"`         // a files.status, or "unreadable" for a path
	Line    int    `json:"line,omitempty"` // 0: the whole file
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// RejectedListed is how many rejected files a Summary lists.
const RejectedListed = 5

// Summary describes a run.
type Summary struct {
	StatePath  string         `json:"state_path"`
	Mode       Mode           `json:"mode"`
	DuckDBPath string         `json:"duckdb_path,omitempty"`
	ParquetDir string         `json:"parquet_dir,omitempty"`
	Files      int            `json:"files"`     // session files found
	Read       int            `json:"read"`      // files read (new or changed)
	Unchanged  int            `json:"unchanged"` // files skipped: same path, size, mtime and inode
	Removed    int            `json:"removed"`   // files gone since the last export
	Kept       int            `json:"kept"`      // files not seen under a path that could not be read: rows kept (see run)
	BytesRead  int64          `json:"bytes_read"`
	ByStatus   map[string]int `json:"by_status"` // every current file
	// Rejected counts the files whose records are not exported (not a
	// session, unknown version, unreadable) and the paths that could not
	// be read (RejectedPaths): the rows of the rejected_files view. Any of
	// them makes `export` and `report` exit 1, as `validate` does.
	Rejected int `json:"rejected"`
	// RejectedPaths counts the rejected paths that have no files row:
	// path-level issues of severity error found by discovery (an
	// unreadable directory, a file that could not be stat'ed, a
	// non-regular file named as a root), stored in ingest_issues with a
	// NULL file_id. They are part of Rejected, not of Files or ByStatus.
	RejectedPaths int `json:"rejected_paths"`
	// RejectedFiles are the first RejectedListed of them by path (all of
	// them: the rejected_files view).
	RejectedFiles []RejectedFile `json:"rejected_files,omitempty"`
	// PathIssues counts the issues discovery found this run (every
	// severity: broken links and link cycles are warnings, unreadable
	// paths errors); they are ingest_issues rows with a NULL file_id.
	PathIssues int          `json:"path_issues"`
	Tables     []TableCount `json:"tables"`
	Changed    bool         `json:"changed"`
	// Rebuilt says why every file was read again ("" when the run was
	// incremental): "new database", "schema version", "mode", "content
	// options", "pricing" or "parquet".
	Rebuilt       string   `json:"rebuilt,omitempty"`
	ParquetTables []string `json:"parquet_tables"` // datasets (re)written
	ElapsedMS     int64    `json:"elapsed_ms"`
	// MemoryRetries counts the runs that ran out of DuckDB memory before
	// this one finished, with MemoryLimit (see Run).
	MemoryRetries int    `json:"memory_retries,omitempty"`
	MemoryLimit   string `json:"memory_limit,omitempty"`
}

func (o *Options) pricingID() string {
	if o.PricingID != "" {
		return o.PricingID
	}
	return "table:" + o.Prices.Source + "@" + o.Prices.Retrieved
}

func viewsHash(mode Mode) string {
	h := sha256.New()
	if mode != ModeFull {
		fmt.Fprintf(h, "%s\x00", mode)
	}
	for _, v := range modeViews(mode) {
		fmt.Fprintf(h, "%s\x00%s\x00", v.Name, v.SQL)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// runOnce is one export run (Run retries it with more memory): it exports
// the session files under opts.Roots into the DuckDB database
// and/or the Parquet datasets, incrementally: files whose path, size,
// mtime and inode are those of the last export are not read again; the
// rows of changed files are replaced and those of deleted files removed.
// The database changes in one transaction, so a failed run leaves the
// previous export as it was. The derived columns that depend on several
// files (fork copies, counted usage, parents) are recomputed with SQL.
func runOnce(ctx context.Context, opts Options) (Summary, error) {
	start := time.Now()
	if opts.DuckDBPath == "" && opts.ParquetDir == "" {
		return Summary{}, ErrNoSink
	}
	mode, err := ParseMode(string(opts.Mode))
	if err != nil {
		return Summary{}, err
	}
	opts.Mode = mode
	if mode == ModeUsage {
		if opts.ParquetDir != "" {
			return Summary{}, ErrUsageModeParquet
		}
		opts.NoContent, opts.WithRaw = true, false
	}
	if opts.CostMode == "" {
		opts.CostMode = CostAuto
	}
	if _, err := ParseCostMode(string(opts.CostMode)); err != nil {
		return Summary{}, err
	}
	if opts.Prices == nil {
		opts.Prices = pricing.Default()
	}
	if opts.Progress == nil {
		opts.Progress = noProgress{}
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	opts.Workers = max(opts.Workers, 1)
	statePath := opts.DuckDBPath
	if statePath == "" {
		statePath = filepath.Join(opts.ParquetDir, StateFileName)
	}
	if statePath, err = filepath.Abs(statePath); err != nil {
		return Summary{}, err
	}
	if opts.ParquetDir != "" {
		if opts.ParquetDir, err = filepath.Abs(opts.ParquetDir); err != nil {
			return Summary{}, err
		}
		if err := os.MkdirAll(opts.ParquetDir, dirPerm()); err != nil {
			return Summary{}, fmt.Errorf("parquet %s: %w", opts.ParquetDir, err)
		}
	}
	memLimit := opts.MemoryLimit
	if memLimit == "" {
		memLimit = DefaultMemoryLimit
	}
	cfg := map[string]string{
		"threads":      strconv.Itoa(opts.Workers),
		"memory_limit": memLimit,
	}
	rowGroups := 0
	if opts.Mode == ModeUsage {
		// The report's database is a cache of a few narrow tables: stored
		// uncompressed, its commit takes half the time (0.21 -> 0.12 s
		// for a 1 GB home, about a tenth of a cold report) for a file
		// three times larger (58 MB instead of 20), and reports read it
		// as fast.
		cfg["force_compression"] = "uncompressed"
	}
	if opts.Mode == ModeFull {
		rowGroups = exportRowGroupRows
		// Write each row group of a bulk append as soon as it is full,
		// rather than gathering five: DuckDB spilled some 90 MB of them to
		// disk (and read them back) during a 1 GB export, 20 MB now, and
		// the export is 5-10% faster.
		cfg["write_buffer_row_group_count"] = "1"
	}
	if _, err := os.Lstat(statePath); errors.Is(err, fs.ErrNotExist) {
		if err := createDatabase(ctx, statePath); err != nil {
			return Summary{}, fmt.Errorf("duckdb %s: %w", statePath, err)
		}
	}
	st, err := openStore(ctx, statePath, cfg, rowGroups)
	if err != nil {
		return Summary{}, err
	}
	st.machine = opts.Machine
	r := &run{opts: opts, st: st, sum: Summary{StatePath: statePath, Mode: opts.Mode, DuckDBPath: opts.DuckDBPath, ParquetDir: opts.ParquetDir}}
	if opts.ParquetDir != "" {
		removeStaging(opts.ParquetDir) // leftovers of an interrupted run; the state database lock makes this run the only one
	}
	err = r.load(ctx)
	if err == nil && opts.ParquetDir != "" {
		opts.Progress.Phase("writing parquet")
		err = r.writeParquet(ctx)
	}
	if err == nil && opts.Then != nil {
		err = opts.Then(ctx, st.db)
	}
	if r.content != nil {
		r.content.discard()
	}
	if cerr := st.close(); err == nil {
		err = cerr
	}
	r.sum.ElapsedMS = time.Since(start).Milliseconds()
	return r.sum, err
}

// run is the state of one Run.
type run struct {
	opts Options
	st   *store
	meta meta
	sum  Summary

	// The Parquet content_blocks dataset (see content.go).
	content      *contentWriter // new parts of the files read; nil without a Parquet sink or blocks
	contentFull  bool           // rebuild the dataset from the new parts alone
	contentStale map[int64]bool // file ids whose blocks leave the dataset
}

// writeParquet brings the Parquet datasets up to date with the state.
func (r *run) writeParquet(ctx context.Context) error {
	newParts := ""
	if r.content != nil {
		if err := r.content.finish(); err != nil {
			return fmt.Errorf("parquet %s: %w", filepath.Join(r.opts.ParquetDir, TableContentBlocks), err)
		}
		newParts = r.content.dir
	}
	res, err := writeParquetSink(ctx, r.st, r.opts.ParquetDir, r.meta, r.opts,
		contentUpdate{newParts: newParts, stale: r.contentStale, full: r.contentFull})
	if err != nil {
		return err
	}
	r.sum.ParquetTables = res.tables
	if r.opts.DuckDBPath == "" {
		// Without a DuckDB sink the blocks live only in Parquet.
		rows := res.contentRows
		if rows < 0 {
			if rows, err = datasetRows(filepath.Join(r.opts.ParquetDir, TableContentBlocks)); err != nil {
				return fmt.Errorf("parquet %s: %w", filepath.Join(r.opts.ParquetDir, TableContentBlocks), err)
			}
		}
		for i := range r.sum.Tables {
			if tc := &r.sum.Tables[i]; tc.Table == TableContentBlocks {
				tc.Rows, tc.Removed = rows, res.contentRemoved
			}
		}
	}
	return nil
}

// removeStaging removes what an interrupted run left in the Parquet
// directory.
func removeStaging(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if isStagingName(e.Name()) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	_, _ = fstx.CleanStaleTemps(dir) // a marker's temporary file
}

type item struct {
	file    ingest.File
	openErr error // the file looked unchanged but could not be opened (stillReadable)
}

// stillReadable checks that a file that looks unchanged since the last
// export (same path, size, mtime and inode) can still be opened: one whose
// mode became 000 is rejected as unreadable, as a fresh export and
// validate reject it. An open and close: about 15 ms more on an unchanged
// re-run over a home of 2 000 files. Tests replace it: root opens any file.
var stillReadable = func(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// discover walks the roots (ingest.Discover). Tests replace it to inject
// path issues that a process running as root cannot provoke (a directory
// it cannot open).
var discover = ingest.Discover

// rebuildReason says why the database is rebuilt from scratch ("" when it
// is brought up to date incrementally): no previous state (ok false), or
// a mode, schema, content option, tool_uses, pricing or machine that
// differs from cur, or a Parquet content dataset that is not the one the
// state describes (first export to this directory, a failed or
// interrupted write): then every file is read again.
func rebuildReason(prev meta, ok bool, cur meta, opts Options) string {
	switch {
	case !ok:
		return "new database"
	case prev.mode != cur.mode:
		return "mode"
	case prev.schemaVersion != cur.schemaVersion:
		return "schema version"
	case prev.noContent != cur.noContent || prev.withRaw != cur.withRaw:
		return "content options"
	case prev.noToolUses && !opts.SkipToolUses:
		return "tool_uses"
	case prev.pricing != cur.pricing:
		return "pricing"
	case prev.machine != cur.machine:
		return "machine"
	case opts.ParquetDir != "":
		mk := readMarker(opts.ParquetDir)
		fi, err := os.Stat(filepath.Join(opts.ParquetDir, TableContentBlocks))
		if mk == nil || mk.SchemaVersion != SchemaVersion || mk.Tables[TableContentBlocks] != prev.tableGen[TableContentBlocks] ||
			err != nil || !fi.IsDir() {
			return "parquet"
		}
	}
	return ""
}

// countBytes starts the walk behind a bar with a total: a second walk, of
// directories and stats only, runs ahead of the reading one (which
// discovery feeds a few files at a time) and announces the bytes of the
// files to read (new or changed against known). The returned wait ends
// it: at once when failed (the total no longer matters), else when it has
// walked everything.
func countBytes(ctx context.Context, roots []ingest.Root, known map[string]fileState, g ProgressTotal) (wait func(failed bool)) {
	countCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		counting := make([]ingest.Root, len(roots))
		for i, r := range roots {
			r.CountOnly = true // never disturbs the reading walk's archives
			counting[i] = r
		}
		_ = discover(countCtx, counting, func(f ingest.File) error {
			if k, ok := known[f.Path]; !ok || k.size != f.Size || k.mtime != f.ModTime.UnixMicro() || k.inode != int64(f.Ino) {
				g.Grow(f.Size)
			}
			return nil
		}, func(ingest.PathIssue) {})
	}()
	return func(failed bool) {
		if failed {
			cancel()
		}
		<-done
		cancel()
	}
}

// loadState is what one load finds out, phase by phase: what the
// database held (prev, known), what it will hold (cur), and what the run
// read, removed and changed.
type loadState struct {
	prev           meta
	ok             bool // the database had a state (prev)
	cur            meta
	full           bool                 // rebuilt from nothing
	known          map[string]fileState // the files the database holds, by path
	maxID          int64
	prevPathIssues map[string]bool
	ld             *loader
	unchanged      map[string]bool
	pathIssues     []ingest.PathIssue
	dirty          map[string]bool  // tables whose contents change
	removed        map[string]int64 // rows deleted per table
	updated        map[string]int64 // rows the derive statements changed per table
	modeChanged    bool             // a new --cost mode re-costs the rows there
}

// load brings the database up to date with the files, in one transaction:
// plan (what the database holds and whether to rebuild it), read the new
// and changed files into it, sweep the files gone, derive, and record the
// new state.
func (r *run) load(ctx context.Context) (err error) {
	st := r.st
	ls, err := r.plan(ctx)
	if err != nil {
		return err
	}
	if _, err := st.exec(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			if _, rerr := st.exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	if ls.full {
		if err := st.createSchema(ctx, r.opts.Mode); err != nil {
			return err
		}
		for _, t := range r.opts.Mode.Tables() {
			ls.dirty[t.Name] = true
		}
		ls.cur.viewsHash = ""
	}
	if err := r.read(ctx, ls); err != nil {
		return err
	}
	r.opts.Progress.Phase("deriving")
	if err := r.sweep(ctx, ls); err != nil {
		return err
	}
	if err := r.deriveAll(ctx, ls); err != nil {
		return err
	}
	if err := r.record(ctx, ls); err != nil {
		return err
	}
	if _, err := st.exec(ctx, "COMMIT"); err != nil {
		return err
	}
	committed = true
	if r.sum.Changed {
		if _, err := st.exec(ctx, "CHECKPOINT"); err != nil {
			return err
		}
	}
	return nil
}

// plan reads the database's state and decides what this run does: rebuild
// (r.sum.Rebuilt says why) or bring the files it knows up to date.
func (r *run) plan(ctx context.Context) (*loadState, error) {
	st, opts := r.st, r.opts
	prev, ok, err := st.loadMeta(ctx)
	if err != nil {
		return nil, err
	}
	mode := opts.Mode
	ls := &loadState{prev: prev, ok: ok, known: map[string]fileState{}, dirty: map[string]bool{},
		removed: map[string]int64{}, updated: map[string]int64{}, unchanged: map[string]bool{}}
	ls.cur = meta{schemaVersion: mode.schemaVersion(), mode: mode, noContent: opts.NoContent, withRaw: opts.WithRaw,
		costMode: string(opts.CostMode), pricing: opts.pricingID(), viewsHash: viewsHash(mode), tableGen: map[string]int64{},
		roots: rootPaths(opts.Roots), machine: opts.Machine}
	r.sum.Rebuilt = rebuildReason(prev, ok, ls.cur, opts)
	ls.full = r.sum.Rebuilt != ""
	r.contentFull = ls.full
	ls.cur.noToolUses = mode == ModeUsage && opts.SkipToolUses && (ls.full || prev.noToolUses)
	if ok {
		ls.cur.generation = prev.generation
		for k, v := range prev.tableGen {
			ls.cur.tableGen[k] = v
		}
	}
	if !ls.full {
		if ls.known, ls.maxID, err = st.loadFiles(ctx); err != nil {
			return nil, err
		}
		if ls.prevPathIssues, err = r.pathIssueSet(ctx); err != nil {
			return nil, err
		}
	}
	return ls, nil
}

// read reads the new and changed files in parallel and loads them in
// discovery order (ls.ld); unchanged files are only noted.
func (r *run) read(ctx context.Context, ls *loadState) (err error) {
	opts, mode := r.opts, r.opts.Mode
	ld, err := newLoader(r.st, ls.maxID, mode.Tables(), opts.DuckDBPath != "")
	if err != nil {
		return err
	}
	ls.ld = ld
	if opts.ParquetDir != "" {
		ld.newContent = func() (*contentWriter, error) {
			cw, err := newContentWriter(opts.ParquetDir, ls.cur.generation+1, opts.Machine, opts.Allocator)
			if err != nil {
				return nil, fmt.Errorf("parquet %s: %w", filepath.Join(opts.ParquetDir, TableContentBlocks), err)
			}
			r.content = cw
			return cw, nil
		}
	}
	defer ld.finish()
	xopts := &extractOptions{usageOnly: mode == ModeUsage, noTools: ls.cur.noToolUses, noContent: opts.NoContent, withRaw: opts.WithRaw,
		prices: opts.Prices, costMode: opts.CostMode}
	readers := make([]*ingest.Reader, opts.Workers)
	extractors := make([]*extractor, opts.Workers)
	for i := range readers {
		// Depth 6: a subagent roll-up names its children as deep as
		// message.details.results[].session.path, a tool call as
		// message.content[].arguments.sessionFile (SPEC.md §7.3).
		readers[i] = &ingest.Reader{MaxDepth: maxRecordDepth}
		extractors[i] = newExtractor(xopts)
	}
	// Files in flight per worker: the results wait in discovery order
	// for the loader, so one large file holds the others back. Usage-mode
	// results are a few narrow rows per file; a longer window keeps both
	// workers busy behind a large one (about 4% of a cold report).
	window := 2
	if mode == ModeUsage {
		window = 16
	}
	opts.Progress.Phase("reading")
	if g, ok := opts.Progress.(ProgressTotal); ok {
		// The walk ends before load returns: nothing of this run touches
		// the bar, or the discover seam, once Run has returned.
		wait := countBytes(ctx, opts.Roots, ls.known, g)
		defer func() { wait(err != nil) }()
	}
	err = pipeline.Ordered(ctx, opts.Workers, opts.Workers*window,
		func(ctx context.Context, yield func(item) error) error {
			return discover(ctx, opts.Roots, func(f ingest.File) error {
				return r.discovered(ls, f, yield)
			}, func(pi ingest.PathIssue) { ls.pathIssues = append(ls.pathIssues, pi) })
		},
		func(ctx context.Context, w int, it item) (*fileResult, error) {
			x := extractors[w]
			x.reset(it.file)
			if it.openErr != nil {
				fr := x.finish()
				fr.unreadable(it.openErr)
				return fr, nil
			}
			if _, err := readers[w].ReadFile(ctx, it.file.Path, x); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				fr := x.finish()
				fr.unreadable(err)
				return fr, nil
			}
			fr := x.finish()
			opts.Progress.Add(it.file.Size)
			return fr, nil
		},
		func(fr *fileResult) error {
			r.sum.Read++
			r.sum.BytesRead += fr.file.Size
			if k, ok := ls.known[fr.file.Path]; ok {
				ld.stale = append(ld.stale, k.id)
			}
			return ld.add(ctx, fr)
		})
	if err != nil {
		return err
	}
	return ld.finish()
}

// discovered passes a found file on to be read, unless the database holds
// it unchanged (same size, mtime and inode, and still readable).
func (r *run) discovered(ls *loadState, f ingest.File, yield func(item) error) error {
	k, ok := ls.known[f.Path]
	if !ok || k.status == string(validate.StatusUnreadable) ||
		k.size != f.Size || k.mtime != f.ModTime.UnixMicro() || k.inode != int64(f.Ino) {
		return yield(item{file: f})
	}
	on := f.Path
	if f.Archive != "" {
		// A member: discovery just read its archive, and its
		// digest (inode) is unchanged.
		on = f.Archive
	}
	err := stillReadable(on)
	if err == nil {
		ls.unchanged[f.Path] = true
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return yield(item{file: f, openErr: err})
	}
	return nil // removed since it was found: its rows go with the other removed files'
}

// sweep deletes the rows of the files read again and of the files gone,
// and replaces the path issues; it marks the tables that change.
func (r *run) sweep(ctx context.Context, ls *loadState) (err error) {
	ld := ls.ld
	r.sum.Unchanged = len(ls.unchanged)
	unreadableDirs := unreadablePaths(ls.pathIssues)
	for path, k := range ls.known {
		if !ls.unchanged[path] && !ld.read[path] {
			if under(path, unreadableDirs) {
				// Not seen, but not known to be gone: a directory above
				// it (or a default root) could not be read. Its rows are
				// kept as they were, the directory is rejected (exit 1),
				// and it is compared as usual once it can be read again
				// (README, Rules chosen). A new database has no rows for it.
				r.sum.Kept++
				continue
			}
			ld.stale = append(ld.stale, k.id)
			r.sum.Removed++
		}
	}
	tables := r.opts.Mode.Tables()
	if len(ld.stale) > 0 {
		if ls.removed, err = r.deleteFiles(ctx, tables, ld.stale); err != nil {
			return err
		}
	}
	pathChanged, pathAdded, pathRemoved, err := r.replacePathIssues(ctx, ls.pathIssues, ls.prevPathIssues, ls.full)
	if err != nil {
		return err
	}
	ld.added[TableIngestIssues] += pathAdded
	ls.removed[TableIngestIssues] += pathRemoved
	r.sum.PathIssues = len(ls.pathIssues)
	for _, t := range tables {
		if ld.added[t.Name] > 0 || ls.removed[t.Name] > 0 {
			ls.dirty[t.Name] = true
		}
	}
	r.contentStale = map[int64]bool{}
	for _, id := range ld.stale {
		r.contentStale[id] = true
	}
	if len(ld.stale) > 0 && r.opts.Mode == ModeFull {
		ls.dirty[TableContentBlocks] = true // the Parquet dataset loses the blocks of these files
	}
	if pathChanged {
		ls.dirty[TableIngestIssues] = true
	}
	return nil
}

// deriveAll runs the derive statements when the files changed, re-costs
// the rows under a new --cost mode, and (re)creates the views.
func (r *run) deriveAll(ctx context.Context, ls *loadState) (err error) {
	opts := r.opts
	filesChanged := ls.ld.added[TableFiles] > 0 || ls.removed[TableFiles] > 0
	ls.modeChanged = ls.ok && !ls.full && ls.prev.costMode != ls.cur.costMode
	if filesChanged || ls.full {
		if ls.updated, err = r.derive(ctx, opts.Mode, opts.CostMode); err != nil {
			return err
		}
	}
	if ls.modeChanged {
		// New rows are costed as they are read (costOf); a new --cost mode
		// re-costs the rows already there.
		n, err := r.st.exec(ctx, queries.Export("apply_cost_mode"), string(opts.CostMode), true)
		if err != nil {
			return fmt.Errorf("apply_cost_mode: %w", err)
		}
		ls.updated[TableUsage] += n
	}
	for t, n := range ls.updated {
		if n > 0 {
			ls.dirty[t] = true
		}
	}
	if ls.prev.viewsHash != ls.cur.viewsHash || ls.full {
		if err := r.st.createViews(ctx, opts.Mode); err != nil {
			return err
		}
		ls.cur.viewsHash = viewsHash(opts.Mode)
	}
	return nil
}

// record saves the new state (generations of the tables that changed) and
// the run's counts.
func (r *run) record(ctx context.Context, ls *loadState) error {
	cur := &ls.cur
	r.sum.Changed = len(ls.dirty) > 0 || ls.full || ls.modeChanged || ls.prev.viewsHash != cur.viewsHash
	if len(ls.dirty) > 0 {
		cur.generation++
		for t := range ls.dirty {
			cur.tableGen[t] = cur.generation
		}
	}
	if r.sum.Changed || !ls.ok || !slices.Equal(ls.prev.roots, cur.roots) {
		if err := r.st.saveMeta(ctx, *cur); err != nil {
			return err
		}
	}
	r.meta = *cur
	return r.counts(ctx, r.opts.Mode.Tables(), ls.ld.added, ls.removed, ls.updated)
}

// rootPaths are the paths of roots, absolute, sorted and without repeats:
// what a database records of the files it was made from (DBInfo.Roots).
func rootPaths(roots []ingest.Root) []string {
	var out []string
	for _, r := range roots {
		p, err := filepath.Abs(r.Path)
		if err != nil {
			p = r.Path
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unreadablePaths are the paths discovery could not read (path issues of
// code unreadable, severity error): directories it could not open or
// list, roots it could not stat.
func unreadablePaths(issues []ingest.PathIssue) map[string]bool {
	out := map[string]bool{}
	for _, pi := range issues {
		if pi.Issue.Code == ingest.CodeUnreadable && pi.Issue.Severity == ingest.SeverityError {
			out[pi.Path] = true
		}
	}
	return out
}

// under reports whether one of the directories above path is in dirs.
func under(path string, dirs map[string]bool) bool {
	if len(dirs) == 0 {
		return false
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if dirs[d] {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// deleteFiles removes every row of the given file ids.
func (r *run) deleteFiles(ctx context.Context, tables []*Table, ids []int64) (map[string]int64, error) {
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	removed := map[string]int64{}
	for lo := 0; lo < len(ids); lo += 4096 {
		chunk := ids[lo:min(lo+4096, len(ids))]
		var b strings.Builder
		for i, id := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		for _, t := range tables {
			n, err := r.st.exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE file_id IN (%s)", t.Name, b.String()))
			if err != nil {
				return nil, err
			}
			removed[t.Name] += n
		}
	}
	return removed, nil
}

func pathIssueKey(path, code, msg string) string { return path + "\x00" + code + "\x00" + msg }

// pathIssueSet returns the path-level issues of the last export.
func (r *run) pathIssueSet(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := r.st.queryRows(ctx, "SELECT path, code, message FROM ingest_issues WHERE file_id IS NULL", func(v []driver.Value) error {
		out[pathIssueKey(v[0].(string), v[1].(string), v[2].(string))] = true
		return nil
	})
	return out, err
}

// replacePathIssues stores the discovery issues (broken links, link
// cycles, unreadable directories) when they differ from the last export's.
// They are found again by every run's discovery, so the stored ones are
// always those of the last run; the errors among them are rejected paths
// (the rejected_files view, Summary.RejectedPaths) until they go away.
// It returns whether it replaced them, and how many rows it inserted and
// deleted (counted in the summary's added and removed ingest_issues rows).
func (r *run) replacePathIssues(ctx context.Context, cur []ingest.PathIssue, prev map[string]bool, full bool) (changed bool, added, removed int64, err error) {
	same := !full && len(cur) == len(prev)
	if same {
		for _, pi := range cur {
			if !prev[pathIssueKey(pi.Path, pi.Issue.Code, pi.Issue.Message)] {
				same = false
				break
			}
		}
	}
	if same {
		return false, 0, 0, nil
	}
	if removed, err = r.st.exec(ctx, "DELETE FROM ingest_issues WHERE file_id IS NULL"); err != nil {
		return false, 0, 0, err
	}
	for _, pi := range cur {
		row := issueRow{lineNo: pi.Issue.Line, severity: string(pi.Issue.Severity), code: pi.Issue.Code, message: validString([]byte(pi.Issue.Message))}
		var vals []any
		for _, v := range row.values(nil, optInt{}, validString([]byte(pi.Path))) {
			vals = append(vals, v)
		}
		if _, err := r.st.exec(ctx, "INSERT INTO ingest_issues VALUES (?, ?, ?, ?, ?, ?, ?)", append(vals, r.st.machine)...); err != nil {
			return false, 0, 0, err
		}
		added++
	}
	return true, added, removed, nil
}

// derive recomputes the columns that depend on several files; the rest
// rows of roll-ups it changes are costed in costMode.
func (r *run) derive(ctx context.Context, mode Mode, costMode CostMode) (map[string]int64, error) {
	updated := map[string]int64{}
	steps := []struct{ name, table string }{
		{"session_order", ""},
		{"resolve_parents", TableSessions},
		{"derive_project_labels", TableSessions},
		{"derive_fork_copies", TableEntries},
		{"derive_tool_uses_fork_copy", TableToolUses},
		{"derive_rollups", TableUsage},
		{"derive_counted", TableUsage},
		{"derive_rollup_rest", TableUsage},
	}
	for _, s := range steps {
		if (mode == ModeUsage && s.table == TableEntries) || (mode == ModeFull && s.table == TableToolUses) {
			continue // each mode has one of entries and tool_uses
		}
		n, err := r.st.exec(ctx, queries.Export(s.name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		if s.table != "" {
			updated[s.table] += n
		}
	}
	// Rest rows derive_rollup_rest changed (cost_source '').
	if _, err := r.st.exec(ctx, queries.Export("apply_cost_mode"), string(costMode), false); err != nil {
		return nil, fmt.Errorf("apply_cost_mode: %w", err)
	}
	return updated, nil
}

// counts fills the per-table and per-status counts of the summary.
func (r *run) counts(ctx context.Context, tables []*Table, added, removed, updated map[string]int64) error {
	for _, t := range tables {
		tc := TableCount{Table: t.Name, Added: added[t.Name], Removed: removed[t.Name], Updated: updated[t.Name]}
		if err := r.st.queryRows(ctx, "SELECT count(*) FROM "+t.Name, func(v []driver.Value) error {
			tc.Rows = v[0].(int64)
			return nil
		}); err != nil {
			return err
		}
		r.sum.Tables = append(r.sum.Tables, tc)
	}
	r.sum.ByStatus = map[string]int{}
	if err := r.st.queryRows(ctx, "SELECT status, count(*) FROM files GROUP BY status", func(v []driver.Value) error {
		n := int(v[1].(int64))
		r.sum.ByStatus[v[0].(string)] = n
		r.sum.Files += n
		return nil
	}); err != nil {
		return err
	}
	rejected := viewSQL("rejected_files")
	// A rejected path has no files row (the view's second part).
	if err := r.st.queryRows(ctx, "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.path = r.path)) FROM ("+rejected+") r",
		func(v []driver.Value) error {
			r.sum.Rejected, r.sum.RejectedPaths = int(v[0].(int64)), int(v[1].(int64))
			return nil
		}); err != nil || r.sum.Rejected == 0 {
		return err
	}
	return r.st.queryRows(ctx, "SELECT path, status, line_no, code, message FROM ("+rejected+") ORDER BY path LIMIT "+strconv.Itoa(RejectedListed),
		func(v []driver.Value) error {
			f := RejectedFile{Path: v[0].(string), Status: v[1].(string)}
			if n, ok := v[2].(int32); ok {
				f.Line = int(n)
			}
			f.Code, _ = v[3].(string)
			f.Message, _ = v[4].(string)
			r.sum.RejectedFiles = append(r.sum.RejectedFiles, f)
			return nil
		})
}

// viewSQL is the SELECT of the view name of queries/views.sql.
func viewSQL(name string) string {
	for _, v := range queries.Views() {
		if v.Name == name {
			return v.SQL
		}
	}
	panic("export: no view " + name)
}

// unreadable turns a result into that of a file that could not be read:
// no rows, status unreadable and the read error as an issue.
func (fr *fileResult) unreadable(err error) {
	fr.session, fr.entries, fr.blocks, fr.tools, fr.usage = nil, nil, nil, nil, nil
	fr.res.Status = validate.StatusUnreadable
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg = pe.Op + ": " + pe.Err.Error()
	}
	fr.issues = append(fr.issues, issueRow{severity: string(ingest.SeverityError), code: ingest.CodeUnreadable, message: msg})
	fr.issueN++
}
