package report

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"
	"github.com/gofrs/flock"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// DBPath returns the cache database of a report over roots: the export's
// default database (export.DefaultDBPath) for the default roots, else
// sessions-<hash>.duckdb next to it, keyed by the set of roots, so that
// reports over different roots never remove each other's rows (an export
// removes the rows of files it no longer finds).
func DBPath(roots []ingest.Root, defaultRoots bool) (string, error) {
	def, err := export.DefaultDBPath()
	if err != nil || defaultRoots {
		return def, err
	}
	keys := make([]string, len(roots))
	for i, r := range roots {
		abs, err := filepath.Abs(r.Path)
		if err != nil {
			return "", fmt.Errorf("path %s: %w", r.Path, err)
		}
		keys[i] = abs + "\x00" + strconv.FormatBool(r.Recursive) + "\x00" + r.Source
	}
	sort.Strings(keys)
	h := sha256.New()
	prev := ""
	for i, k := range keys {
		if i > 0 && k == prev {
			continue
		}
		prev = k
		h.Write([]byte(k))
		h.Write([]byte{0xff})
	}
	return filepath.Join(filepath.Dir(def), "sessions-"+hex.EncodeToString(h.Sum(nil)[:8])+".duckdb"), nil
}

// dbMeta is what the report reads of the export's own state table
// (_sessions_etl, key/value). Missing keys read as zero values.
type dbMeta struct {
	mode               export.Mode
	noContent, withRaw bool
	costMode, pricing  string
	schemaVersion      int
}

// current returns an error when the database was written with another
// schema than this sessions-etl writes (its columns may differ: report
// --no-refresh on a cache of an older version); a refresh rebuilds it.
func (m dbMeta) current() error {
	if want := export.SchemaVersionOf(m.mode); m.schemaVersion != want {
		return fmt.Errorf("the database was written by another version of sessions-etl (schema version %d; this one reads %d): run the report without --no-refresh to rebuild it",
			m.schemaVersion, want)
	}
	return nil
}

// metaTable is export's state table. Export does not expose it; the report
// reads the few keys it needs (see the issue note).
const metaTable = "_sessions_etl"

// readMeta reads the export state of db; ok is false when there is none.
func readMeta(ctx context.Context, db *sql.DB) (m dbMeta, ok bool, err error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()
		AND schema_name = 'main' AND table_name = ?`, metaTable).Scan(&n); err != nil {
		return m, false, err
	}
	if n == 0 {
		return m, false, nil
	}
	m.mode = export.ModeFull // databases made before the usage mode
	rows, err := db.QueryContext(ctx, "SELECT key, value FROM "+metaTable)
	if err != nil {
		return m, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return m, false, err
		}
		switch k {
		case "mode":
			m.mode = export.Mode(v)
		case "no_content":
			m.noContent = v == "true"
		case "with_raw":
			m.withRaw = v == "true"
		case "cost_mode":
			m.costMode = v
		case "pricing":
			m.pricing = v
		case "schema_version":
			m.schemaVersion, _ = strconv.Atoi(v)
		}
	}
	return m, true, rows.Err()
}

// openReadOnly opens the database at path for reading; its errors do not
// name the path (callers do).
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such database")
		}
		return nil, err
	}
	return export.OpenDB(path + "?access_mode=READ_ONLY")
}

// lockDB serializes reports on one database: the ingest writes it, and
// DuckDB refuses a second writer (or a reader during a write) outright.
// Readers (NoRefresh) share the lock.
func lockDB(ctx context.Context, path string, shared bool) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("duckdb %s: %w", path, err)
	}
	fl := flock.New(path + ".lock")
	var ok bool
	var err error
	if shared {
		ok, err = fl.TryRLockContext(ctx, 50*time.Millisecond)
	} else {
		ok, err = fl.TryLockContext(ctx, 50*time.Millisecond)
	}
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not acquired")
		}
		return nil, fmt.Errorf("lock %s.lock: %w", path, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// refresh brings the database up to date with the roots (export.Run) and,
// when then is not nil, calls it with the database once committed. The
// report's own databases are ingested in export.ModeUsage: only what the
// reports read.
func refresh(ctx context.Context, o *Options, then func(context.Context, *sql.DB) error) (export.Summary, error) {
	eo := export.Options{Roots: o.Roots, Workers: o.Workers, DuckDBPath: o.DBPath, Progress: o.Progress,
		Mode: export.ModeUsage, CostMode: export.CostAuto, Prices: pricing.Default(), PricingID: TablePricingID(pricing.Default()),
		Then: then}
	// The report's own cache is made without tool_uses rows unless the
	// tools report reads them (export.Options.SkipToolUses: a tenth of a
	// cold report); the first tools report rebuilds it with them, and it
	// keeps them from then on. query refuses tool_uses/tool_calls on a
	// cache made without them (cmd_query.go).
	eo.SkipToolUses = o.Managed && o.Kind != Tools && !o.withTools
	if !o.Managed {
		// A database given with --db: keep its mode and content options
		// (changing them rebuilds it; a new one is made in the usage mode),
		// and cost it as `export --cost --pricing` would.
		eo.CostMode, eo.Prices, eo.PricingID = o.CostMode, o.Prices, o.PricingID
		if _, err := os.Stat(o.DBPath); err == nil {
			db, err := openReadOnly(o.DBPath)
			if err != nil {
				return export.Summary{}, fmt.Errorf("duckdb %s: %w", o.DBPath, err)
			}
			m, ok, err := readMeta(ctx, db)
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return export.Summary{}, fmt.Errorf("duckdb %s: %w", o.DBPath, err)
			}
			if ok {
				eo.Mode, eo.NoContent, eo.WithRaw = m.mode, m.noContent, m.withRaw
			}
		}
	}
	sum, err := export.Run(ctx, eo)
	if err != nil {
		return sum, fmt.Errorf("ingest into %s: %w", o.DBPath, err)
	}
	return sum, nil
}
