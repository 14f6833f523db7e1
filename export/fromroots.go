package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessions-etl/sessions-etl/queries"
)

// OpenRoots opens an in-memory DuckDB database holding the tables of one or
// more partitioned Parquet roots (several machines' exports; SPEC.md §7.7),
// laid out as an export database, so that reports answer from it as from
// their own: files, sessions and usage are tables, entries, content_blocks
// and ingest_issues views over the Parquet files; the views of
// queries/views.sql are defined. File ids are renumbered across machines
// (files.file_id is per machine). usage.counted applies SPEC.md §4's
// identity rule across every machine, as the root's views.sql does: a
// record counted by several machines (the same entry id and timestamp, or
// for v1 records the same kind, timestamps and tokens) stays counted only
// on the machine whose copy is in the session with the oldest header (then
// the machine name); its other copies get counted = false and
// duplicate_of_session_id. The database records no price table, so reports
// price it again with theirs.
func OpenRoots(ctx context.Context, roots []string, memoryLimit string) (db *sql.DB, err error) {
	return openRoots(ctx, "", roots, memoryLimit)
}

// openRoots is OpenRoots into the database at path ("": in memory).
func openRoots(ctx context.Context, path string, roots []string, memoryLimit string) (db *sql.DB, err error) {
	if len(roots) == 0 {
		return nil, errors.New("no Parquet root")
	}
	globs := map[string]string{}
	for _, t := range Tables {
		var list []string
		for _, r := range roots {
			abs, err := filepath.Abs(r)
			if err != nil {
				return nil, err
			}
			fi, err := os.Stat(filepath.Join(abs, t.Name))
			if err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("%s: not a partitioned Parquet root (no %s directory; export --partition-by writes one)", r, t.Name)
			}
			list = append(list, "'"+strings.ReplaceAll(filepath.Join(abs, t.Name, "**", "*.parquet"), "'", "''")+"'")
		}
		globs[t.Name] = "read_parquet([" + strings.Join(list, ", ") + "], hive_partitioning = true, union_by_name = true)"
	}
	if memoryLimit == "" {
		memoryLimit = "256MB"
	}
	// preserve_insertion_order=false: the tables are built from many small
	// Parquet files (one per machine and partition); in order, DuckDB keeps
	// a partly filled row group per file and column until it merges them,
	// which took 3.5 s and most of the memory limit for the usage of a
	// 20-machine team of 279 files (0.9 s without; BENCHMARKS.md). No
	// statement here or in the reports relies on the tables' row order.
	db, err = OpenDB(dsn(path, map[string]string{"memory_limit": memoryLimit, "preserve_insertion_order": "false"}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	defer func() {
		if err != nil {
			db.Close()
			db = nil
		}
	}()
	// sel is the table's columns in order, file_id taken from the map.
	sel := func(t *Table, alias string) string {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			if c.Name == "file_id" {
				cols[i] = "m.file_id"
			} else {
				cols[i] = alias + "." + c.Name
			}
		}
		return strings.Join(cols, ", ")
	}
	stmts := []string{
		"CREATE TABLE file_map AS SELECT machine, file_id AS machine_file_id, row_number() OVER (ORDER BY machine, file_id) AS file_id FROM " +
			globs[TableFiles],
	}
	for _, t := range Tables {
		kind := "VIEW"
		switch t {
		case FilesTable, SessionsTable, UsageTable:
			kind = "TABLE"
		}
		stmts = append(stmts, fmt.Sprintf("CREATE %s %s AS SELECT %s FROM %s x LEFT JOIN file_map m ON m.machine = x.machine AND m.machine_file_id = x.file_id",
			kind, t.Name, sel(t, "x"), globs[t.Name]))
	}
	stmts = append(stmts,
		`UPDATE usage SET counted = false, duplicate_of_session_id = w.owner_session
FROM (SELECT u.rowid AS rid, u.machine,
             first_value(u.machine) OVER w AS owner, first_value(u.session_id) OVER w AS owner_session
      FROM usage u LEFT JOIN sessions s USING (file_id)
      WHERE u.counted
      WINDOW w AS (PARTITION BY u.copy_key_a IS NULL, coalesce(u.copy_key_a, u.copy_key_b)
                   ORDER BY s.created_at NULLS LAST, u.machine, u.file_id)) w
WHERE usage.rowid = w.rid AND w.machine <> w.owner`,
		"CREATE TABLE "+metaTable+" (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
		"INSERT INTO "+metaTable+" VALUES ('schema_version', '"+strconv.Itoa(SchemaVersion)+"'), ('mode', 'full'), ('from_roots', 'true')",
	)
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("read %s: %w", strings.Join(roots, ", "), err)
		}
	}
	for _, v := range queries.Views() {
		if _, err := db.ExecContext(ctx, queries.CreateView(v)); err != nil {
			return nil, fmt.Errorf("view %s: %w", v.Name, err)
		}
	}
	return db, nil
}
