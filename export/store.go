package export

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/queries"
)

// metaTable holds the export's own state in the database: schema version,
// generation, the options the rows were made with.
const metaTable = "_sessions_etl"

// store is the DuckDB database that is both the DuckDB sink and the
// incremental state of every export. Writes of a run go through one driver
// connection, inside one transaction.
type store struct {
	path      string
	machine   string // the machine column's value (Options.Machine)
	connector *duckdb.Connector
	db        *sql.DB     // reads outside the run's transaction
	conn      driver.Conn // the run's connection
	// memLimit is DuckDB's memory_limit in bytes (0: unknown, never
	// raised); baseLimit the run's own.
	memLimit, baseLimit int64
}

// meta is what the database says about the export it holds.
type meta struct {
	schemaVersion int
	mode          Mode
	generation    int64
	noContent     bool
	withRaw       bool
	noToolUses    bool // ModeUsage made with Options.SkipToolUses: tool_uses is empty
	costMode      string
	pricing       string // fingerprint of the price table the calculated costs come from
	viewsHash     string
	tableGen      map[string]int64 // generation in which each table last changed
	roots         []string         // the roots of the last run (rootPaths)
	machine       string           // the machine column (Options.Machine)
}

// dsn builds a duckdb-go DSN with configuration options.
func dsn(path string, opts map[string]string) string {
	if len(opts) == 0 {
		return path
	}
	q := url.Values{}
	for k, v := range opts {
		q.Set(k, v)
	}
	return path + "?" + q.Encode()
}

// attachAlias is the name the database has while a run works on it with
// row groups of rowGroupRows rows.
const attachAlias = "sessions_etl_export"

// openStore opens (creating when missing) the database at path for a run.
// With rowGroupRows > 0 the database is attached with that row group size
// (DuckDB's default is 122 880 rows) under attachAlias, the default
// database of every connection.
func openStore(ctx context.Context, path string, cfg map[string]string, rowGroupRows int) (*store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("duckdb %s: %w", path, err)
	}
	source := path
	var init func(driver.ExecerContext) error
	if rowGroupRows > 0 {
		// An in-memory instance that attaches the file: the row group
		// size is an option of ATTACH only. Spilled data goes where DuckDB
		// puts it for a file database.
		source = ""
		cfg["temp_directory"] = path + ".tmp"
		attach := fmt.Sprintf("ATTACH IF NOT EXISTS '%s' AS %s (ROW_GROUP_SIZE %d)",
			strings.ReplaceAll(path, "'", "''"), attachAlias, rowGroupRows)
		init = func(e driver.ExecerContext) error {
			if _, err := e.ExecContext(ctx, attach, nil); err != nil {
				return err
			}
			_, err := e.ExecContext(ctx, "USE "+attachAlias, nil)
			return err
		}
	}
	connector, err := NewConnector(dsn(source, cfg), init)
	if err != nil {
		return nil, fmt.Errorf("duckdb %s: %w", path, err)
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		connector.Close()
		return nil, fmt.Errorf("duckdb %s: %w", path, err)
	}
	st := &store{path: path, connector: connector, db: sql.OpenDB(connector), conn: conn}
	if n, ok := parseBytes(cfg["memory_limit"]); ok {
		st.memLimit, st.baseLimit = n, n
	}
	return st, nil
}

// hugeStringBytes is the size from which a string value makes the store
// check that DuckDB's memory limit can hold it.
const hugeStringBytes = 8 << 20

// fitValue raises DuckDB's memory limit, when it is below, to the run's
// limit plus 1.25 times n: DuckDB keeps a string larger than its blocks in
// one buffer of its pool, so under a limit below its size (a 200 MB tool
// output under 96 MB) the append fails "could not allocate block" and the
// whole run with it. Raised once per larger value; never lowered.
func (s *store) fitValue(ctx context.Context, n int64) error {
	need := s.baseLimit + n + n/4
	if s.memLimit == 0 || need <= s.memLimit {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("SET memory_limit = '%dKB'", need>>10)); err != nil {
		return fmt.Errorf("duckdb %s: memory limit for a value of %d bytes: %w", s.path, n, err)
	}
	s.memLimit = need
	return nil
}

func (s *store) close() error {
	var errs []error
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
		s.conn = nil
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
		s.db = nil
	}
	if s.connector != nil {
		errs = append(errs, s.connector.Close())
		s.connector = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("duckdb %s: %w", s.path, err)
	}
	return nil
}

// exec runs one statement on the run's connection.
func (s *store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	res, err := s.conn.(driver.ExecerContext).ExecContext(ctx, query, named)
	if err != nil {
		return 0, fmt.Errorf("duckdb %s: %w", s.path, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, nil
	}
	return n, nil
}

// queryRows runs a query on the run's connection and calls fn for each row.
func (s *store) queryRows(ctx context.Context, query string, fn func(vals []driver.Value) error) error {
	rows, err := s.conn.(driver.QueryerContext).QueryContext(ctx, query, nil)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w", s.path, err)
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("duckdb %s: %w", s.path, err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
}

// tablesExist reports which of names exist in the main schema.
func (s *store) existingTables(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.queryRows(ctx, "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'",
		func(v []driver.Value) error {
			out[v[0].(string)] = true
			return nil
		})
	return out, err
}

// loadMeta reads the export state; ok is false for a database without one.
// A database holding tables of the export's names but no state is not
// ours: loadMeta refuses it rather than overwrite someone's tables.
func (s *store) loadMeta(ctx context.Context) (m meta, ok bool, err error) {
	tables, err := s.existingTables(ctx)
	if err != nil {
		return m, false, err
	}
	if !tables[metaTable] {
		for _, t := range allTables {
			if tables[t.Name] {
				return m, false, fmt.Errorf("duckdb %s: has a table %q but is not a sessions-etl export database", s.path, t.Name)
			}
		}
		return m, false, nil
	}
	m.tableGen = map[string]int64{}
	m.mode = ModeFull // databases of exports before the usage mode
	err = s.queryRows(ctx, "SELECT key, value FROM "+metaTable, func(v []driver.Value) error {
		k, val := v[0].(string), v[1].(string)
		switch {
		case k == "schema_version":
			m.schemaVersion, _ = strconv.Atoi(val)
		case k == "mode":
			m.mode = Mode(val)
		case k == "generation":
			m.generation, _ = strconv.ParseInt(val, 10, 64)
		case k == "no_content":
			m.noContent = val == "true"
		case k == "with_raw":
			m.withRaw = val == "true"
		case k == "no_tool_uses":
			m.noToolUses = val == "true"
		case k == "cost_mode":
			m.costMode = val
		case k == "pricing":
			m.pricing = val
		case k == "views":
			m.viewsHash = val
		case k == "roots":
			m.roots = decodeRoots(val)
		case k == "machine":
			m.machine = val
		case strings.HasPrefix(k, "table_generation."):
			m.tableGen[strings.TrimPrefix(k, "table_generation.")], _ = strconv.ParseInt(val, 10, 64)
		}
		return nil
	})
	return m, true, err
}

// ReadMode returns the mode of the export held by db, a database opened by
// the caller (read-only is enough); ok is false when db holds no export.
// Databases written before the usage mode existed are ModeFull.
func ReadMode(ctx context.Context, db *sql.DB) (mode Mode, ok bool, err error) {
	info, ok, err := ReadInfo(ctx, db)
	return info.Mode, ok, err
}

// DBInfo is what an export database says about itself.
type DBInfo struct {
	Mode Mode
	// Roots are the paths (files or directories, absolute) its last run
	// read; nil for databases written before they were recorded.
	Roots []string
}

// ReadInfo returns what the export held by db (opened by the caller,
// read-only is enough) says about itself; ok is false when db holds no
// export.
func ReadInfo(ctx context.Context, db *sql.DB) (info DBInfo, ok bool, err error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()
		AND schema_name = 'main' AND table_name = ?`, metaTable).Scan(&n); err != nil {
		return info, false, err
	}
	if n == 0 {
		return info, false, nil
	}
	var mode, roots sql.NullString
	err = db.QueryRowContext(ctx, "SELECT max(value) FILTER (WHERE key = 'mode'), max(value) FILTER (WHERE key = 'roots') FROM "+metaTable).
		Scan(&mode, &roots)
	if err != nil {
		return info, false, err
	}
	info.Mode = ModeFull
	if mode.Valid {
		info.Mode = Mode(mode.String)
	}
	if roots.Valid {
		info.Roots = decodeRoots(roots.String)
	}
	return info, true, nil
}

func encodeRoots(roots []string) string {
	b, _ := json.Marshal(roots)
	return string(b)
}

func decodeRoots(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// saveMeta writes m (inside the run's transaction).
func (s *store) saveMeta(ctx context.Context, m meta) error {
	kv := map[string]string{
		"schema_version": strconv.Itoa(m.schemaVersion),
		"mode":           string(m.mode),
		"generation":     strconv.FormatInt(m.generation, 10),
		"no_content":     strconv.FormatBool(m.noContent),
		"with_raw":       strconv.FormatBool(m.withRaw),
		"cost_mode":      m.costMode,
		"pricing":        m.pricing,
		"views":          m.viewsHash,
		"roots":          encodeRoots(m.roots),
		"machine":        m.machine,
	}
	if m.noToolUses {
		kv["no_tool_uses"] = "true"
	}
	for t, g := range m.tableGen {
		kv["table_generation."+t] = strconv.FormatInt(g, 10)
	}
	if _, err := s.exec(ctx, "DELETE FROM "+metaTable); err != nil {
		return err
	}
	for k, v := range kv {
		if _, err := s.exec(ctx, "INSERT INTO "+metaTable+" VALUES (?, ?)", k, v); err != nil {
			return err
		}
	}
	return nil
}

// createSchema drops every object of the export and creates the tables of
// mode (inside the run's transaction).
func (s *store) createSchema(ctx context.Context, mode Mode) error {
	for _, v := range queries.Views() {
		if _, err := s.exec(ctx, "DROP VIEW IF EXISTS "+v.Name); err != nil {
			return err
		}
	}
	for _, t := range allTables {
		if _, err := s.exec(ctx, "DROP TABLE IF EXISTS "+t.Name); err != nil {
			return err
		}
	}
	for _, t := range mode.Tables() {
		if _, err := s.exec(ctx, t.CreateSQL()); err != nil {
			return err
		}
	}
	if _, err := s.exec(ctx, "DROP TABLE IF EXISTS "+metaTable); err != nil {
		return err
	}
	_, err := s.exec(ctx, "CREATE TABLE "+metaTable+" (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")
	return err
}

// modeViews are the views of a database of mode m: those of
// queries/views.sql, where a ModeUsage database has tool_calls over
// tool_uses (queries/export.sql usage_mode_tool_calls) instead.
func modeViews(m Mode) []queries.Statement {
	vs := queries.Views()
	if m == ModeUsage {
		for i := range vs {
			if vs[i].Name == usageModeView {
				lean := queries.ExportStatement("usage_mode_" + usageModeView)
				vs[i].SQL, vs[i].File, vs[i].Line = lean.SQL, lean.File, lean.Line
			}
		}
	}
	return vs
}

// usageModeView is the view a ModeUsage database defines over tool_uses.
const usageModeView = "tool_calls"

// createViews (re)creates the views of mode.
func (s *store) createViews(ctx context.Context, mode Mode) error {
	for _, v := range modeViews(mode) {
		if _, err := s.exec(ctx, queries.CreateView(v)); err != nil {
			return fmt.Errorf("view %s (%s:%d): %w", v.Name, v.File, v.Line, err)
		}
	}
	return nil
}

// fileState is what the files table remembers of a file.
type fileState struct {
	id     int64
	size   int64
	mtime  int64 // Unix µs; -1 when unknown
	inode  int64
	status string
}

// loadFiles returns the files table keyed by path.
func (s *store) loadFiles(ctx context.Context) (map[string]fileState, int64, error) {
	out := map[string]fileState{}
	var maxID int64
	err := s.queryRows(ctx, "SELECT file_id, path, size_bytes, mtime, inode, status FROM files", func(v []driver.Value) error {
		fs := fileState{id: v[0].(int64), size: v[2].(int64), mtime: -1, status: v[5].(string)}
		if t, ok := v[3].(time.Time); ok {
			fs.mtime = t.UnixMicro()
		}
		if ino, ok := v[4].(int64); ok {
			fs.inode = ino
		}
		out[v[1].(string)] = fs
		maxID = max(maxID, fs.id)
		return nil
	})
	return out, maxID, err
}

// appender appends rows to one table on the run's connection.
type appender struct {
	path    string // the database
	t       *Table
	a       *duckdb.Appender
	rows    int64
	pending int64 // string bytes appended since the last flush
	st      *store
	row     []driver.Value // one row with the machine column
}

// appenderFlushBytes bounds the rows DuckDB's appender buffers before
// handing them to the table: without it the appender buffers 204 800 rows,
// which with tool outputs in them is gigabytes. DuckDB's memory outside
// its buffer pool grows with the size of each flush (measured, DuckDB sink
// alone on the 1 GB home: 1.2 GB RSS unbounded, 0.59 GB flushing every
// 64 MB, 0.53 GB every 16 MB, 0.46 GB every 4 MB, 0.38 GB every 1 MB, in
// the same time; smaller flushes gain nothing more).
var appenderFlushBytes int64 = 1 << 20

func (s *store) newAppender(t *Table) (*appender, error) {
	a, err := duckdb.NewAppenderFromConn(s.conn, "", t.Name)
	if err != nil {
		return nil, fmt.Errorf("duckdb %s: appender for %s: %w", s.path, t.Name, err)
	}
	return &appender{path: s.path, t: t, a: a, st: s, row: make([]driver.Value, len(t.Columns))}, nil
}

// append adds the rows held in vals (t.dataColumns() values per row: all
// but the machine, which the appender adds).
func (ap *appender) append(vals []driver.Value) error {
	n := ap.t.dataColumns()
	for i := 0; i+n <= len(vals); i += n {
		for _, v := range vals[i : i+n] {
			if s, ok := v.(string); ok && len(s) >= hugeStringBytes && ap.st != nil {
				if err := ap.st.fitValue(context.Background(), int64(len(s))); err != nil {
					return err
				}
			}
		}
		copy(ap.row, vals[i:i+n])
		ap.row[n] = ap.st.machine
		if err := ap.a.AppendRow(ap.row...); err != nil {
			return fmt.Errorf("duckdb %s: append to %s: %w", ap.path, ap.t.Name, err)
		}
		ap.rows++
		for _, v := range vals[i : i+n] {
			if s, ok := v.(string); ok {
				ap.pending += int64(len(s))
			}
		}
		if ap.pending >= appenderFlushBytes {
			if err := ap.a.Flush(); err != nil {
				return fmt.Errorf("duckdb %s: append to %s: %w", ap.path, ap.t.Name, err)
			}
			ap.pending = 0
		}
	}
	return nil
}

func (ap *appender) close() error {
	if ap.a == nil {
		return nil
	}
	err := ap.a.Close()
	ap.a = nil
	if err != nil {
		return fmt.Errorf("duckdb %s: append to %s: %w", ap.path, ap.t.Name, err)
	}
	return nil
}
