package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/report"
)

func init() { registerCommand(newQueryCmd) }

type queryOptions struct {
	*globalOptions
	DuckDB string
	From   []string
	CSV    bool
}

const queryHelp = `Views: counted_usage, daily_usage, session_usage, project_usage, model_usage,
unpriced_models, tool_calls, rejected_files; tables: files, sessions, usage,
ingest_issues, and entries and content_blocks in a full export (tool_uses in a
report's database).`

func newQueryCmd(ios *IO, g *globalOptions) *cobra.Command {
	opts := &queryOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "query 'SQL' [PATH...] [--duckdb FILE] [--json|--csv]",
		Short: "Run SQL against an exported DuckDB database (its tables and usage views)",
		Long: `query runs one SQL statement against a DuckDB database written by export or
report (read-only) and prints the result: an aligned table, JSON Lines
(--json, one object per row) or CSV (--csv).

Which database: --duckdb FILE; else, with PATHs, the database 'sessions-etl
report' keeps for those same PATHs (sessions-<hash>.duckdb in the cache
directory; run the report first: query reads no session file); else the one
report keeps for the default roots, $XDG_CACHE_HOME/sessions-etl/sessions.duckdb.
When the database is missing, query lists the report databases that exist,
with the paths each was made from and the command that queries it.

` + queryHelp + `

A report's database holds only what the reports read: files, sessions, usage,
ingest_issues and tool_uses (the tool call and result blocks), with every
view; it has no entries and content_blocks tables, and a query that names a
table it lacks says so. tool_uses stays empty until the first 'report tools'
over the same PATHs fills it; until then a query of tool_uses or tool_calls
is refused and says so. For every table, export into a database of your own
(sessions-etl export --duckdb FILE [PATH...]) and query --duckdb FILE.

Exactly one statement: a query holding several (select 1; select 2) is a
usage error. Output: DATE values print as YYYY-MM-DD, timestamps in UTC; in
the table and CSV, floating-point values (costs) print with at most 10
significant digits (0.2335943, not 0.23359430000000003); --json keeps every
digit. NULL is NULL in the table, an empty field in CSV, null in JSON.

Exit status: 0 on success, 1 when the database is missing or the query
fails, 2 on usage errors (no SQL, several statements, bad flags).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(args[0]) == "" {
				return usagef("query needs one SQL statement, e.g. sessions-etl query 'SELECT * FROM daily_usage'\n%s", queryHelp)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.CSV && opts.JSON {
				return usagef("--csv and --json exclude each other")
			}
			if len(opts.From) > 0 && (opts.DuckDB != "" || len(args) > 1) {
				return usagef("--from excludes --duckdb and PATHs")
			}
			if opts.DuckDB != "" && len(args) > 1 {
				return usagef("give --duckdb FILE or PATHs, not both (PATHs name the database 'sessions-etl report' keeps for them)")
			}
			return runQuery(cmd, ios, opts, args[0], args[1:])
		},
	}
	cmd.Flags().StringVar(&opts.DuckDB, "duckdb", "", "DuckDB database (default: the report database of the PATHs, or of the default roots)")
	cmd.Flags().BoolVar(&opts.CSV, "csv", false, "CSV output with a header line")
	cmd.Flags().StringArrayVar(&opts.From, "from", nil, "query partitioned Parquet roots (export --partition-by; repeatable) instead of a database: every table and view, usage.counted across machines")
	return cmd
}

// queryDatabase is the database a query reads: --duckdb, the report
// database of the PATHs, or that of the default roots; an error that says
// what exists when it is missing.
func queryDatabase(ctx context.Context, ios *IO, opts *queryOptions, paths []string) (string, error) {
	if opts.DuckDB != "" {
		if _, err := os.Stat(opts.DuckDB); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("duckdb %s: no such database (create it with: sessions-etl export --duckdb %s [PATH...])",
				opts.DuckDB, strings.Join(quoteArgs([]string{opts.DuckDB}), ""))
		}
		return opts.DuckDB, nil
	}
	def, err := export.DefaultDBPath()
	if err != nil {
		return "", usageError{err}
	}
	path := def
	if len(paths) > 0 {
		rts, err := roots(ios, paths)
		if err != nil {
			return "", err
		}
		if path, err = report.DBPath(rts, false); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	var b strings.Builder
	if len(paths) > 0 {
		p := strings.Join(quoteArgs(paths), " ")
		fmt.Fprintf(&b, "no report database for %s (%s does not exist): run 'sessions-etl report daily %s' first, which makes it", p, path, p)
	} else {
		fmt.Fprintf(&b, "no database at %s, the one 'sessions-etl report' keeps for the default roots: run 'sessions-etl report daily' first, "+
			"or give --duckdb FILE (a database written by 'sessions-etl export --duckdb FILE')", path)
	}
	dir := filepath.Dir(def)
	if dbs := reportDatabases(ctx, dir); len(dbs) > 0 {
		fmt.Fprintf(&b, "\nReport databases in %s:", dir)
		for _, d := range dbs {
			fmt.Fprintf(&b, "\n  %s", filepath.Base(d.path))
			switch {
			case d.path == def:
				b.WriteString("  (default roots): sessions-etl query 'SQL'")
			case len(d.roots) > 0:
				fmt.Fprintf(&b, "  (%s): sessions-etl query 'SQL' %s", strings.Join(d.roots, ", "), strings.Join(quoteArgs(d.roots), " "))
			default:
				fmt.Fprintf(&b, "  (%s): sessions-etl query --duckdb %s 'SQL'", d.note, strings.Join(quoteArgs([]string{d.path}), ""))
			}
		}
	}
	return "", errors.New(b.String())
}

// reportDB is a database found in the cache directory.
type reportDB struct {
	path  string
	roots []string // the paths it was made from, when recorded
	note  string   // why roots are unknown
}

// reportDatabases lists the sessions*.duckdb databases of dir (at most
// 20), with the roots each records.
func reportDatabases(ctx context.Context, dir string) []reportDB {
	paths, _ := filepath.Glob(filepath.Join(dir, "sessions*.duckdb"))
	sort.Strings(paths)
	if len(paths) > 20 {
		paths = paths[:20]
	}
	var out []reportDB
	for _, p := range paths {
		d := reportDB{path: p, note: "paths not recorded"}
		if db, err := export.OpenDB(p + "?access_mode=READ_ONLY"); err == nil {
			info, ok, err := export.ReadInfo(ctx, db)
			switch {
			case err != nil:
				d.note = "in use or unreadable"
			case !ok:
				d.note = "not a sessions-etl database"
			default:
				d.roots = info.Roots
			}
			db.Close()
		}
		out = append(out, d)
	}
	return out
}

// checkOneStatement returns a usage error when query holds more than one
// SQL statement: DuckDB would run them all and show only the last result.
func checkOneStatement(ctx context.Context, db *sql.DB, query string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var multi bool
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return nil
		}
		// Prepare (without a context) refuses several statements with
		// one error value of the driver's; any other error is left to
		// the query itself to report.
		st, err := c.Prepare(query)
		if err == nil {
			return st.Close()
		}
		multi = isMultiStatement(c, err)
		return nil
	})
	if err != nil {
		return err
	}
	if multi {
		return usagef("the SQL holds more than one statement; query runs exactly one (split them into several queries)")
	}
	return nil
}

func runQuery(cmd *cobra.Command, ios *IO, opts *queryOptions, query string, paths []string) error {
	ctx := cmd.Context()
	var db *sql.DB
	var path string
	var err error
	if len(opts.From) > 0 {
		path = strings.Join(opts.From, ", ")
		if db, err = export.OpenRootsCached(ctx, opts.From, export.FromCacheDir(), nil); err != nil {
			return err
		}
	} else {
		if path, err = queryDatabase(ctx, ios, opts, paths); err != nil {
			return err
		}
		if db, err = export.OpenDB(path + "?access_mode=READ_ONLY"); err != nil {
			return fmt.Errorf("duckdb %s: %w", path, err)
		}
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := checkOneStatement(ctx, db, query); err != nil {
		return err
	}
	if skipped, err := export.ReadsSkippedToolUses(ctx, db, query); err == nil && skipped {
		p := strings.Join(quoteArgs(paths), " ")
		if p != "" {
			p = " " + p
		}
		return fmt.Errorf("duckdb %s: this report database was made by a report that reads no tool calls, so tool_uses (and tool_calls) are empty in it: run '%s report tools%s' once (it fills them, and later reports keep them), then query again", path, progOr(ios.Prog), p)
	}
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w%s", path, err, usageModeHint(ctx, db, query, err))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	kinds := make([]string, len(types))
	for i, t := range types {
		kinds[i] = t.DatabaseTypeName()
	}
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	defer out.Flush()
	var w rowWriter
	switch {
	case opts.JSON:
		w = &jsonRows{w: out, cols: cols, types: kinds}
	case opts.CSV:
		w = &csvRows{w: csv.NewWriter(out), types: kinds}
	default:
		w = &tableRows{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0), types: kinds}
	}
	if err := w.header(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := w.row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("duckdb %s: %w", path, err)
	}
	return w.flush()
}

// multiStatementErr is the driver's own error value for a statement list
// given to Prepare, learnt once from a query known to hold two (the driver
// joins a generic prepare error with it: the last of the joined values is
// the specific one): the refusal is then recognised by identity
// (errors.Is), not by its text.
var multiStatementErr struct {
	once sync.Once
	err  error
}

func isMultiStatement(c *duckdb.Conn, err error) bool {
	multiStatementErr.once.Do(func() {
		st, perr := c.Prepare("SELECT 1; SELECT 2")
		if perr == nil {
			_ = st.Close()
		}
		if j, ok := perr.(interface{ Unwrap() []error }); ok {
			if errs := j.Unwrap(); len(errs) > 0 {
				perr = errs[len(errs)-1]
			}
		}
		multiStatementErr.err = perr
	})
	return multiStatementErr.err != nil && errors.Is(err, multiStatementErr.err)
}

// usageModeHint explains a query error on a database made by report in the
// usage mode when the query reads a table that is not there (a catalog
// error, and DuckDB's parser names a table the database lacks).
func usageModeHint(ctx context.Context, db *sql.DB, query string, qerr error) string {
	if !export.IsCatalogError(qerr) {
		return ""
	}
	if mode, ok, err := export.ReadMode(ctx, db); err != nil || !ok || mode != export.ModeUsage {
		return ""
	}
	if missing, err := export.MissingTables(ctx, db, query); err != nil || len(missing) == 0 {
		return ""
	}
	return "\nThis database was made by 'sessions-etl report', which keeps only the tables the reports read: " +
		"files, sessions, usage, ingest_issues and tool_uses (entries and content_blocks are not in it). " +
		"For every table, export into a database of your own: sessions-etl export --duckdb FILE [PATH...], then query --duckdb FILE."
}

type rowWriter interface {
	header(cols []string) error
	row(vals []any) error
	flush() error
}

// text renders a value for the table and CSV outputs: DATE values as
// YYYY-MM-DD, instants in UTC, floats with at most 10 significant digits.
func text(v any, typ string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return formatTime(x, typ)
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// formatTime formats a DATE as YYYY-MM-DD, a TIME as hh:mm:ss and any other
// instant in UTC.
func formatTime(t time.Time, typ string) string {
	switch typ {
	case "DATE":
		return t.Format(time.DateOnly)
	case "TIME":
		return t.Format("15:04:05.999999")
	}
	return t.UTC().Format("2006-01-02 15:04:05.999999")
}

// displayDigits is the most significant digits a float is shown with in
// the table and CSV outputs: sums of DOUBLE costs carry binary noise in the
// last of their 17 digits (0.23359430000000003).
const displayDigits = 10

// formatFloat rounds x to displayDigits significant digits and prints the
// result without exponent when it is between 1e-9 and 1e15.
func formatFloat(x float64, bits int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, bits)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', displayDigits, 64), 64)
	if a := math.Abs(r); a == 0 || (a >= 1e-9 && a < 1e15) {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// jsonValue renders a value for JSON: DATE values as YYYY-MM-DD, instants
// as RFC 3339 UTC, NaN and infinities (which JSON cannot hold) as null.
func jsonValue(v any, typ string) any {
	switch x := v.(type) {
	case time.Time:
		switch typ {
		case "DATE", "TIME":
			return formatTime(x, typ)
		}
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case []byte:
		return string(x)
	}
	return v
}

// jsonRows writes one JSON object per row, keys in column order.
type jsonRows struct {
	w     io.Writer
	cols  []string
	types []string
}

func (j *jsonRows) header([]string) error { return nil }
func (j *jsonRows) flush() error          { return nil }
func (j *jsonRows) row(vals []any) error {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range j.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		v, err := json.Marshal(jsonValue(vals[i], j.types[i]))
		if err != nil {
			v = []byte(strconv.Quote(fmt.Sprint(vals[i])))
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(j.w, b.String())
	return err
}

type csvRows struct {
	w     *csv.Writer
	types []string
}

func (c *csvRows) header(cols []string) error { return c.w.Write(cols) }
func (c *csvRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = text(v, c.types[i])
	}
	return c.w.Write(rec)
}
func (c *csvRows) flush() error { c.w.Flush(); return c.w.Error() }

type tableRows struct {
	w     *tabwriter.Writer
	types []string
}

func (t *tableRows) header(cols []string) error {
	_, err := fmt.Fprintln(t.w, strings.Join(cols, "\t"))
	return err
}
func (t *tableRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			rec[i] = "NULL" // not an empty string
			continue
		}
		rec[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(text(v, t.types[i]))
	}
	_, err := fmt.Fprintln(t.w, strings.Join(rec, "\t"))
	return err
}
func (t *tableRows) flush() error { return t.w.Flush() }

// quoteArgs quotes each argument for a POSIX shell when it needs it, so
// that a command printed for the user can be pasted back.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:+=@%~", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}
