package ingest

import (
	"bytes"
	"io"
)

// PeekMember opens the content of the archive member at path
// (ARCHIVE!/inner, decompressed when its name says so) only when that
// costs no pass over the archive: a zip member (read on its own), or a
// tar member discovery holds in memory (small members, SPEC.md §7.2's
// streaming: the stream is decompressed once). The member stays available
// to OpenContent: peeking consumes nothing. ok is false for a member of a
// tar whose content is not held (a larger one), or a path that is not a
// member.
func PeekMember(path string) (rc io.ReadCloser, ok bool) {
	ix, member, found := splitMember(path)
	if !found {
		return nil, false
	}
	ix.mu.Lock()
	ord, known := ix.ordinal[member]
	var src io.ReadCloser
	switch {
	case !known:
	case ix.format == ArchiveZip:
		if ix.zr != nil && ord < len(ix.zr.File) {
			if r, err := ix.zr.File[ord].Open(); err == nil {
				src = r
			}
		}
	default:
		if data, held := ix.pending[ord]; held {
			src = io.NopCloser(bytes.NewReader(data))
		}
	}
	ix.mu.Unlock()
	if src == nil {
		return nil, false
	}
	var r io.ReadCloser = &memberReader{rc: src, name: path, format: ix.format}
	if c := KindOf(baseName(member)).Compression; c != "" {
		d, err := decompressor(r, c)
		if err != nil {
			r.Close()
			return nil, false
		}
		r = struct {
			io.Reader
			io.Closer
		}{d, closers{d, r}}
	}
	return r, true
}
