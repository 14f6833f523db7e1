package export

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// Parquet layout limits: a row group holds at most RowGroupRows rows or
// about RowGroupBytes of column data; a part file is closed once it holds
// about PartFileBytes of column data (before compression: a changed file
// costs the rewrite of at most about that much of content_blocks); rows
// are read back from DuckDB in slices of files totalling about
// readSliceBytes of session data, so memory stays bounded. (16 MB row
// groups rather than 32: 40 MB less Go heap in an export to both sinks,
// and faster — fewer, smaller buffers to grow and zero.)
const (
	RowGroupRows   = 128 * 1024
	RowGroupBytes  = 16 << 20
	PartFileBytes  = 64 << 20
	readSliceBytes = 32 << 20
)

// The limits in force; tests shrink them to get many row groups and parts.
var (
	rowGroupBytes = RowGroupBytes
	partFileBytes = int64(PartFileBytes)
)

// MarkerFile, in the Parquet directory, records which generation of each
// table the datasets hold.
const MarkerFile = "_sessions_etl.json"

// Fault seams for tests.
var (
	mkdirTemp  = defaultMkdirTemp
	createFile = defaultCreateFile
)

// privateModes makes the Parquet directories and files the runs write
// 0700 and 0600 (Options.Private) instead of 0777 and 0666 less the
// umask. It is set by Run for the whole process while such a run writes.
var privateModes atomic.Int32

func dirPerm() os.FileMode {
	if privateModes.Load() > 0 {
		return 0o700
	}
	return 0o777
}

func filePerm() os.FileMode {
	if privateModes.Load() > 0 {
		return 0o600
	}
	return 0o666
}

// defaultMkdirTemp makes a staging directory with the dataset's final
// mode: it is renamed into place (os.MkdirTemp's 0700 would lock out
// every other reader of a shared root).
func defaultMkdirTemp(dir, pattern string) (string, error) {
	return fstx.MkdirTemp(dir, pattern, dirPerm())
}

// createdFilePerm is the mode os.OpenFile gives a new file in dir with
// filePerm(): filePerm() less the umask, learnt from a probe directory
// (reading the umask is not safe while other goroutines create files).
func createdFilePerm(dir string) os.FileMode {
	p, err := fstx.MkdirTemp(dir, ".mode-probe-", dirPerm())
	if err != nil {
		return filePerm() & 0o644
	}
	defer os.Remove(p)
	fi, err := os.Stat(p)
	if err != nil {
		return filePerm() & 0o644
	}
	return fi.Mode().Perm() & filePerm()
}

func defaultCreateFile(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm())
}

type marker struct {
	SchemaVersion int              `json:"schema_version"`
	Generation    int64            `json:"generation"`
	Tables        map[string]int64 `json:"tables"`
}

func readMarker(dir string) *marker {
	raw, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return nil
	}
	var m marker
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return &m
}

// contentUpdate says how the content_blocks dataset changes in a run.
type contentUpdate struct {
	newParts string         // staging directory of the parts written for the files read ("" when none)
	stale    map[int64]bool // file ids whose blocks leave the dataset
	full     bool           // the new parts are the whole dataset
}

// sinkResult is what writeParquetSink did.
type sinkResult struct {
	tables         []string // datasets rewritten
	contentRows    int64    // rows of content_blocks (-1 when it was not rewritten)
	contentRemoved int64
}

// writeParquetSink rewrites the datasets whose table changed since the
// Parquet directory was last written, then the marker. content_blocks is
// assembled from its new parts and its unchanged old ones (content.go); the
// other tables are read back from the state database, each by up to
// opts.Workers writers at once over fixed ranges of file ids (so the files
// written do not depend on scheduling). Every dataset is written into a new
// directory that replaces the old one whole.
func writeParquetSink(ctx context.Context, st *store, dir string, m meta, opts Options, cu contentUpdate) (res sinkResult, err error) {
	res.contentRows = -1
	mk := readMarker(dir)
	var todo []*Table
	for _, t := range Tables {
		fi, err := os.Stat(filepath.Join(dir, t.Name))
		if mk == nil || mk.SchemaVersion != SchemaVersion || mk.Tables[t.Name] != m.tableGen[t.Name] || err != nil || !fi.IsDir() {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return res, nil
	}
	slices, err := fileSlices(ctx, st)
	if err != nil {
		return res, err
	}
	// Progress of the write phase, in session bytes: each table to write
	// covers every file once (the content_blocks dataset when it is done),
	// and the tables count as one pass over the files, so the bar's total
	// is the bytes the reading phase showed.
	var fileBytes int64
	for _, s := range slices {
		fileBytes += s.bytes
	}
	if g, ok := opts.Progress.(ProgressTotal); ok {
		g.Grow(fileBytes)
	}
	wp := &writeProgress{pr: opts.Progress, tables: int64(len(todo))}
	groups := splitSlices(slices, opts.Workers)
	tmps := make([]string, len(todo))
	defer func() {
		for _, tmp := range tmps {
			if tmp != "" {
				os.RemoveAll(tmp)
			}
		}
	}()
	for i, t := range todo {
		if tmps[i], err = mkdirTemp(dir, "."+t.Name+".tmp-"); err != nil {
			return res, fmt.Errorf("parquet %s: %w", filepath.Join(dir, t.Name), err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Workers)
	for i, t := range todo {
		final := filepath.Join(dir, t.Name)
		if t == ContentBlocksTable {
			g.Go(func() error {
				removed, err := buildContentDataset(tmps[i], final, cu.newParts, cu.stale, cu.full, m.generation, opts.Allocator)
				if err != nil {
					return fmt.Errorf("parquet %s: %w", final, err)
				}
				wp.add(fileBytes)
				res.contentRemoved = removed
				return nil
			})
			continue
		}
		for k, grp := range groups {
			g.Go(func() error {
				if err := writeParts(gctx, st, tmps[i], t, k, grp, opts.Allocator, wp.add); err != nil {
					return fmt.Errorf("parquet %s: %w", final, err)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return res, err
	}
	for i, t := range todo {
		final := filepath.Join(dir, t.Name)
		if t == ContentBlocksTable {
			n, err := datasetRows(tmps[i])
			if err != nil {
				return res, fmt.Errorf("parquet %s: %w", final, err)
			}
			res.contentRows = n
		}
		if err := fstx.SyncDir(tmps[i]); err != nil {
			return res, fmt.Errorf("parquet %s: %w", final, err)
		}
		if err := fstx.SwapDir(tmps[i], final); err != nil {
			return res, fmt.Errorf("parquet %s: %w", final, err)
		}
		tmps[i] = ""
		res.tables = append(res.tables, t.Name)
	}
	if err := fstx.SyncDir(dir); err != nil {
		return res, fmt.Errorf("parquet %s: %w", dir, err)
	}
	mk = &marker{SchemaVersion: SchemaVersion, Generation: m.generation, Tables: m.tableGen}
	raw, _ := json.MarshalIndent(mk, "", "  ")
	if err := fstx.WriteBytes(filepath.Join(dir, MarkerFile), append(raw, '\n'), createdFilePerm(dir)); err != nil {
		return res, fmt.Errorf("parquet %s: %w", dir, err)
	}
	return res, nil
}

// datasetRows counts the rows of the part files in dir.
func datasetRows(dir string) (int64, error) {
	parts, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		return 0, err
	}
	if len(parts) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return 0, err
		}
	}
	var n int64
	for _, p := range parts {
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			return 0, err
		}
		n += rdr.NumRows()
		rdr.Close()
	}
	return n, nil
}

// idSlice is a range of file ids read back in one query.
type idSlice struct {
	lo, hi int64
	bytes  int64 // session bytes of its files (the write phase's progress)
}

// writeProgress reports the write phase: bytes of one table's files
// written count 1/tables of them (safe for concurrent use).
type writeProgress struct {
	pr       Progress
	tables   int64
	mu       sync.Mutex
	acc, out int64
}

func (w *writeProgress) add(bytes int64) {
	w.mu.Lock()
	w.acc += bytes
	n := w.acc/w.tables - w.out
	w.out += n
	w.mu.Unlock()
	if n > 0 {
		w.pr.Add(n)
	}
}

// fileSlices cuts the file ids into ranges of about readSliceBytes of
// session data each.
func fileSlices(ctx context.Context, st *store) ([]idSlice, error) {
	var out []idSlice
	var cur idSlice
	var size int64
	have := false
	err := st.queryRows(ctx, "SELECT file_id, size_bytes FROM files ORDER BY file_id", func(v []driver.Value) error {
		id, n := v[0].(int64), v[1].(int64)
		if !have {
			cur, have = idSlice{lo: id, hi: id}, true
		}
		if size > 0 && size+n > readSliceBytes {
			out = append(out, cur)
			cur, size = idSlice{lo: id, hi: id}, 0
		}
		cur.hi = id
		cur.bytes += n
		size += n
		return nil
	})
	if have {
		out = append(out, cur)
	}
	return out, err
}

// splitSlices deals the slices into at most n groups of consecutive
// slices of about equal count. There is always at least one group.
func splitSlices(s []idSlice, n int) [][]idSlice {
	n = max(1, min(n, len(s)))
	out := make([][]idSlice, n)
	for k := range n {
		out[k] = s[k*len(s)/n : (k+1)*len(s)/n]
	}
	return out
}

// writeParts writes the rows of table t whose file ids are in the slices
// as dir/part-<group>-<n>.parquet files. Group 0 also writes the rows
// without a file id, and an empty part when the table is empty.
func writeParts(ctx context.Context, st *store, dir string, t *Table, group int, slices []idSlice, alloc memory.Allocator, done func(bytes int64)) error {
	conn, err := st.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w", st.path, err)
	}
	defer conn.Close()
	pw := newPartWriter(dir, fmt.Sprintf("part-%02d-", group), t, alloc, group == 0)
	defer pw.abort()
	err = conn.Raw(func(dc any) error {
		q := dc.(driver.QueryerContext)
		if group == 0 && t == IngestIssuesTable {
			if err := readInto(ctx, q, pw, fmt.Sprintf("SELECT %s FROM %s WHERE file_id IS NULL ORDER BY path, code, message",
				t.ColumnList(), t.Name)); err != nil {
				return err
			}
		}
		for _, s := range slices {
			if err := readInto(ctx, q, pw, fmt.Sprintf("SELECT %s FROM %s WHERE file_id BETWEEN %d AND %d ORDER BY %s",
				t.ColumnList(), t.Name, s.lo, s.hi, t.OrderBy)); err != nil {
				return err
			}
			done(s.bytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return pw.close()
}

func readInto(ctx context.Context, q driver.QueryerContext, pw *partWriter, query string) error {
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := pw.add(vals); err != nil {
			return err
		}
	}
}

// partWriter streams rows into part-NNNNN.parquet files of a dataset
// directory: rows are gathered in Arrow builders up to a row group, which
// is then written and released.
type partWriter struct {
	dir   string
	name  string // file name prefix
	empty bool   // write an empty part when there are no rows
	t     *Table
	alloc memory.Allocator
	b     *array.RecordBuilder
	apps  []func(v driver.Value) int
	rows  int
	bytes int
	// colBytes are the bytes each column took in the current row group;
	// the next row group reserves as much for its large string columns
	// up front (reserve), rather than growing them by doubling.
	colBytes []int
	reserve  bool
	sent     int // row groups flushed

	// Written by the writer goroutine when there is one (async):
	part int
	data int64 // column data in the open part file
	f    *os.File
	w    *pqarrow.FileWriter

	// async: row groups are encoded, compressed and written by a goroutine
	// of their own, in order, while the next one is gathered.
	jobs   chan rowGroup
	done   chan error
	failed atomic.Bool
}

// rowGroup is a gathered row group and its column data bytes.
type rowGroup struct {
	rec   arrow.RecordBatch
	bytes int
}

// startAsync makes pw write its row groups in a goroutine of its own.
func (pw *partWriter) startAsync() {
	jobs, done := make(chan rowGroup, 1), make(chan error, 1)
	pw.jobs, pw.done = jobs, done
	go func() {
		var err error
		for rg := range jobs {
			if err == nil {
				if err = pw.write(rg); err != nil {
					pw.failed.Store(true)
				}
			}
			rg.rec.Release()
		}
		if err == nil {
			err = pw.closePart()
		}
		pw.closeFile()
		done <- err
	}()
}

func newPartWriter(dir, name string, t *Table, alloc memory.Allocator, empty bool) *partWriter {
	pw := &partWriter{dir: dir, name: name, empty: empty, t: t, alloc: alloc, b: array.NewRecordBuilder(alloc, t.Schema),
		colBytes: make([]int, len(t.Columns))}
	for i, c := range t.Columns {
		pw.apps = append(pw.apps, columnAppender(pw.b.Field(i), c))
	}
	return pw
}

// columnAppender returns a function appending a DuckDB value to the
// column's builder and returning roughly how many bytes it added.
func columnAppender(b array.Builder, c Column) func(v driver.Value) int {
	switch c.Type.ID() {
	case arrow.INT64:
		bb := b.(*array.Int64Builder)
		return func(v driver.Value) int {
			switch x := v.(type) {
			case int64:
				bb.Append(x)
			case int32:
				bb.Append(int64(x))
			default:
				bb.AppendNull()
			}
			return 8
		}
	case arrow.INT32:
		bb := b.(*array.Int32Builder)
		return func(v driver.Value) int {
			switch x := v.(type) {
			case int32:
				bb.Append(x)
			case int64:
				bb.Append(int32(x))
			default:
				bb.AppendNull()
			}
			return 4
		}
	case arrow.FLOAT64:
		bb := b.(*array.Float64Builder)
		return func(v driver.Value) int {
			if x, ok := v.(float64); ok {
				bb.Append(x)
			} else {
				bb.AppendNull()
			}
			return 8
		}
	case arrow.BOOL:
		bb := b.(*array.BooleanBuilder)
		return func(v driver.Value) int {
			if x, ok := v.(bool); ok {
				bb.Append(x)
			} else {
				bb.AppendNull()
			}
			return 1
		}
	case arrow.TIMESTAMP:
		bb := b.(*array.TimestampBuilder)
		return func(v driver.Value) int {
			if x, ok := v.(time.Time); ok {
				bb.Append(arrow.Timestamp(x.UnixMicro()))
			} else {
				bb.AppendNull()
			}
			return 8
		}
	default:
		bb := b.(*array.StringBuilder)
		return func(v driver.Value) int {
			if x, ok := v.(string); ok {
				bb.Append(x)
				return len(x) + 4
			}
			bb.AppendNull()
			return 4
		}
	}
}

func (pw *partWriter) add(vals []driver.Value) error {
	if hugeValue(vals) {
		return pw.addHuge(vals)
	}
	if pw.reserve {
		pw.reserveData()
	}
	for i, v := range vals {
		n := pw.apps[i](v)
		pw.bytes += n
		pw.colBytes[i] += n
	}
	pw.rows++
	if pw.rows >= RowGroupRows || pw.bytes >= rowGroupBytes {
		return pw.flush()
	}
	return nil
}

// hugeValue reports whether a row holds a string larger than a row group.
func hugeValue(vals []driver.Value) bool {
	for _, v := range vals {
		if x, ok := v.(string); ok && len(x) > rowGroupBytes {
			return true
		}
	}
	return false
}

// addHuge writes a row holding a string larger than a row group as a row
// group of its own, whose Arrow column points at the string's bytes
// instead of a copy: a 200 MB tool output is held once by the export, not
// once per builder.
func (pw *partWriter) addHuge(vals []driver.Value) error {
	if pw.rows > 0 {
		if err := pw.flush(); err != nil {
			return err
		}
	}
	bytes := 0
	huge := make(map[int]string)
	for i, v := range vals {
		if x, ok := v.(string); ok && len(x) > rowGroupBytes {
			huge[i] = x
			v = "" // a placeholder; the column is replaced below
		}
		bytes += pw.apps[i](v)
	}
	rec := pw.b.NewRecordBatch()
	cols := rec.Columns()
	out := make([]arrow.Array, len(cols))
	for i := range cols {
		if x, ok := huge[i]; ok {
			out[i] = stringAlias(x)
			bytes += len(x)
		} else {
			out[i] = cols[i]
			out[i].Retain()
		}
	}
	rg := rowGroup{rec: array.NewRecordBatch(pw.t.Schema, out, 1), bytes: bytes}
	rec.Release()
	for _, a := range out {
		a.Release()
	}
	pw.reserve = true
	pw.sent++
	if pw.jobs != nil {
		if pw.failed.Load() {
			rg.rec.Release()
			return pw.stopWriter()
		}
		pw.jobs <- rg
		return nil
	}
	defer rg.rec.Release()
	return pw.write(rg)
}

// stringAlias is a one-value Arrow string array over the bytes of s (no
// copy; Go strings are immutable and the buffer keeps s alive).
func stringAlias(s string) arrow.Array {
	offsets := []int32{0, int32(len(s))}
	data := array.NewData(arrow.BinaryTypes.String, 1, []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)),
		memory.NewBufferBytes(unsafe.Slice(unsafe.StringData(s), len(s)))}, nil, 0, 0)
	defer data.Release()
	return array.NewStringData(data)
}

// reserveDataMin is the smallest column (bytes per row group) whose
// next row group's data is reserved up front.
const reserveDataMin = 1 << 20

// reserveData gives the string columns that held more than reserveDataMin
// bytes in the last row group room for as much (and an eighth) in the
// next: one allocation instead of a doubling series, each zeroed and
// copied.
func (pw *partWriter) reserveData() {
	pw.reserve = false
	for i, n := range pw.colBytes {
		if sb, ok := pw.b.Field(i).(*array.StringBuilder); ok && n >= reserveDataMin {
			// At most a row group: a huge value of the last row group
			// (which had one of its own) says nothing about the next.
			sb.ReserveData(min(n+n/8, rowGroupBytes+rowGroupBytes/8))
		}
		pw.colBytes[i] = 0
	}
}

// addRecord appends the rows of rec, a batch of the table's schema.
func (pw *partWriter) addRecord(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	for r := 0; r < n; r++ {
		if pw.reserve {
			pw.reserveData()
		}
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(r) {
				pw.b.Field(c).AppendNull()
				continue
			}
			switch a := col.(type) {
			case *array.Int64:
				pw.b.Field(c).(*array.Int64Builder).Append(a.Value(r))
				pw.bytes += 8
			case *array.Int32:
				pw.b.Field(c).(*array.Int32Builder).Append(a.Value(r))
				pw.bytes += 4
			case *array.Float64:
				pw.b.Field(c).(*array.Float64Builder).Append(a.Value(r))
				pw.bytes += 8
			case *array.Boolean:
				pw.b.Field(c).(*array.BooleanBuilder).Append(a.Value(r))
				pw.bytes++
			case *array.Timestamp:
				pw.b.Field(c).(*array.TimestampBuilder).Append(a.Value(r))
				pw.bytes += 8
			case *array.String:
				v := a.Value(r)
				pw.b.Field(c).(*array.StringBuilder).Append(v)
				pw.bytes += len(v) + 4
				pw.colBytes[c] += len(v) + 4
			default:
				return fmt.Errorf("column %s: unexpected Arrow type %s", pw.t.Columns[c].Name, col.DataType())
			}
		}
		pw.rows++
		if pw.rows >= RowGroupRows || pw.bytes >= rowGroupBytes {
			if err := pw.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// uniqueColumns hold mostly distinct values, for which a dictionary page
// costs time and saves nothing.
var uniqueColumns = []string{"text", "arguments_json", "raw_json", "message", "path", "entry_id", "parent_id", "copy_key", "content_key", "copy_key_a", "copy_key_b"}

// bulkColumns hold the message text and JSON of a home: values of any
// size, up to the largest line.
var bulkColumns = []string{"text", "arguments_json", "raw_json"}

func writerProps(alloc memory.Allocator) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(alloc),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithDataPageSize(1 << 20),
		// Version 2 data pages compress the encoded values where they are;
		// version 1 first copies them after the level bytes (one more copy
		// of a 200 MB value).
		parquet.WithDataPageVersion(parquet.DataPageV2),
		parquet.WithCreatedBy("sessions-etl"),
	}
	for _, c := range uniqueColumns {
		opts = append(opts, parquet.WithDictionaryFor(c, false))
	}
	for _, c := range bulkColumns {
		// Min/max statistics of message text are copies of whole values
		// (twice 200 MB for one 200 MB tool output) that no reader uses.
		opts = append(opts, parquet.WithStatsFor(c, false))
	}
	return parquet.NewWriterProperties(opts...)
}

// zstdLevel is the Parquet files' zstd level (3, klauspost/compress's
// default): on session text it is within 10% of the fastest level's speed
// and makes files about a quarter smaller.
const zstdLevel = 3

func (pw *partWriter) open() error {
	name := filepath.Join(pw.dir, fmt.Sprintf("%s%05d.parquet", pw.name, pw.part))
	f, err := createFile(name)
	if err != nil {
		return err
	}
	// The writer closes an io.Closer it is given: give it only Write, so
	// the file can be synced before it is closed.
	w, err := pqarrow.NewFileWriter(pw.t.Schema, struct{ io.Writer }{f}, writerProps(pw.alloc),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(pw.alloc)))
	if err != nil {
		f.Close()
		return err
	}
	pw.f, pw.w = f, w
	pw.part++
	return nil
}

// flush writes the gathered rows as one row group, or hands them to the
// writer goroutine.
func (pw *partWriter) flush() error {
	rg := rowGroup{rec: pw.b.NewRecordBatch(), bytes: pw.bytes}
	pw.rows, pw.bytes = 0, 0
	pw.reserve = true
	pw.sent++
	if pw.jobs != nil {
		if pw.failed.Load() {
			rg.rec.Release()
			return pw.stopWriter() // the writer's error
		}
		pw.jobs <- rg
		return nil
	}
	defer rg.rec.Release()
	return pw.write(rg)
}

// write writes one row group into the open part file (opening one when
// none is), and closes the part once it holds partFileBytes.
func (pw *partWriter) write(rg rowGroup) error {
	if pw.w == nil {
		if err := pw.open(); err != nil {
			return err
		}
	}
	pw.data += int64(rg.bytes)
	if rg.rec.NumRows() > 0 {
		if err := pw.w.Write(rg.rec); err != nil {
			return err
		}
	}
	if pw.data >= partFileBytes {
		return pw.closePart()
	}
	return nil
}

func (pw *partWriter) closePart() error {
	if pw.w == nil {
		return nil
	}
	w, f := pw.w, pw.f
	pw.w, pw.f = nil, nil
	pw.data = 0
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// close writes what is left. A dataset always has at least one part file,
// so that an empty table still has its schema.
func (pw *partWriter) close() error {
	if pw.rows > 0 || (pw.sent == 0 && pw.empty) {
		if err := pw.flush(); err != nil {
			return err
		}
	}
	if err := pw.stopWriter(); err != nil {
		return err
	}
	if err := pw.closePart(); err != nil {
		return err
	}
	pw.b.Release()
	pw.b = nil
	return nil
}

// stopWriter waits for the writer goroutine, if any, to write what it was
// given and close its part file, and returns its error.
func (pw *partWriter) stopWriter() error {
	if pw.jobs == nil {
		return nil
	}
	close(pw.jobs)
	pw.jobs = nil
	return <-pw.done
}

// closeFile closes an open part file without finishing it.
func (pw *partWriter) closeFile() {
	if pw.w != nil {
		pw.w.Close()
		pw.f.Close()
		pw.w, pw.f = nil, nil
	}
}

// abort releases everything after a failure (no-op after close).
func (pw *partWriter) abort() {
	_ = pw.stopWriter()
	pw.closeFile()
	if pw.b != nil {
		pw.b.Release()
		pw.b = nil
	}
}
