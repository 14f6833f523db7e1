package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

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
// duplicate_of_session_id. Subagent roll-ups are decided again over every
// machine's sessions (a child read on any machine, SPEC.md §7.3), and
// entries.fork_copy_of over every machine's entries, so that a child, a
// synced file or a fork made on another machine is never counted twice,
// in usage or in tool calls. The database records no price table, so
// reports price it again with theirs.
//
// A machine publishes its six tables one swap each (publishMachine), so a
// reader may find some of its tables from its new export and others from
// its previous one, for the moment of the swaps or, after an export killed
// between them, until its next export. OpenRoots reads every part file's
// export id (ExportIDOf) before and after loading: when a machine's tables
// carry different ids, or the ids changed during the load (a file being
// read may have been swapped away: a read error is retried then too), it
// waits and loads again (openRetries times, openRetryWait apart), then fails with
// ErrMixedExports naming the machine rather than answer from a mix. The
// tables it loads (files, sessions, usage) are checked so; entries,
// content_blocks and ingest_issues are views, read when queried.
func OpenRoots(ctx context.Context, roots []string, memoryLimit string) (*sql.DB, error) {
	return openRootsChecked(ctx, "", roots, memoryLimit)
}

// openRootsChecked is OpenRoots into the database at path ("": in
// memory; the --from cache gives a file).
func openRootsChecked(ctx context.Context, path string, roots []string, memoryLimit string) (*sql.DB, error) {
	if len(roots) == 0 {
		return nil, errors.New("no Parquet root")
	}
	for attempt := 0; ; attempt++ {
		before, err := rootExports(roots)
		if err != nil {
			return nil, err
		}
		mixed := before.mixed()
		if mixed == "" {
			if path != "" {
				// A retry starts from an empty file.
				os.Remove(path)
				os.Remove(path + ".wal")
			}
			db, lerr := openRoots(ctx, path, roots, memoryLimit)
			after, err := rootExports(roots)
			if err != nil {
				if db != nil {
					db.Close()
				}
				return nil, err
			}
			if after.key() == before.key() {
				return db, lerr
			}
			// A machine published while the roots were read (a file
			// read may have been swapped away: lerr).
			if db != nil {
				db.Close()
			}
			mixed = "a machine published a new export while it was read"
			if lerr != nil {
				mixed += " (" + lerr.Error() + ")"
			}
		}
		if attempt == openRetries {
			return nil, fmt.Errorf("%w: %s", ErrMixedExports, mixed)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(openRetryWait):
		}
	}
}

// ErrMixedExports: a machine's tables in a root are from different
// exports (OpenRoots).
var ErrMixedExports = errors.New("a machine's tables are from different exports")

// OpenRoots' waits for a machine's publish to end: a publish swaps six
// directories (milliseconds); an export killed between two swaps leaves
// them mixed until the machine exports again.
var (
	openRetries   = 10
	openRetryWait = 200 * time.Millisecond
)

// exportIDs is, per root and machine ("root\x00machine"), each table's
// export ids (ExportIDOf of its part files, sorted; "-" when the machine
// has no directory in that table).
type exportIDs map[string]map[string][]string

// rootExports lists the export ids of every machine's part files in the
// roots (file names only: no file is opened).
func rootExports(roots []string) (exportIDs, error) {
	out := exportIDs{}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		for _, t := range Tables {
			ents, err := os.ReadDir(filepath.Join(abs, t.Name))
			if err != nil {
				continue // openRoots says what is missing
			}
			for _, e := range ents {
				m, ok := strings.CutPrefix(e.Name(), MachineColumn+"=")
				if !ok || !e.IsDir() {
					continue
				}
				ids := map[string]bool{}
				err := filepath.WalkDir(filepath.Join(abs, t.Name, e.Name()), func(p string, d fs.DirEntry, err error) error {
					if err != nil {
						return err
					}
					if id, ok := ExportIDOf(d.Name()); ok && !d.IsDir() {
						ids[id] = true
					}
					return nil
				})
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) { // swapped away while listed
						ids["-"] = true
					} else {
						return nil, err
					}
				}
				key := abs + "\x00" + m
				if out[key] == nil {
					out[key] = map[string][]string{}
				}
				for id := range ids {
					out[key][t.Name] = append(out[key][t.Name], id)
				}
				sort.Strings(out[key][t.Name])
			}
		}
	}
	return out, nil
}

// mixed describes the first machine whose tables are not all from one
// export, "" when there is none.
func (x exportIDs) mixed() string {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		byID := map[string][]string{}
		for _, t := range Tables {
			ids := x[k][t.Name]
			if len(ids) == 0 {
				ids = []string{"-"}
			}
			id := strings.Join(ids, "+")
			byID[id] = append(byID[id], t.Name)
		}
		if len(byID) < 2 {
			continue
		}
		var parts []string
		for id, ts := range byID {
			switch id {
			case "-":
				id = "none"
			case "":
				id = "an export without id"
			}
			parts = append(parts, strings.Join(ts, ", ")+" from "+id)
		}
		sort.Strings(parts)
		root, m, _ := strings.Cut(k, "\x00")
		return fmt.Sprintf("%s, machine %s: %s (an export of %s is publishing, or was interrupted: run it again)",
			root, m, strings.Join(parts, "; "), m)
	}
	return ""
}

// key is x as one comparable string.
func (x exportIDs) key() string {
	var lines []string
	for k, ts := range x {
		for t, ids := range ts {
			lines = append(lines, k+"|"+t+"|"+strings.Join(ids, "+"))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// openRoots loads the roots (OpenRoots, once).
func openRoots(ctx context.Context, path string, roots []string, memoryLimit string) (db *sql.DB, err error) {
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
	opened, err := OpenDB(dsn(path, map[string]string{"memory_limit": memoryLimit, "preserve_insertion_order": "false"}))
	if err != nil {
		return nil, err
	}
	db = opened
	db.SetMaxOpenConns(1)
	defer func() {
		if err != nil {
			opened.Close() // db is nil by now: the return set it
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
		case EntriesTable:
			continue // below, once the session order is known
		}
		stmts = append(stmts, fmt.Sprintf("CREATE %s %s AS SELECT %s FROM %s x LEFT JOIN file_map m ON m.machine = x.machine AND m.machine_file_id = x.file_id",
			kind, t.Name, sel(t, "x"), globs[t.Name]))
	}
	stmts = append(stmts,
		// Subagent roll-ups (SPEC.md §7.3) across every machine: a child
		// is found in any machine's sessions, as in one home. Each
		// machine decided only among its own files, so a roll-up whose
		// child is on another machine was counted there too. Parents are
		// resolved again first (a child's header may name a parent's path
		// on another machine), then which roll-up rows stand for children
		// read, then counted: a machine's own copies (its
		// duplicate_of_session_id) stay uncounted, the rest unless covered.
		queries.Export("resolve_parents"),
		// The session order over every machine (export.sql session_order,
		// then the machine name: a synced file is on several), and entries
		// with fork_copy_of decided over every machine (derive_fork_copies'
		// rule: the entry's oldest file in that order owns it), so that a
		// tool call copied into a fork or a synced file on another machine
		// counts once. A view: the order of files is all it keeps.
		`CREATE TABLE team_session_order AS
SELECT file_id, session_id, row_number() OVER (ORDER BY created_at ASC NULLS LAST, session_id, path, machine) AS ord
FROM sessions`,
		entriesView(globs[TableEntries]),
		queries.Export("derive_rollups"),
		`UPDATE usage SET counted = duplicate_of_session_id IS NULL AND NOT rollup_covered
WHERE counted IS DISTINCT FROM (duplicate_of_session_id IS NULL AND NOT rollup_covered)`,
		`UPDATE usage SET counted = false, duplicate_of_session_id = w.owner_session
FROM (SELECT u.rowid AS rid, u.machine,
             first_value(u.machine) OVER w AS owner, first_value(u.session_id) OVER w AS owner_session
      FROM usage u LEFT JOIN sessions s USING (file_id)
      WHERE u.counted
      WINDOW w AS (PARTITION BY u.copy_key_a IS NULL, coalesce(u.copy_key_a, u.copy_key_b)
                   ORDER BY s.created_at NULLS LAST, u.machine, u.file_id)) w
WHERE usage.rowid = w.rid AND w.machine <> w.owner`,
		// The rest rows of roll-ups read in part, from the children read on
		// any machine (their usage counted once, above); costed as
		// export's default --cost auto (reports price again anyway).
		queries.Export("derive_rollup_rest"),
		"CREATE TABLE "+metaTable+" (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
		"INSERT INTO "+metaTable+" VALUES ('schema_version', '"+strconv.Itoa(SchemaVersion)+"'), ('mode', 'full'), ('from_roots', 'true')",
	)
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("read %s: %w", strings.Join(roots, ", "), err)
		}
	}
	if _, err := db.ExecContext(ctx, queries.Export("apply_cost_mode"), string(CostAuto), false); err != nil {
		return nil, fmt.Errorf("read %s: %w", strings.Join(roots, ", "), err)
	}
	for _, v := range queries.Views() {
		if _, err := db.ExecContext(ctx, queries.CreateView(v)); err != nil {
			return nil, fmt.Errorf("view %s: %w", v.Name, err)
		}
	}
	return db, nil
}

// entriesView is the CREATE VIEW of OpenRoots' entries over the Parquet
// files glob: every machine's entries, file_id renumbered (file_map) and
// fork_copy_of decided across machines as queries/export.sql
// derive_fork_copies decides it in one home, over team_session_order.
func entriesView(glob string) string {
	cols := make([]string, len(EntriesTable.Columns))
	for i, c := range EntriesTable.Columns {
		switch c.Name {
		case "file_id":
			cols[i] = "x.team_file_id AS file_id"
		case "fork_copy_of":
			cols[i] = "s.session_id AS fork_copy_of"
		default:
			cols[i] = "x." + c.Name
		}
	}
	return `CREATE VIEW entries AS
WITH x AS (
  SELECT x.*, m.file_id AS team_file_id, o.ord AS team_ord
  FROM ` + glob + ` x
  LEFT JOIN file_map m ON m.machine = x.machine AND m.machine_file_id = x.file_id
  LEFT JOIN team_session_order o ON o.file_id = m.file_id
), a AS (
  SELECT copy_key, min(team_ord) AS a_ord FROM x GROUP BY copy_key
), b AS (
  SELECT content_key, min(team_ord) AS b_ord FROM x WHERE content_key IS NOT NULL GROUP BY content_key
)
SELECT ` + strings.Join(cols, ", ") + `
FROM x
JOIN a ON a.copy_key = x.copy_key
LEFT JOIN b ON b.content_key = x.content_key
LEFT JOIN team_session_order s
       ON s.ord = CASE WHEN a.a_ord <> x.team_ord AND (b.b_ord IS NULL OR b.b_ord = x.team_ord OR a.a_ord <= b.b_ord) THEN a.a_ord
                       WHEN b.b_ord <> x.team_ord THEN b.b_ord END`
}
