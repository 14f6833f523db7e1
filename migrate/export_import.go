package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomicTimed is [WriteFileAtomic] for files whose times come from
// elsewhere (import: a copy carries its source's mtime). meta's access and
// modification times are set on the temporary file, and fsynced, before the
// rename, so a crash at any instant leaves target either as it was or
// complete with the right mtime; WriteFileAtomic sets them only after the
// rename. The times are set again after the rename (a no-op unless the file
// system changed them).
func WriteFileAtomicTimed(target string, meta FileMeta, noReplace bool, write func(w io.Writer) error, check func() error) (string, error) {
	h := sha256.New()
	tmp, err := writeTempFile(target, meta, func(w io.Writer) error { return write(io.MultiWriter(w, h)) })
	if err != nil {
		return "", err
	}
	if err := stampFile(tmp, meta); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if check != nil {
		if err := check(); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	if noReplace {
		if err := moveNoReplace(tmp, target); err != nil {
			os.Remove(tmp)
			return "", err
		}
		if err := syncDir(filepath.Dir(target)); err != nil {
			return "", fmt.Errorf("fsync directory %s: %w", filepath.Dir(target), err)
		}
		if err := os.Chtimes(target, meta.Atime, meta.Mtime); err != nil {
			return "", fmt.Errorf("set mtime of %s: %w", target, err)
		}
	} else if err := commitTemp(tmp, target, meta); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// stampFile sets meta's times on path and fsyncs the change.
func stampFile(path string, meta FileMeta) error {
	if err := os.Chtimes(path, meta.Atime, meta.Mtime); err != nil {
		return fmt.Errorf("set mtime of %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}
