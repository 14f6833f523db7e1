package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/export"
)

// What query refuses before running a statement, and the hints it adds to
// DuckDB's errors: each recognised by a typed error or the database's
// own record (export.ReadMode), never by an error's text.

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

// checkToolUses refuses a query of tool_uses (or tool_calls) on a report
// database whose report read no tool calls: the table is empty there, and
// the answer would look like "no tool calls".
func checkToolUses(ctx context.Context, db *sql.DB, path string, opts *queryOptions, ios *IO) error {
	skipped, err := export.ReadsSkippedToolUses(ctx, db, opts.SQL)
	if err != nil || !skipped {
		return nil
	}
	p := strings.Join(quoteArgs(opts.Paths), " ")
	if p != "" {
		p = " " + p
	}
	return fmt.Errorf("duckdb %s: this report database was made by a report that reads no tool calls, so tool_uses (and tool_calls) are empty in it: run '%s report tools%s' once (it fills them, and later reports keep them), then query again", path, progOr(ios.Prog), p)
}
