package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
)

func init() { registerCommand(newExportCmd) }

type exportOptions struct {
	*globalOptions
	Paths     []string // PATH arguments; none: the stores
	Parquet   string
	DuckDB    string
	NoContent bool
	WithRaw   bool
	Cost      string
	Pricing   string
	Machine   string
	Partition string
	Private   bool
	WorkDir   string
}

const exportLong = `export loads the session files into six tables (files, sessions, entries,
content_blocks, usage, ingest_issues): as Parquet datasets (one
directory per table under --parquet DIR, zstd) and/or a DuckDB database
(--duckdb FILE, with the views counted_usage, daily_usage, session_usage,
project_usage, model_usage, unpriced_models, tool_calls, rejected_files). At
least one of the two
is required.

Exports are incremental: a file whose path, size, mtime and inode are those of
the last export is not read again; the rows of a changed file are replaced,
those of a deleted file removed. The database changes in one transaction and
each Parquet dataset is swapped in whole, so a failed run leaves the previous
export intact. Without --duckdb the state is kept in DIR/_state.duckdb.

Every table has a machine column: --machine NAME, default the host name.
With --partition-by month|day|source|machine, --parquet DIR is a root shared
by several machines (a directory, an NFS or synced folder), written as Hive
partitions: DIR/<table>/machine=NAME/month=YYYY-MM/part-ID-N.parquet (UTC
months and days; machine alone: DIR/<table>/machine=NAME/part-ID-0.parquet;
ID names the export, the same in all six tables). Each machine replaces only
its own machine=NAME directories, each table's swapped in whole, one table
after another (report --from refuses a machine whose tables are from two
exports); exports of different machines may run at once (a per-machine lock
in DIR/.locks). The machine's incremental state stays out of the root, in
--work-dir (default: a directory of the user's cache). Directories and files
are 0777/0666 less the umask (0755/0644 under umask 022); --private makes
them 0700/0600.

Usage copied by forks and duplicated files is counted once (usage.counted:
each billed record, identified by its entry id and timestamp, counts in the
session with the oldest header). Costs: --cost auto uses the recorded cost when present and
non-zero for non-zero tokens, else the price table; recorded and calculate use
only one of them; records without a cost are "unpriced" (NULL, never $0).

The summary gives the rows of each table (on an incremental run also the
rows added, removed and re-derived: rows whose cross-file columns the run set
or changed) and names the files that were not exported, the first few; the
view rejected_files lists them all.

Exit status: 0 when every file was exported, 1 when some files were rejected
(not a session, unknown version, an unreadable file or directory: the
rejected_files view, with their issues in ingest_issues) or the export
failed, 2 on usage errors.`

func newExportCmd(ios *IO, g *globalOptions, runF runFunc[exportOptions]) *cobra.Command {
	opts := &exportOptions{globalOptions: g}
	run := orDefault(runF, runExport)
	cmd := &cobra.Command{
		Use:   "export [PATH...] --parquet DIR --duckdb FILE",
		Short: "Export every session, entry, content block and billed token to Parquet and/or DuckDB",
		Long:  exportLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			configDefaults(cmd.Flags().Changed, ios, nil, &opts.Cost, &opts.Pricing)
			if err := opts.complete(); err != nil {
				return err
			}
			return run(cmd.Context(), opts, ios)
		},
	}
	addSourceFlag(cmd, g)
	f := cmd.Flags()
	f.StringVar(&opts.Parquet, "parquet", "", "directory of the Parquet datasets (one directory per table)")
	f.StringVar(&opts.DuckDB, "duckdb", "", "DuckDB database file to write")
	f.BoolVar(&opts.NoContent, "no-content", false, "leave out message text and tool arguments (sizes and counts stay)")
	f.BoolVar(&opts.WithRaw, "with-raw", false, "keep every record's JSON in entries.raw_json")
	f.StringVar(&opts.Cost, "cost", "auto", "cost columns: auto, recorded or calculate")
	f.StringVar(&opts.Pricing, "pricing", "", "price table file replacing the bundled one (same format)")
	f.StringVar(&opts.Machine, "machine", "", "the machine column of every table and its partition in a shared root (default: the host name)")
	f.StringVar(&opts.Partition, "partition-by", "", "write --parquet DIR as a root shared by machines, Hive-partitioned by machine and month, day, source or nothing more (machine)")
	f.BoolVar(&opts.Private, "private", false, "Parquet directories 0700 and files 0600 (default: as the umask allows)")
	f.StringVar(&opts.WorkDir, "work-dir", "", "with --partition-by: this machine's state and unpartitioned datasets (default: in the user's cache directory)")
	return cmd
}

// complete checks the flags (usage errors) and fills in the machine
// name: the host's when --machine is not given.
func (opts *exportOptions) complete() error {
	if opts.Parquet == "" && opts.DuckDB == "" {
		return usagef("export needs --parquet DIR, --duckdb FILE or both")
	}
	if _, err := export.ParseCostMode(opts.Cost); err != nil {
		return usageError{err}
	}
	if _, err := export.ParsePartitionBy(opts.Partition); err != nil {
		return usageError{err}
	}
	if opts.Partition != "" && opts.Parquet == "" {
		return usagef("--partition-by needs --parquet DIR")
	}
	if opts.Machine == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return usagef("no host name for the machine column (%v): give --machine NAME", err)
		}
		opts.Machine = h
	}
	if opts.Partition != "" {
		if err := export.CheckMachine(opts.Machine); err != nil {
			return usagef("%v: give --machine NAME", err)
		}
	}
	return nil
}

// runExport is export's run: opts as complete left them.
func runExport(ctx context.Context, opts *exportOptions, ios *IO) error {
	if err := validSource(ios, opts.Source); err != nil {
		return err
	}
	rts, err := selectRoots(ios, rootSelection{args: opts.Paths, source: opts.Source})
	if err != nil {
		return err
	}
	mode, _ := export.ParseCostMode(opts.Cost)
	eo := export.Options{Roots: rts, Workers: opts.Workers, DuckDBPath: opts.DuckDB, ParquetDir: opts.Parquet,
		NoContent: opts.NoContent, WithRaw: opts.WithRaw, CostMode: mode,
		Machine: opts.Machine, PartitionBy: opts.Partition, Private: opts.Private, WorkDir: opts.WorkDir}
	if eo.PartitionBy != "" && eo.WorkDir == "" {
		if eo.WorkDir, err = export.DefaultWorkDir(opts.Parquet, opts.Machine); err != nil {
			return err
		}
	}
	if opts.Pricing != "" {
		if eo.Prices, eo.PricingID, err = loadPricing(opts.Pricing); err != nil {
			return err
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Collect Go garbage before the heap outgrows what DuckDB and the
		// Parquet writers need next to it (a soft limit: never an OOM).
		limit := int64(exportGoMemoryLimit)
		if opts.DuckDB == "" {
			limit = parquetGoMemoryLimit // DuckDB holds no message text
		}
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	}
	pr := &phaseProgress{ios: ios, g: opts.globalOptions}
	eo.Progress = pr.withTotal()
	sum, err := export.Run(ctx, eo)
	pr.done()
	if err != nil {
		return err
	}
	out := bufio.NewWriter(ios.Out)
	defer out.Flush()
	if opts.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"summary": sum}); err != nil {
			return err
		}
	} else if !opts.Quiet {
		printExportSummary(out, sum)
	}
	if sum.Rejected > 0 {
		return errFailed
	}
	return nil
}

// loadPricing reads a --pricing file: its table, and the id export and
// report record for it ("file:" and the file's SHA-256); a file that
// cannot be used is a usage error.
func loadPricing(path string) (*pricing.Table, string, error) {
	t, err := pricing.Load(path)
	if err != nil {
		return nil, "", usageError{err}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", usageError{err}
	}
	sum := sha256.Sum256(raw)
	return t, "file:" + hex.EncodeToString(sum[:]), nil
}

// exportGoMemoryLimit is the Go heap's soft limit during an export with a
// DuckDB sink, unless GOMEMLIMIT says otherwise. The heap holds about 90 MB
// of live data at most (row groups, read buffers); collecting more often
// costs little, as it is mostly text without pointers. Measured on the
// 1 GB home, both sinks: 192 MB → 160 MB saves some 40 MB of peak RSS for
// 3-5% more time; 128 MB saves as much again but costs 15%. DuckDB alone
// never reaches it.
const exportGoMemoryLimit = 160 << 20

// parquetGoMemoryLimit is the limit with the Parquet sink alone, where the
// state database holds no message text: 192 MB is 12% faster than 160 MB
// there, for some 60 MB more (about 450 MB in all).
const parquetGoMemoryLimit = 192 << 20

func printExportSummary(w *bufio.Writer, sum export.Summary) {
	fmt.Fprintf(w, "Exported %d files in %.1fs: %d read (%s), %d unchanged, %d removed since the last export\n",
		sum.Files, float64(sum.ElapsedMS)/1000, sum.Read, humanBytes(sum.BytesRead), sum.Unchanged, sum.Removed)
	if why := rebuiltWhy[sum.Rebuilt]; why != "" {
		fmt.Fprintf(w, "Every file was read: %s.\n", why)
	}
	if sum.DuckDBPath != "" {
		fmt.Fprintf(w, "DuckDB:  %s\n", sum.DuckDBPath)
	}
	if sum.ParquetDir != "" {
		written := "unchanged"
		if len(sum.ParquetTables) > 0 {
			written = fmt.Sprintf("%d datasets written", len(sum.ParquetTables))
		}
		fmt.Fprintf(w, "Parquet: %s (%s)\n", sum.ParquetDir, written)
	}
	fmt.Fprintln(w)
	if sum.Rebuilt != "" {
		// Every row is new: added = rows, nothing removed, and the derived
		// columns were computed for the first time.
		fmt.Fprintf(w, "  %-16s %12s\n", "table", "rows")
		for _, t := range sum.Tables {
			fmt.Fprintf(w, "  %-16s %12d\n", t.Table, t.Rows)
		}
	} else {
		fmt.Fprintf(w, "  %-16s %12s %12s %12s %12s\n", "table", "rows", "added", "removed", "re-derived")
		for _, t := range sum.Tables {
			fmt.Fprintf(w, "  %-16s %12d %12d %12d %12d\n", t.Table, t.Rows, t.Added, t.Removed, t.Updated)
		}
		fmt.Fprintln(w, "  re-derived: rows, new or old, whose cross-file columns this run set or changed: usage.counted and")
		fmt.Fprintln(w, "  duplicate_of_session_id, entries.fork_copy_of, sessions.parent_session_id, costs after a --cost change.")
	}
	var sts []string
	for s := range sum.ByStatus {
		sts = append(sts, s)
	}
	sort.Strings(sts)
	fmt.Fprint(w, "\nfiles by status:")
	for _, s := range sts {
		fmt.Fprintf(w, " %s %d", s, sum.ByStatus[s])
	}
	fmt.Fprintln(w)
	if sum.Rejected > 0 {
		printRejected(w, sum)
	}
}

// printRejected names the files whose records were not exported (the
// first few) and the query that lists them all.
func printRejected(w *bufio.Writer, sum export.Summary) {
	fmt.Fprintf(w, "\n%d files were not exported (not a session, unknown version or unreadable):\n", sum.Rejected)
	if sum.RejectedPaths > 0 {
		fmt.Fprintf(w, "  (%d of them paths that could not be read at all, such as a directory: not in the files table)\n", sum.RejectedPaths)
	}
	for _, f := range sum.RejectedFiles {
		fmt.Fprintf(w, "  %-20s %s%s\n", f.Status, showPath(f.Path), rejectedWhy(f))
	}
	if more := sum.Rejected - len(sum.RejectedFiles); more > 0 {
		fmt.Fprintf(w, "  … and %d more.\n", more)
	}
	if sum.Kept > 0 {
		fmt.Fprintf(w, "  (%s under the paths that could not be read kept the rows an earlier export read from them.)\n", plural(sum.Kept, "file", "files"))
	}
	fmt.Fprintf(w, "All of them: sessions-etl query --duckdb %s 'SELECT * FROM rejected_files'\n", strings.Join(quoteArgs([]string{sum.StatePath}), ""))
}

// rejectedWhy is ": CODE (MESSAGE)" or ": line N: CODE (MESSAGE)" for a
// rejected file's first error (the message cut at 100 characters), "" when
// it has none.
func rejectedWhy(f export.RejectedFile) string {
	if f.Code == "" {
		return ""
	}
	why := ": " + f.Code
	if f.Line > 0 {
		why = fmt.Sprintf(": line %d: %s", f.Line, f.Code)
	}
	if f.Message != "" {
		msg := f.Message
		if r := []rune(msg); len(r) > 100 {
			msg = string(r[:100]) + "…"
		}
		why += " (" + msg + ")"
	}
	return why
}

// rebuiltWhy explains export.Summary.Rebuilt for an existing database (a
// new one needs no explanation).
var rebuiltWhy = map[string]string{
	"schema version":  "the database was written by another version of sessions-etl",
	"mode":            "the database held only the tables of 'sessions-etl report'",
	"content options": "--no-content or --with-raw differ from the last export",
	"pricing":         "the price table differs from the last export's",
	"parquet":         "the Parquet datasets are not those of the last export",
}

// phaseProgress shows one progress bar per export phase on stderr (only on
// a terminal, never under --quiet or --json).
type phaseProgress struct {
	ios *IO
	g   *globalOptions
	mu  sync.Mutex
	bar *progress
}

func (p *phaseProgress) Phase(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Done()
	}
	if p.g.JSON {
		p.bar = &progress{}
		return
	}
	if name == "reading" || name == "writing parquet" {
		// Phases with a total (export.ProgressTotal): a bar with %,
		// bytes and the time left. Writing Parquet counts the session
		// bytes of the files each table's rows come from.
		p.bar = newProgress(p.ios, p.g, name)
		return
	}
	p.bar = newSpinner(p.ios, p.g, name)
}

// totalProgress is a phaseProgress that shows a total (export.ProgressTotal):
// used only when a bar is shown, since announcing a total costs a second
// walk of the directories.
type totalProgress struct{ *phaseProgress }

// withTotal is p as an export.Progress, with a total when a bar is shown.
func (p *phaseProgress) withTotal() export.Progress {
	if p.ios.ErrIsTerminal && !p.g.Quiet && !p.g.JSON {
		return totalProgress{p}
	}
	return p
}

// Grow announces bytes to read (export.ProgressTotal).
func (p totalProgress) Grow(n int64) {
	p.mu.Lock()
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Grow(n)
	}
}

func (p *phaseProgress) Add(n int64) {
	p.mu.Lock()
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Add(n)
	}
}

func (p *phaseProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Done()
		p.bar = nil
	}
}
