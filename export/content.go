package export

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The content_blocks dataset holds most of an export's bytes (message text,
// tool output). It is written straight from the rows of the files read, in
// the order they are loaded, and never read back from DuckDB: a run writes
// the blocks of the files it read as new part files
// (part-g<generation>-<n>.parquet, file ids ascending), keeps the part
// files of earlier runs whose files did not change (hard links into the new
// dataset directory), and rewrites, without the rows of changed or deleted
// files, the few parts that held them. Without a DuckDB sink the blocks are
// not stored in the state database at all.

// contentWriter writes content_blocks rows into new part files in a
// staging directory, in a goroutine of its own.
type contentWriter struct {
	dir     string
	machine driver.Value // the machine column
	in      chan contentBatch
	done    chan error
	pw      *partWriter
	vals    []driver.Value
	err     error
}

type contentBatch struct {
	fileID    int64
	sessionID string
	blocks    []blockRow
}

// contentPartPrefix names the part files a run of generation gen writes.
func contentPartPrefix(gen int64) string { return fmt.Sprintf("part-g%06d-", gen) }

func newContentWriter(parent string, gen int64, machine string, alloc memory.Allocator) (*contentWriter, error) {
	dir, err := mkdirTemp(parent, "."+TableContentBlocks+".new-")
	if err != nil {
		return nil, err
	}
	cw := &contentWriter{dir: dir, machine: machine, in: make(chan contentBatch, 2), done: make(chan error, 1),
		pw: newPartWriter(dir, contentPartPrefix(gen), ContentBlocksTable, alloc, false)}
	cw.pw.startAsync() // gathering rows and compressing row groups take about as long: overlap them
	go cw.loop(cw.in)
	return cw, nil
}

func (cw *contentWriter) loop(in <-chan contentBatch) {
	var err error
	for b := range in {
		if err != nil {
			continue // drain
		}
		fid, sid := driver.Value(b.fileID), driver.Value(b.sessionID)
		for i := range b.blocks {
			cw.vals = append(b.blocks[i].values(cw.vals[:0], fid, sid), cw.machine)
			if err = cw.pw.add(cw.vals); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = cw.pw.close()
	}
	cw.pw.abort()
	cw.done <- err
}

// add queues the blocks of one file; it fails once the writer has failed.
func (cw *contentWriter) add(ctx context.Context, b contentBatch) error {
	select {
	case err := <-cw.done:
		cw.err = err
		if err == nil {
			err = errors.New("content writer stopped")
		}
		cw.done <- err
		return err
	default:
	}
	select {
	case cw.in <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish waits for the writer and returns its error.
func (cw *contentWriter) finish() error {
	if cw.in != nil {
		close(cw.in)
		cw.in = nil
		cw.err = <-cw.done
	}
	return cw.err
}

// discard stops the writer and removes what it wrote.
func (cw *contentWriter) discard() {
	_ = cw.finish()
	os.RemoveAll(cw.dir)
}

// buildContentDataset makes the new content_blocks dataset in tmp: the
// parts of old (the current dataset directory) that hold no stale file id
// are linked, the others rewritten without the stale rows, and the new
// parts are moved in. With full, old is ignored. It returns how many rows
// of old it left out.
func buildContentDataset(tmp, old, newParts string, stale map[int64]bool, full bool, gen int64, alloc memory.Allocator) (removed int64, err error) {
	if !full {
		olds, _ := filepath.Glob(filepath.Join(old, "*.parquet"))
		sort.Strings(olds)
		rewritten := 0
		for _, p := range olds {
			lo, hi, n, err := fileIDRange(p)
			if err != nil {
				return removed, err
			}
			if n == 0 {
				continue // an empty table's schema-only part
			}
			touched := false
			for id := range stale {
				if id >= lo && id <= hi {
					touched = true
					break
				}
			}
			if !touched {
				if err := linkOrCopy(p, filepath.Join(tmp, filepath.Base(p))); err != nil {
					return removed, err
				}
				continue
			}
			dropped, err := filterPart(p, tmp, fmt.Sprintf("%sr%03d-", contentPartPrefix(gen), rewritten), stale, alloc)
			if err != nil {
				return removed, err
			}
			removed += dropped
			rewritten++
		}
	}
	if newParts != "" {
		news, _ := filepath.Glob(filepath.Join(newParts, "*.parquet"))
		for _, p := range news {
			if err := os.Rename(p, filepath.Join(tmp, filepath.Base(p))); err != nil {
				return removed, err
			}
		}
	}
	have, _ := filepath.Glob(filepath.Join(tmp, "*.parquet"))
	if len(have) == 0 {
		// An empty table still has its schema.
		pw := newPartWriter(tmp, contentPartPrefix(gen), ContentBlocksTable, alloc, true)
		defer pw.abort()
		return removed, pw.close()
	}
	return removed, nil
}

// fileIDRange returns the smallest and largest file_id of a part file, from
// its row group statistics, and its row count.
func fileIDRange(path string) (lo, hi int64, rows int64, err error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, 0, 0, err
	}
	defer rdr.Close()
	md := rdr.MetaData()
	col := md.Schema.ColumnIndexByName("file_id")
	if col < 0 {
		return 0, 0, 0, fmt.Errorf("%s: no file_id column", path)
	}
	first := true
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		if rg.NumRows() == 0 {
			continue
		}
		cc, err := rg.ColumnChunk(col)
		if err != nil {
			return 0, 0, 0, err
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			return 0, 1<<63 - 1, md.NumRows, nil // no statistics: treat as touching everything
		}
		is, ok := st.(interface {
			Min() int64
			Max() int64
		})
		if !ok {
			return 0, 1<<63 - 1, md.NumRows, nil
		}
		if first || is.Min() < lo {
			lo = is.Min()
		}
		if first || is.Max() > hi {
			hi = is.Max()
		}
		first = false
	}
	return lo, hi, md.NumRows, nil
}

// filterPart copies the rows of part p whose file_id is not stale into new
// part files named prefix… in dir, and returns how many it left out.
func filterPart(p, dir, prefix string, stale map[int64]bool, alloc memory.Allocator) (dropped int64, err error) {
	rdr, err := file.OpenParquetFile(p, false)
	if err != nil {
		return 0, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 8192}, alloc)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	pw := newPartWriter(dir, prefix, ContentBlocksTable, alloc, false)
	defer pw.abort()
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) || (err == nil && rec == nil) {
			break
		}
		if err != nil {
			return dropped, err
		}
		ids := rec.Column(0).(*array.Int64)
		start := -1
		flush := func(end int) error {
			if start < 0 {
				return nil
			}
			s := rec.NewSlice(int64(start), int64(end))
			defer s.Release()
			start = -1
			return pw.addRecord(s)
		}
		for i := 0; i < ids.Len(); i++ {
			if stale[ids.Value(i)] {
				dropped++
				if err := flush(i); err != nil {
					return dropped, err
				}
			} else if start < 0 {
				start = i
			}
		}
		if err := flush(ids.Len()); err != nil {
			return dropped, err
		}
	}
	return dropped, pw.close()
}

// linkOrCopy makes dst the same file as src: a hard link, else a copy.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := createFile(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// isStagingName reports whether a directory entry of the Parquet directory
// is a leftover of an interrupted run.
func isStagingName(name string) bool {
	return strings.HasPrefix(name, ".") && (strings.Contains(name, ".tmp-") || strings.Contains(name, ".new-"))
}
