package main

import (
	"bufio"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/export"
)

func init() { registerCommand(newQueryCmd) }

type queryOptions struct {
	*globalOptions
	DuckDB string
	CSV    bool
}

func newQueryCmd(ios *IO, g *globalOptions) *cobra.Command {
	opts := &queryOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "query 'SQL' [--duckdb FILE] [--json|--csv]",
		Short: "Run SQL against an exported DuckDB database (tables of SPEC.md §3 and the views of queries/)",
		Long: `query runs one SQL statement against the DuckDB database written by export
(read-only) and prints the result: an aligned table, JSON Lines (--json, one
object per row) or CSV (--csv). Without --duckdb it uses the database report
keeps in the cache directory.

Views: counted_usage, daily_usage, session_usage, project_usage, model_usage,
unpriced_models, tool_calls (see queries/views.sql).

The database report keeps holds only what the reports read: files, sessions,
usage, ingest_issues and tool_uses (the tool call and result blocks), with
every view; it has no entries and content_blocks tables. For those, export
into a database of your own (sessions-etl export --duckdb FILE) and query it.

Exit status: 0 on success, 1 when the query fails, 2 on usage errors.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.CSV && opts.JSON {
				return usagef("--csv and --json exclude each other")
			}
			if opts.DuckDB == "" {
				p, err := export.DefaultDBPath()
				if err != nil {
					return usageError{err}
				}
				opts.DuckDB = p
			}
			return runQuery(cmd, ios, opts, args[0])
		},
	}
	cmd.Flags().StringVar(&opts.DuckDB, "duckdb", "", "DuckDB database (default: the report database in the user's cache directory)")
	cmd.Flags().BoolVar(&opts.CSV, "csv", false, "CSV output with a header line")
	return cmd
}

func runQuery(cmd *cobra.Command, ios *IO, opts *queryOptions, query string) error {
	if _, err := os.Stat(opts.DuckDB); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("duckdb %s: no such database (run sessions-etl export --duckdb %s first)", opts.DuckDB, opts.DuckDB)
	}
	db, err := sql.Open("duckdb", opts.DuckDB+"?access_mode=READ_ONLY")
	if err != nil {
		return fmt.Errorf("duckdb %s: %w", opts.DuckDB, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(cmd.Context(), query)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w%s", opts.DuckDB, err, usageModeHint(cmd, db, err))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	defer out.Flush()
	var w rowWriter
	switch {
	case opts.JSON:
		w = &jsonRows{w: out, cols: cols}
	case opts.CSV:
		w = &csvRows{w: csv.NewWriter(out)}
	default:
		w = &tableRows{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
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
		return fmt.Errorf("duckdb %s: %w", opts.DuckDB, err)
	}
	return w.flush()
}

// usageModeHint explains a query error on a database made by report in the
// usage mode when the query may have asked for a table that is not there.
func usageModeHint(cmd *cobra.Command, db *sql.DB, qerr error) string {
	if !strings.Contains(qerr.Error(), "Table with name") {
		return ""
	}
	if mode, ok, err := export.ReadMode(cmd.Context(), db); err != nil || !ok || mode != export.ModeUsage {
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

// text renders a value for the table and CSV outputs.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// jsonValue renders a value for JSON: instants as RFC 3339 UTC, NaN and
// infinities (which JSON cannot hold) as null.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Time:
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
	w    io.Writer
	cols []string
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
		v, err := json.Marshal(jsonValue(vals[i]))
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

type csvRows struct{ w *csv.Writer }

func (c *csvRows) header(cols []string) error { return c.w.Write(cols) }
func (c *csvRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = text(v)
	}
	return c.w.Write(rec)
}
func (c *csvRows) flush() error { c.w.Flush(); return c.w.Error() }

type tableRows struct{ w *tabwriter.Writer }

func (t *tableRows) header(cols []string) error {
	_, err := fmt.Fprintln(t.w, strings.Join(cols, "\t"))
	return err
}
func (t *tableRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(text(v))
	}
	_, err := fmt.Fprintln(t.w, strings.Join(rec, "\t"))
	return err
}
func (t *tableRows) flush() error { return t.w.Flush() }
