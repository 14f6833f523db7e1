package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/report"
)

// queryDatabase is the database a query reads: --duckdb, the report
// database of the PATHs, or that of the default roots; an error that says
// what exists when it is missing.
func queryDatabase(ctx context.Context, ios *IO, opts *queryOptions) (string, error) {
	paths := opts.Paths
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
