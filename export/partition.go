package export

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
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

// publishPartBytes is about the most data (Parquet's uncompressed size)
// one COPY of a machine's partitions sorts: DuckDB's sort of wide rows
// (content_blocks' text) does not spill enough to stay under the
// publish's memory limit (a 270 MB home's 220 MB of content_blocks text
// failed at 256 and 384 MB; BENCHMARKS.md, issue 15). A bigger table is
// written by several COPYs over consecutive file id ranges, each sorted,
// into part files of their own (part-<id>-<k>00000<i>.parquet) in the same
// partition directories.
var publishPartBytes int64 = 48 << 20 // a variable for the tests

// publishRanges returns the file id ranges of the COPYs that write table
// t's partitions from its unpartitioned dataset under flat: one range
// (zero bounds: the whole table) unless the dataset holds more than
// publishPartBytes, else ranges of about equal session bytes (the files
// table's size_bytes), in file id order.
func publishRanges(ctx context.Context, db *sql.DB, t *Table, flat string) ([]idSlice, error) {
	glob := func(name string) string {
		return "'" + strings.ReplaceAll(filepath.Join(flat, name, "*.parquet"), "'", "''") + "'"
	}
	var size sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT sum(total_uncompressed_size) FROM parquet_metadata("+glob(t.Name)+")").Scan(&size); err != nil {
		return nil, err
	}
	n := int((size.Int64 + publishPartBytes - 1) / publishPartBytes)
	if n <= 1 {
		return []idSlice{{}}, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT file_id, size_bytes FROM read_parquet("+glob(TableFiles)+") WHERE file_id IS NOT NULL ORDER BY file_id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var files []idSlice
	var total int64
	for rows.Next() {
		var s idSlice
		if err := rows.Scan(&s.lo, &s.bytes); err != nil {
			return nil, err
		}
		s.hi = s.lo
		total += s.bytes
		files = append(files, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(files) < 2 {
		return []idSlice{{}}, nil
	}
	var out []idSlice
	cur, acc := idSlice{lo: files[0].lo}, int64(0)
	for _, f := range files {
		if acc > 0 && acc+f.bytes > total/int64(n)+1 && len(out) < n-1 {
			out = append(out, cur)
			cur, acc = idSlice{lo: f.lo}, 0
		}
		cur.hi, acc = f.hi, acc+f.bytes
		cur.bytes = acc
	}
	return append(out, cur), nil
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
	// DuckDB buffers up to 512 Ki rows of each open partition before it
	// writes them: a machine's usage by day (334 days of 27 000 rows)
	// ran out of the 256 MB limit (BENCHMARKS.md, issue 15).
	if _, err := db.ExecContext(ctx, "SET partitioned_write_flush_threshold = 10000"); err != nil {
		return err
	}
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
		ranges, err := publishRanges(ctx, db, t, flat)
		if err != nil {
			return fmt.Errorf("parquet %s: %w", filepath.Join(root, t.Name, "machine="+machine), err)
		}
		for k, r := range ranges {
			where, to, opts := "", target, copyOpts
			if len(ranges) > 1 {
				// Bounded by the next range's first id: every id (and
				// no file id, in the last) is in exactly one range.
				switch {
				case k == 0:
					where = fmt.Sprintf(" WHERE t.file_id < %d", ranges[1].lo)
				case k == len(ranges)-1:
					where = fmt.Sprintf(" WHERE t.file_id >= %d OR t.file_id IS NULL", r.lo)
				default:
					where = fmt.Sprintf(" WHERE t.file_id >= %d AND t.file_id < %d", r.lo, ranges[k+1].lo)
				}
				if k > 0 {
					// The later parts go into the same directories,
					// under names of their own with the same export id:
					// part-<id>-<k>00000<i>.parquet (DuckDB's {i} has no
					// leading zeros, so no two (k, i) give one name).
					if key != "" {
						opts = plainOpts + fmt.Sprintf(", PARTITION_BY (%s), FILENAME_PATTERN 'part-%s-%d00000{i}', OVERWRITE_OR_IGNORE", by, id, k)
					} else {
						to = filepath.Join(filepath.Dir(target), fmt.Sprintf("part-%s-%d.parquet", id, k))
					}
				}
			}
			order := qualified(t.OrderBy)
			if key != "" {
				// Partition by partition (each still in the table's
				// order): DuckDB's partitioned writer then holds one
				// partition's rows at a time, not a buffer for each
				// of a machine's hundreds of days.
				order = by + ", " + order
			}
			q := fmt.Sprintf("COPY (SELECT %s FROM %s%s ORDER BY %s) TO '%s' (%s)", sel, from, where, order,
				strings.ReplaceAll(to, "'", "''"), opts)
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("parquet %s: %w", filepath.Join(root, t.Name, "machine="+machine), err)
			}
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
