package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// The fingerprint of the roots, for the status line's answer cache: every
// directory and file below each root (as far as discovery would go: not
// below a non-recursive root, not into a skipped directory), each with its
// path, mode, size, modification time and, where the platform gives them,
// change time and inode. Any file written, added, removed, renamed or
// replaced changes it: an append changes the size and mtime, a rename or
// removal the directory's mtime, an atomic replace the inode and ctime.
// A symbolic link anywhere makes the roots unfit for the cache (the walk
// would not look behind it).

// errNoFingerprint says the roots cannot be fingerprinted safely.
var errNoFingerprint = errors.New("not fingerprinted")

// fpStat is what the fingerprint keeps of one directory entry.
type fpStat struct {
	mode         fs.FileMode
	size         int64
	mtime, ctime int64 // nanoseconds; ctime 0 where unknown
	ino          uint64
}

// fpHasher hashes entries in the walk's (sorted) order: each directory's
// path once, then its entries by name.
type fpHasher struct {
	h   hash.Hash
	buf []byte
}

func (f *fpHasher) add(kind byte, name string, st fpStat) {
	b := append(f.buf[:0], kind)
	b = append(b, name...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(st.mode))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.ctime))
	b = binary.LittleEndian.AppendUint64(b, st.ino)
	f.buf = b
	_, _ = f.h.Write(b)
}

func (f *fpHasher) dir(path string) {
	b := append(f.buf[:0], 'D')
	b = append(b, path...)
	b = append(b, 0)
	f.buf = b
	_, _ = f.h.Write(b)
}

// fingerprint hashes what the roots hold (see above).
func fingerprint(roots []ingest.Root) (string, error) {
	f := &fpHasher{h: sha256.New(), buf: make([]byte, 0, 512)}
	for _, r := range roots {
		fi, err := os.Lstat(r.Path)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return "", errNoFingerprint
		}
		f.add('R', r.Path, fpStatOf(fi))
		if !fi.IsDir() {
			continue
		}
		skip := make([]string, len(r.Skip))
		for i, p := range r.Skip {
			skip[i] = filepath.Clean(p)
		}
		if err := fingerprintDir(f, filepath.Clean(r.Path), r.Recursive, skip); err != nil {
			return "", errNoFingerprint
		}
	}
	return hex.EncodeToString(f.h.Sum(nil)), nil
}

// fpEntry is one entry of a directory being fingerprinted.
type fpEntry struct {
	name string
	st   fpStat
}

// fingerprintEntries hashes a directory's entries in name order and
// descends into its subdirectories (when recursive and not skipped) with
// walk.
func fingerprintEntries(f *fpHasher, dir string, ents []fpEntry, recursive bool, skip []string,
	walk func(f *fpHasher, dir string, recursive bool, skip []string) error) error {
	slices.SortFunc(ents, func(a, b fpEntry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	f.dir(dir)
	for _, e := range ents {
		if e.st.mode&fs.ModeSymlink != 0 {
			return errNoFingerprint
		}
		if e.st.mode.IsDir() && len(skip) > 0 && slices.Contains(skip, filepath.Join(dir, e.name)) {
			continue
		}
		f.add('E', e.name, e.st)
	}
	if !recursive {
		return nil
	}
	for _, e := range ents {
		if e.st.mode.IsDir() && (len(skip) == 0 || !slices.Contains(skip, filepath.Join(dir, e.name))) {
			if err := walk(f, filepath.Join(dir, e.name), recursive, skip); err != nil {
				return err
			}
		}
	}
	return nil
}
