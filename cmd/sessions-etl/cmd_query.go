package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/export"
)

// The query command, in four files: this one (flags and the run),
// query_db.go (which database), query_check.go (statements refused and the
// hints added to DuckDB's errors), query_output.go (table, CSV, JSON Lines).

func init() { registerCommand(newQueryCmd) }

type queryOptions struct {
	*globalOptions
	SQL    string   // the statement
	Paths  []string // PATH arguments: the report database of those PATHs
	DuckDB string
	From   []string
	CSV    bool
}

const queryHelp = `Views: counted_usage, daily_usage, session_usage, project_usage, model_usage,
unpriced_models, tool_calls, rejected_files; tables: files, sessions, usage,
ingest_issues, and entries and content_blocks in a full export (tool_uses in a
report's database).`

const queryLong = `query runs one SQL statement against a DuckDB database written by export or
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
fails, 2 on usage errors (no SQL, several statements, bad flags).`

func newQueryCmd(ios *IO, g *globalOptions, runF runFunc[queryOptions]) *cobra.Command {
	opts := &queryOptions{globalOptions: g}
	run := orDefault(runF, runQuery)
	cmd := &cobra.Command{
		Use:   "query 'SQL' [PATH...] [--duckdb FILE] [--json|--csv]",
		Short: "Run SQL against an exported DuckDB database (its tables and usage views)",
		Long:  queryLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(args[0]) == "" {
				return usagef("query needs one SQL statement, e.g. sessions-etl query 'SELECT * FROM daily_usage'\n%s", queryHelp)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SQL, opts.Paths = args[0], args[1:]
			if err := opts.check(); err != nil {
				return err
			}
			return run(cmd.Context(), opts, ios)
		},
	}
	cmd.Flags().StringVar(&opts.DuckDB, "duckdb", "", "DuckDB database (default: the report database of the PATHs, or of the default roots)")
	cmd.Flags().BoolVar(&opts.CSV, "csv", false, "CSV output with a header line")
	cmd.Flags().StringArrayVar(&opts.From, "from", nil, "query partitioned Parquet roots (export --partition-by; repeatable) instead of a database: every table and view, usage.counted across machines")
	return cmd
}

// check refuses flags that exclude each other (usage errors).
func (opts *queryOptions) check() error {
	if opts.CSV && opts.JSON {
		return usagef("--csv and --json exclude each other")
	}
	if len(opts.From) > 0 && (opts.DuckDB != "" || len(opts.Paths) > 0) {
		return usagef("--from excludes --duckdb and PATHs")
	}
	if opts.DuckDB != "" && len(opts.Paths) > 0 {
		return usagef("give --duckdb FILE or PATHs, not both (PATHs name the database 'sessions-etl report' keeps for them)")
	}
	return nil
}

// runQuery is query's run: one statement against the database opts name,
// its rows written to ios.Out.
func runQuery(ctx context.Context, opts *queryOptions, ios *IO) error {
	db, path, err := openQueryDB(ctx, opts, ios)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := checkOneStatement(ctx, db, opts.SQL); err != nil {
		return err
	}
	if err := checkToolUses(ctx, db, path, opts, ios); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, opts.SQL)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w%s", path, err, usageModeHint(ctx, db, opts.SQL, err))
	}
	defer rows.Close()
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	defer out.Flush()
	return writeRows(out, rows, opts, path)
}

// openQueryDB opens the database a query reads, read-only: the partitioned
// roots of --from, or queryDatabase's; path names it in messages.
func openQueryDB(ctx context.Context, opts *queryOptions, ios *IO) (db *sql.DB, path string, err error) {
	if len(opts.From) > 0 {
		db, err = export.OpenRootsCached(ctx, opts.From, export.FromCacheDir(), nil)
		return db, strings.Join(opts.From, ", "), err
	}
	if path, err = queryDatabase(ctx, ios, opts); err != nil {
		return nil, "", err
	}
	if db, err = export.OpenDB(path + "?access_mode=READ_ONLY"); err != nil {
		return nil, "", fmt.Errorf("duckdb %s: %w", path, err)
	}
	return db, path, nil
}
