package export

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "embed"

	"github.com/gofrs/flock"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// A partitioned Parquet root is shared by several machines (SPEC.md §7.7):
//
//	ROOT/<table>/machine=<name>/[month=YYYY-MM/ | day=YYYY-MM-DD/ | source=<label>/]part-<n>.parquet
//
// Each machine writes and replaces only its own machine=<name> directory of
// each table. A run exports incrementally into the machine's own work
// directory (Options.WorkDir: the state database and unpartitioned
// datasets, outside the root), then writes the partitions of every table
// into a staging directory under ROOT/.staging (the same file system as the
// root), then swaps each table's machine directory for its staged one
// (fstx.SwapDir: one renameat2(RENAME_EXCHANGE) on Linux), so a reader
// finds each table's machine directory either whole before or whole after
// the run, never half-written. A per-machine lock under ROOT/.locks keeps
// two runs of one machine apart; runs of different machines proceed
// together. A killed run leaves a staging directory that the machine's
// next run removes; the published partitions are untouched. The partition
// columns (machine and the --partition-by key) are in the directory names
// only, not in the files, as Hive, Spark and Trino expect.

// Partition layouts (Options.PartitionBy).
const (
	PartitionMachine = "machine" // ROOT/<table>/machine=<name>/
	PartitionMonth   = "month"   // …/machine=<name>/month=YYYY-MM/ (UTC)
	PartitionDay     = "day"     // …/machine=<name>/day=YYYY-MM-DD/ (UTC)
	PartitionSource  = "source"  // …/machine=<name>/source=<label>/
)

// ParsePartitionBy checks a --partition-by value ("" is no partitioned root).
func ParsePartitionBy(s string) (string, error) {
	switch s {
	case "", PartitionMachine, PartitionMonth, PartitionDay, PartitionSource:
		return s, nil
	}
	return "", fmt.Errorf("unknown partitioning %q (want month, day, source or machine)", s)
}

// CheckMachine checks a machine name: it is a directory name in a shared
// root.
func CheckMachine(name string) error {
	switch {
	case name == "":
		return errors.New("the machine name is empty")
	case !utf8.ValidString(name), strings.ContainsAny(name, "/\\=:*?\"<>|\x00"), strings.HasPrefix(name, "."),
		len(name) > 200, strings.TrimSpace(name) != name:
		return fmt.Errorf("machine name %q: use letters, digits, '-', '_' or '.' (not first)", name)
	}
	return nil
}

// StagingDir and LocksDir are the directories of a partitioned root that
// hold no data.
const (
	StagingDir = ".staging"
	LocksDir   = ".locks"
)

// Run exports (see runOnce and runRetry); with opts.PartitionBy into a
// partitioned root shared by several machines (see above).
func Run(ctx context.Context, opts Options) (Summary, error) {
	if opts.Private {
		privateModes.Add(1)
		defer privateModes.Add(-1)
	}
	by, err := ParsePartitionBy(opts.PartitionBy)
	if err != nil {
		return Summary{}, err
	}
	if by == "" {
		return runRetry(ctx, opts)
	}
	if opts.ParquetDir == "" {
		return Summary{}, errors.New("export: --partition-by needs a Parquet directory")
	}
	if err := CheckMachine(opts.Machine); err != nil {
		return Summary{}, err
	}
	if opts.WorkDir == "" {
		return Summary{}, errors.New("export: a partitioned export needs a work directory")
	}
	if opts.Mode != "" && opts.Mode != ModeFull {
		return Summary{}, ErrUsageModeParquet
	}
	root, err := filepath.Abs(opts.ParquetDir)
	if err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(root, dirPerm()); err != nil {
		return Summary{}, fmt.Errorf("parquet %s: %w", root, err)
	}
	unlock, err := lockMachine(ctx, root, opts.Machine)
	if err != nil {
		return Summary{}, err
	}
	defer unlock()
	flat := opts
	flat.PartitionBy = ""
	flat.ParquetDir = filepath.Join(opts.WorkDir, "parquet")
	if flat.DuckDBPath == "" {
		flat.DuckDBPath = filepath.Join(opts.WorkDir, StateFileName)
	}
	sum, err := runRetry(ctx, flat)
	if err != nil {
		return sum, err
	}
	if opts.DuckDBPath == "" {
		sum.DuckDBPath = ""
	}
	sum.ParquetDir = root
	start := time.Now()
	if opts.Progress != nil {
		opts.Progress.Phase("writing parquet")
	}
	if err := publishMachine(ctx, root, flat.ParquetDir, opts.Machine, by, opts); err != nil {
		return sum, err
	}
	sum.ElapsedMS += time.Since(start).Milliseconds()
	return sum, nil
}

// ViewsFile is the file of portable SQL views every partitioned export
// writes at the root (teamviews.sql).
const ViewsFile = "views.sql"

//go:embed teamviews.sql
var teamViews string

// TeamViewsSQL is the content of ViewsFile.
func TeamViewsSQL() string {
	return strings.NewReplacer("{{VERSION}}", strconv.Itoa(SchemaVersion), "{{COUNTED_COLUMNS}}", countedColumns()).Replace(teamViews)
}

// countedColumns is the column list of views.sql's counted_usage: every
// usage column of all_usage u, those a roll-up's rest row read in part
// changes taken from rest r (matched) instead.
func countedColumns() string {
	rest := map[string]string{
		"recorded_cost_input": "rci", "recorded_cost_output": "rco", "recorded_cost_cache_read": "rcr",
		"recorded_cost_cache_write": "rcw", "recorded_cost_total": "rct",
		"calculated_cost_input": "cci", "calculated_cost_output": "cco", "calculated_cost_cache_read": "ccr",
		"calculated_cost_cache_write": "ccw", "calculated_cost_total": "cct",
	}
	for _, c := range []string{"input", "output", "cache_read", "cache_write", "cache_write_1h", "total_tokens"} {
		rest[c] = c
	}
	for _, c := range []string{"input", "output", "cache_read", "cache_write", "total"} {
		rest["cost_"+c] = "CASE r.cost_src WHEN 'recorded' THEN r." + rest["recorded_cost_"+c] + " WHEN 'calculated' THEN r." + rest["calculated_cost_"+c] + " END"
	}
	cols := make([]string, 0, len(UsageTable.Columns))
	for _, c := range UsageTable.Columns {
		var e string
		switch {
		case c.Name == "cost_source":
			e = "CASE WHEN r.machine IS NULL THEN u.cost_source ELSE r.cost_src END"
		case c.Name == "counted":
			e = "true" // every row of counted_usage is
		case c.Name == "rollup_covered":
			e = "o.team_covered"
		case rest[c.Name] != "":
			v := rest[c.Name]
			if !strings.HasPrefix(v, "CASE") {
				v = "r." + v
			}
			e = "CASE WHEN r.machine IS NULL THEN u." + c.Name + " ELSE " + v + " END"
		default:
			e = "u." + c.Name
		}
		cols = append(cols, e+" AS "+c.Name)
	}
	return strings.Join(cols, ",\n       ")
}

// DefaultWorkDir is the work directory of machine's exports into the
// shared root: shared/<hash of the root's absolute path>-<machine> in the
// directory of DefaultDBPath.
func DefaultWorkDir(root, machine string) (string, error) {
	db, err := DefaultDBPath()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(filepath.Dir(db), "shared", hex.EncodeToString(sum[:6])+"-"+machine), nil
}

// lockMachine takes the machine's lock in the root, waiting for another
// run of the same machine to finish.
func lockMachine(ctx context.Context, root, machine string) (func(), error) {
	dir := filepath.Join(root, LocksDir)
	if err := os.MkdirAll(dir, dirPerm()); err != nil {
		return nil, fmt.Errorf("parquet %s: %w", root, err)
	}
	fl := flock.New(filepath.Join(dir, "machine="+machine+".lock"))
	ok, err := fl.TryLockContext(ctx, 50*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock %s: %w", fl.Path(), errors.Join(err, ctx.Err()))
	}
	return func() { fl.Unlock() }, nil
}

// partitionKey returns, for table t, the FROM clause reading its
// unpartitioned dataset under flat, the SQL expression of its partition
// key for by (month, day or source; "" for machine), and the columns left
// out of the files (those the directory names hold).
func partitionKey(t *Table, flat, by string) (from, key string, exclude []string) {
	ds := func(name string) string {
		return "read_parquet('" + strings.ReplaceAll(filepath.Join(flat, name, "*.parquet"), "'", "''") + "')"
	}
	from = ds(t.Name) + " t"
	exclude = []string{MachineColumn}
	var ts string
	switch by {
	case PartitionMonth, PartitionDay:
		switch t {
		case FilesTable:
			ts = "t.mtime"
		case SessionsTable:
			ts = "coalesce(t.first_activity, t.created_at)"
		case ContentBlocksTable:
			from += " LEFT JOIN (SELECT file_id, entry_index, timestamp AS e_ts FROM " + ds(TableEntries) + ") e USING (file_id, entry_index)"
			ts = "e.e_ts"
		case IngestIssuesTable:
			from += " LEFT JOIN (SELECT file_id, mtime AS f_mtime FROM " + ds(TableFiles) + ") f USING (file_id)"
			ts = "f.f_mtime"
		default:
			ts = "t.timestamp"
		}
		layout := "%Y-%m"
		if by == PartitionDay {
			layout = "%Y-%m-%d"
		}
		key = "strftime(timezone('UTC', " + ts + "), '" + layout + "')"
	case PartitionSource:
		switch t {
		case FilesTable, SessionsTable:
			key = "t.source"
			exclude = append(exclude, "source")
		default:
			from += " LEFT JOIN (SELECT file_id, source AS f_source FROM " + ds(TableFiles) + ") f USING (file_id)"
			key = "f.f_source"
		}
	}
	return from, key, exclude
}

// hasParquet reports whether there is a .parquet file under dir.
func hasParquet(dir string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			return found
		}
		return nil
	})
	return err == found
}

// hiveNull is the directory value of a NULL partition key (Hive's; DuckDB
// and Spark write and read it).
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// publishFault, when set by a test, is called before each table's
// partition is written (a run killed there).
var publishFault func(table string) error

// qualified prefixes each column of an ORDER BY list with "t.".
func qualified(orderBy string) string {
	parts := strings.Split(orderBy, ",")
	for i, p := range parts {
		parts[i] = "t." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// publishMachine writes the machine's partition of every table from the
// unpartitioned datasets under flat into a staging directory of the root,
// then swaps each table's machine directory for it. Every file it writes
// is named part-<export id>-<n>.parquet, one export id for all six tables
// (ExportIDOf), so that a reader can tell a machine whose tables are from
// two exports: the swaps are one per table, so between the first and the
// last (or after a run killed there) a machine's tables are from
// different exports; OpenRoots waits or refuses then.
func publishMachine(ctx context.Context, root, flat, machine, by string, opts Options) error {
	staging := filepath.Join(root, StagingDir)
	if err := os.MkdirAll(staging, dirPerm()); err != nil {
		return fmt.Errorf("parquet %s: %w", root, err)
	}
	// Leftovers of this machine's killed runs (the lock makes this run
	// the machine's only one).
	old, _ := filepath.Glob(filepath.Join(staging, "machine="+machine+"-*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	stage, err := mkdirTemp(staging, "machine="+machine+"-")
	if err != nil {
		return fmt.Errorf("parquet %s: %w", root, err)
	}
	defer os.RemoveAll(stage)
	id, err := newExportID()
	if err != nil {
		return err
	}
	threads := max(opts.Workers, 1)
	db, err := OpenDB(dsn("", map[string]string{"threads": strconv.Itoa(threads), "memory_limit": "256MB",
		"temp_directory": filepath.Join(opts.WorkDir, "partition.tmp")}))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, t := range Tables {
		if publishFault != nil {
			if err := publishFault(t.Name); err != nil {
				return err
			}
		}
		from, key, exclude := partitionKey(t, flat, by)
		cols := "t.* EXCLUDE (" + strings.Join(exclude, ", ") + ")"
		sel := cols
		target := filepath.Join(stage, t.Name)
		plainOpts := fmt.Sprintf("FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE %d, KV_METADATA {'%s': '%d'}",
			RowGroupRows, SchemaVersionKey, SchemaVersion)
		copyOpts := plainOpts
		if key != "" {
			sel += ", " + key + " AS " + by
			// DuckDB cannot rotate files within partitions (FILE_SIZE_BYTES,
			// ROW_GROUPS_PER_FILE): a partition is one part file.
			copyOpts += fmt.Sprintf(", PARTITION_BY (%s), FILENAME_PATTERN 'part-%s-{i}'", by, id)
		} else {
			// One file at least, so that an empty table keeps its schema.
			if err := os.Mkdir(target, dirPerm()); err != nil {
				return err
			}
			target = filepath.Join(target, "part-"+id+"-0.parquet")
		}
		q := fmt.Sprintf("COPY (SELECT %s FROM %s ORDER BY %s) TO '%s' (%s)", sel, from, qualified(t.OrderBy),
			strings.ReplaceAll(target, "'", "''"), copyOpts)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("parquet %s: %w", filepath.Join(root, t.Name, "machine="+machine), err)
		}
		if !hasParquet(filepath.Join(stage, t.Name)) {
			// An empty table partitioned by a key gives no files: one
			// empty file in the NULL partition keeps its schema (so that
			// a glob over the table always finds a file).
			null := filepath.Join(stage, t.Name, by+"="+hiveNull)
			if err := os.MkdirAll(null, dirPerm()); err != nil {
				return err
			}
			q := fmt.Sprintf("COPY (SELECT %s FROM %s LIMIT 0) TO '%s' (%s)", cols, from,
				strings.ReplaceAll(filepath.Join(null, "part-"+id+"-0.parquet"), "'", "''"), plainOpts)
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("parquet %s: %w", filepath.Join(root, t.Name, "machine="+machine), err)
			}
		}
	}
	if err := fixModes(stage); err != nil {
		return err
	}
	for _, t := range Tables {
		dir := filepath.Join(root, t.Name)
		if err := os.MkdirAll(dir, dirPerm()); err != nil {
			return fmt.Errorf("parquet %s: %w", dir, err)
		}
		if err := fstx.SyncDir(filepath.Join(stage, t.Name)); err != nil {
			return err
		}
		final := filepath.Join(dir, "machine="+machine)
		if err := fstx.SwapDir(filepath.Join(stage, t.Name), final); err != nil {
			return fmt.Errorf("parquet %s: %w", final, err)
		}
		if err := fstx.SyncDir(dir); err != nil {
			return fmt.Errorf("parquet %s: %w", dir, err)
		}
	}
	// Every machine writes the same views; replaced atomically.
	views := filepath.Join(root, ViewsFile)
	if old, err := os.ReadFile(views); err != nil || string(old) != TeamViewsSQL() {
		if err := fstx.WriteBytes(views, []byte(TeamViewsSQL()), createdFilePerm(root)); err != nil {
			return fmt.Errorf("parquet %s: %w", views, err)
		}
	}
	return nil
}

// fixModes gives the files and directories DuckDB wrote under dir the
// run's modes: DuckDB creates them 0666/0777 less the umask; a private
// run makes them 0600/0700. Every file is fsynced (DuckDB does not sync
// partitioned output).
func fixModes(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if privateModes.Load() > 0 {
				if err := os.Chmod(p, 0o700); err != nil {
					return err
				}
			}
			return fstx.SyncDir(p)
		}
		if privateModes.Load() > 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return err
			}
		}
		return fstx.SyncFile(p)
	})
}

// newExportID returns the id of a publish: its UTC time to the second and
// 32 random bits (20261203T101500Z-1a2b3c4d), in every part file's name.
func newExportID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]), nil
}

// ExportIDOf returns the export id in the name of a part file a
// partitioned export wrote (part-<id>-<n>.parquet), "" for a file named
// part-<n>.parquet (written before export ids, schema 8 and earlier), and
// false for a name of neither form.
func ExportIDOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "part-")
	if !ok {
		return "", false
	}
	if rest, ok = strings.CutSuffix(rest, ".parquet"); !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if _, err := strconv.Atoi(rest[i+1:]); err != nil {
		return "", false
	}
	if i < 0 {
		return "", true
	}
	return rest[:i], true
}
