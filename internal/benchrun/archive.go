package main

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// The home as a .tar.zst given as PATH (SPEC.md §7.2), next to the plain
// tree: read in place, streaming (goal: at least half the plain tree's
// MB/s, peak RSS under 200 MiB). The archive is made once, in the work
// directory, by setup (not timed).
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		arch := filepath.Join(work, "home.tar.zst")
		return []stage{{name: "validate .tar.zst", compare: "validate",
			argv:   []string{bin, "validate", "--json", "--quiet", arch},
			setup:  func() error { return makeTarZst(home, arch) },
			okExit: []int{1}}}
	})
}

// makeTarZst writes the tree home as a zstd-compressed tar at arch, unless
// it is there and newer than home's manifest.
func makeTarZst(home, arch string) error {
	if a, err := os.Stat(arch); err == nil {
		if m, err := os.Stat(filepath.Join(home, "manifest.json")); err == nil && a.ModTime().After(m.ModTime()) {
			return nil
		}
	}
	tmp := arch + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw, err := zstd.NewWriter(f)
	if err != nil {
		f.Close()
		return err
	}
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == home {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	for _, c := range []io.Closer{tw, zw, f} {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, arch)
}
