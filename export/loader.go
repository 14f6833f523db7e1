package export

import (
	"context"
	"database/sql/driver"
	"errors"
)

// loader appends the rows of read files to the database, on the run's
// connection, in the order the files are emitted, in a goroutine of its
// own so that parsing goes on while DuckDB appends. Each file read gets a
// new file_id; the rows of its previous version are deleted afterwards.
type loader struct {
	st     *store
	nextID int64
	tables []*Table
	aps    map[string]*appender
	added  map[string]int64 // rows appended per table (read after finish)
	read   map[string]bool  // paths read in this run
	stale  []int64          // file ids whose rows are to be deleted
	vals   []driver.Value

	in   chan loadItem
	done chan error
	err  error

	duckContent  bool  // store content_blocks in the database (there is a DuckDB sink)
	contentAdded int64 // blocks sent to Parquet only
	// newContent starts the Parquet content writer on the first blocks
	// (nil without a Parquet sink).
	newContent func() (*contentWriter, error)
	content    *contentWriter
}

type loadItem struct {
	fr *fileResult
	id int64
}

// newLoader starts a loader appending to tables (those of the run's mode).
func newLoader(st *store, maxID int64, tables []*Table, duckContent bool) (*loader, error) {
	ld := &loader{st: st, nextID: maxID + 1, tables: tables, aps: map[string]*appender{}, added: map[string]int64{}, read: map[string]bool{},
		duckContent: duckContent, in: make(chan loadItem, 4), done: make(chan error, 1)}
	for _, t := range tables {
		if t == ContentBlocksTable && !duckContent {
			continue
		}
		ap, err := st.newAppender(t)
		if err != nil {
			ld.closeAppenders()
			return nil, err
		}
		ld.aps[t.Name] = ap
	}
	go ld.loop(ld.in)
	return ld, nil
}

func (ld *loader) loop(in <-chan loadItem) {
	var err error
	for it := range in {
		if err == nil {
			err = ld.appendFile(it.fr, it.id)
		}
	}
	if cerr := ld.closeAppenders(); err == nil {
		err = cerr
	}
	ld.done <- err
}

// finish waits until every row is appended and the appenders are closed.
func (ld *loader) finish() error {
	if ld.in != nil {
		close(ld.in)
		ld.in = nil
		ld.err = <-ld.done
		if !ld.duckContent && ld.contentAdded > 0 {
			ld.added[TableContentBlocks] += ld.contentAdded
		}
	}
	return ld.err
}

func (ld *loader) closeAppenders() error {
	var errs []error
	for _, t := range ld.tables {
		if ap := ld.aps[t.Name]; ap != nil {
			errs = append(errs, ap.close())
		}
	}
	return errors.Join(errs...)
}

func (ld *loader) flush(table string, vals []driver.Value) error {
	if len(vals) == 0 {
		return nil
	}
	ap := ld.aps[table]
	if err := ap.append(vals); err != nil {
		return err
	}
	ld.added[table] += int64(len(vals) / ap.t.dataColumns())
	return nil
}

// add gives one file its id and hands its rows to the database and
// Parquet writers.
func (ld *loader) add(ctx context.Context, fr *fileResult) error {
	select {
	case err := <-ld.done:
		ld.done <- err
		if err == nil {
			err = errors.New("loader stopped")
		}
		return err
	default:
	}
	id := ld.nextID
	ld.nextID++
	ld.read[fr.file.Path] = true
	if len(fr.blocks) > 0 && fr.session != nil {
		if !ld.duckContent {
			ld.contentAdded += int64(len(fr.blocks))
		}
		if ld.newContent != nil {
			if ld.content == nil {
				cw, err := ld.newContent()
				if err != nil {
					return err
				}
				ld.content = cw
			}
			if err := ld.content.add(ctx, contentBatch{fileID: id, sessionID: fr.session.sessionID, blocks: fr.blocks}); err != nil {
				return err
			}
		}
	}
	select {
	case ld.in <- loadItem{fr, id}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// appendFile appends every database row of one file.
func (ld *loader) appendFile(fr *fileResult, id int64) error {
	path := validString([]byte(fr.file.Path))
	f := fileRow{fileID: id, path: path, source: fr.file.Source, size: fr.file.Size,
		status: string(fr.res.Status), issueCount: fr.issueN, archived: fr.file.Kind.Archived}
	if c := fr.file.Kind.Compression; c != "" {
		f.compression = someStr(c)
	}
	if !fr.file.ModTime.IsZero() {
		f.mtime = someTime(fr.file.ModTime.UTC().Truncate(1000))
	}
	if fr.file.Ino != 0 {
		f.inode = someInt(int64(fr.file.Ino))
	}
	if fr.res.FormatVersion > 0 {
		f.formatVersion = someInt(int64(fr.res.FormatVersion))
	}
	if fr.res.Header.ID != "" {
		f.sessionID = someStr(validString([]byte(fr.res.Header.ID)))
	}
	if err := ld.flush(TableFiles, f.values(ld.vals[:0])); err != nil {
		return err
	}
	if s := fr.session; s != nil {
		s.fileID = id
		fid, sid := driver.Value(id), driver.Value(s.sessionID)
		if err := ld.flush(TableSessions, s.values(ld.vals[:0])); err != nil {
			return err
		}
		v := ld.vals[:0]
		for i := range fr.entries {
			v = fr.entries[i].values(v, fid, sid)
		}
		if err := ld.flush(TableEntries, v); err != nil {
			return err
		}
		v = v[:0]
		for i := range fr.tools {
			v = fr.tools[i].values(v, fid)
		}
		if err := ld.flush(TableToolUses, v); err != nil {
			return err
		}
		if ld.duckContent {
			v = v[:0]
			for i := range fr.blocks {
				v = fr.blocks[i].values(v, fid, sid)
			}
			if err := ld.flush(TableContentBlocks, v); err != nil {
				return err
			}
		}
		v = v[:0]
		for i := range fr.usage {
			v = fr.usage[i].values(v, fid, sid)
		}
		if err := ld.flush(TableUsage, v); err != nil {
			return err
		}
		ld.vals = v[:0]
	}
	v := ld.vals[:0]
	for i := range fr.issues {
		v = fr.issues[i].values(v, someInt(id), path)
	}
	ld.vals = v[:0]
	return ld.flush(TableIngestIssues, v)
}
