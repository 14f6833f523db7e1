package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// duckdbMagic is at byte 8 of every DuckDB database file (after the
// header checksum).
var duckdbMagic = []byte("DUCK")

// IsDatabaseFile reports whether the file at path starts like a DuckDB
// database: a 0-byte file (a full disk while DuckDB created it) or any
// other content is not one.
func IsDatabaseFile(path string) (bool, error) {
	f, err := fstx.OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		return false, err
	}
	return bytes.Equal(hdr[8:12], duckdbMagic), nil
}

// createDatabase makes a new, initialised (checkpointed) DuckDB database
// at path through a temporary name renamed into place: a crash or a full
// disk while DuckDB writes its first blocks leaves no file at path that
// every later run would refuse ("not a valid DuckDB database file"), only
// a temporary file the next run removes. A database that appeared at path
// meanwhile is kept.
func createDatabase(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, _ = fstx.CleanStaleTemps(dir)
	tmp, err := fstx.TempName(path)
	if err != nil {
		return err
	}
	defer func() {
		os.Remove(tmp)
		os.Remove(tmp + ".wal")
	}()
	db, err := OpenDB(tmp)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "CHECKPOINT")
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if ok, err := IsDatabaseFile(tmp); err != nil || !ok {
		return fmt.Errorf("new database %s is incomplete (%v)", tmp, err)
	}
	if err := fstx.SyncFile(tmp); err != nil {
		return err
	}
	if err := fstx.Faults.RenameNoReplace(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // created meanwhile by another run: use it
		}
		return err
	}
	return fstx.SyncDir(dir)
}
