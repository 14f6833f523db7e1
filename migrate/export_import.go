package migrate

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomicTimed is [WriteFileAtomic] for files whose times come from
// elsewhere (import: a copy carries its source's mtime), with two
// differences:
//
//   - meta's access and modification times are set on the temporary file
//     before its fsync, so the rename publishes a file that already has
//     them: a crash at any instant leaves target either as it was or
//     complete with the right mtime (WriteFileAtomic sets them after the
//     rename);
//   - check receives the hex SHA-256 of the bytes written, so that the
//     caller can journal it before the rename.
//
// On any error target is untouched and no temporary file is left. It
// returns the hex SHA-256 of the bytes written.
func WriteFileAtomicTimed(target string, meta FileMeta, noReplace bool, write func(w io.Writer) error, check func(sha256 string) error) (string, error) {
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, tempPattern(target))
	if err != nil {
		return "", fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	name := tmp.Name()
	fail := func(err error) (string, error) {
		tmp.Close()
		os.Remove(name)
		return "", err
	}
	if err := tmp.Chmod(meta.Mode.Perm()); err != nil {
		return fail(fmt.Errorf("chmod %s: %w", name, err))
	}
	if meta.UID >= 0 && (meta.UID != os.Getuid() || meta.GID != os.Getgid()) {
		_ = tmp.Chown(meta.UID, meta.GID) // best effort: only root may give files away
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(fileWriter{tmp}, 256<<10)
	if err := write(io.MultiWriter(bw, h)); err != nil {
		return fail(fmt.Errorf("write %s: %w", name, err))
	}
	if err := bw.Flush(); err != nil {
		return fail(fmt.Errorf("write %s: %w", name, err))
	}
	if err := os.Chtimes(name, meta.Atime, meta.Mtime); err != nil {
		return fail(fmt.Errorf("set mtime of %s: %w", name, err))
	}
	if err := syncFile(tmp); err != nil {
		return fail(fmt.Errorf("fsync %s: %w", name, err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("close %s: %w", name, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if check != nil {
		if err := check(sum); err != nil {
			os.Remove(name)
			return "", err
		}
	}
	if noReplace {
		if err := moveNoReplace(name, target); err != nil {
			os.Remove(name)
			return "", err
		}
		if err := syncDir(dir); err != nil {
			return "", fmt.Errorf("fsync directory %s: %w", dir, err)
		}
		if err := os.Chtimes(target, meta.Atime, meta.Mtime); err != nil {
			return "", fmt.Errorf("set mtime of %s: %w", target, err)
		}
	} else if err := commitTemp(name, target, meta); err != nil {
		return "", err
	}
	return sum, nil
}
