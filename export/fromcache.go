package export

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fromCacheVersion changes when what a cache of OpenRootsCached holds
// changes in a way its fingerprint does not see.
const fromCacheVersion = 1

// fromFingerprintKey is the cache's fingerprint in its state table.
const fromFingerprintKey = "from_fingerprint"

// OpenRootsCached is OpenRoots answered from a cache: the database
// OpenRoots builds from the roots, kept in a DuckDB file under cacheDir
// (from-<hash of the roots and prep ID>.duckdb), opened read-only. It is used
// while its fingerprint is the roots' one: every Parquet file of every
// table (path, size, modification time, inode), the schema version and
// the executable (its size and modification time: another build may count
// otherwise); else it is rebuilt (into a temporary file renamed over it,
// so that concurrent reports each read a whole cache). Without cacheDir,
// or when the cache cannot be written, the roots are read into memory as
// OpenRoots does. Building the tables once is most of OpenRoots' time (a
// 20-machine root: BENCHMARKS.md, issue 15).
//
// prep, when not nil, is applied to a cache once built (report re-prices
// the usage with its price table there, so that it answers in SQL); its
// ID is part of the cache's name and fingerprint.
func OpenRootsCached(ctx context.Context, roots []string, cacheDir string, prep *FromPrep) (*sql.DB, error) {
	if cacheDir == "" || len(roots) == 0 {
		return OpenRoots(ctx, roots, "")
	}
	abs := make([]string, len(roots))
	for i, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		abs[i] = a
	}
	prepID := ""
	if prep != nil {
		prepID = prep.ID
	}
	fp, err := rootsFingerprint(abs, prepID)
	if err != nil {
		return OpenRoots(ctx, roots, "") // OpenRoots says what is wrong with the roots
	}
	key := sha256.Sum256([]byte(strings.Join(append(abs, prepID), "\x00")))
	path := filepath.Join(cacheDir, "from-"+hex.EncodeToString(key[:8])+".duckdb")
	if db, ok := openFromCache(ctx, path, fp); ok {
		return db, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return OpenRoots(ctx, roots, "")
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path + ".tmp-" + hex.EncodeToString(rnd[:])
	defer func() {
		os.Remove(tmp)
		os.Remove(tmp + ".wal")
		os.RemoveAll(tmp + ".tmp")
	}()
	db, err := openRootsChecked(ctx, tmp, roots, "")
	if err != nil {
		if _, serr := os.Stat(tmp); serr != nil {
			return OpenRoots(ctx, roots, "") // the cache could not be made
		}
		return nil, err // the roots could not be read
	}
	// The ingest issues, a view over every Parquet file of the table
	// in OpenRoots (one per machine and month), are read by every
	// report (its problem files): a table in the cache (0.8 of a 1.1 s
	// warm report of a 20-machine month root).
	for _, q := range []string{
		"CREATE TABLE _ingest_issues AS SELECT * FROM " + TableIngestIssues,
		"DROP VIEW " + TableIngestIssues,
		"ALTER TABLE _ingest_issues RENAME TO " + TableIngestIssues,
	} {
		if err == nil {
			_, err = db.ExecContext(ctx, q)
		}
	}
	if err == nil && prep != nil {
		err = prep.Apply(ctx, db)
	}
	if err == nil {
		_, err = db.ExecContext(ctx, "INSERT INTO "+metaTable+" VALUES (?, ?)", fromFingerprintKey, fp)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(tmp, path) != nil {
		return OpenRoots(ctx, roots, "")
	}
	if db, ok := openFromCache(ctx, path, fp); ok {
		return db, nil
	}
	return OpenRoots(ctx, roots, "")
}

// FromPrep is what OpenRootsCached does to a cache once built, on the
// open database (writable; OpenRoots' tables and views, its state table).
// ID names it: caches with different IDs are different files.
type FromPrep struct {
	ID    string
	Apply func(ctx context.Context, db *sql.DB) error
}

// SetState records key = value in the state table of a database being
// prepared (FromPrep.Apply), where reports read it.
func SetState(ctx context.Context, db *sql.DB, key, value string) error {
	_, err := db.ExecContext(ctx, "INSERT OR REPLACE INTO "+metaTable+" VALUES (?, ?)", key, value)
	return err
}

// openFromCache opens the cache at path read-only when its fingerprint is
// fp.
func openFromCache(ctx context.Context, path, fp string) (*sql.DB, bool) {
	if _, err := os.Stat(path); err != nil {
		return nil, false
	}
	db, err := OpenDB(dsn(path, map[string]string{"access_mode": "READ_ONLY", "memory_limit": "256MB"}))
	if err != nil {
		return nil, false
	}
	var got string
	if err := db.QueryRowContext(ctx, "SELECT value FROM "+metaTable+" WHERE key = ?", fromFingerprintKey).Scan(&got); err != nil || got != fp {
		db.Close()
		return nil, false
	}
	db.SetMaxOpenConns(1)
	return db, true
}

// rootsFingerprint hashes what the database OpenRoots builds from the
// roots depends on: each table's Parquet files (relative path, size,
// modification time, inode where there is one), in order, the schema
// version, fromCacheVersion and the running executable.
func rootsFingerprint(roots []string, prepID string) (string, error) {
	h := sha256.New()
	var b [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	str := func(s string) {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
	str("sessions-etl from cache " + strconv.Itoa(fromCacheVersion) + " schema " + strconv.Itoa(SchemaVersion))
	str(prepID)
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			str(exe)
			num(uint64(fi.Size()))
			num(uint64(fi.ModTime().UnixNano()))
		}
	}
	for _, r := range roots {
		str(r)
		for _, t := range Tables {
			dir := filepath.Join(r, t.Name)
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() || !strings.HasSuffix(p, ".parquet") {
					return nil
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				str(p[len(r):])
				num(uint64(fi.Size()))
				num(uint64(fi.ModTime().UnixNano()))
				num(fileInode(fi))
				return nil
			})
			if err != nil {
				return "", fmt.Errorf("%s: %w", dir, err)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// FromCacheDir is the directory of OpenRootsCached's caches: that of
// DefaultDBPath ("" when there is none).
func FromCacheDir() string {
	def, err := DefaultDBPath()
	if err != nil {
		return ""
	}
	return filepath.Dir(def)
}
