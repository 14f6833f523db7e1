package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sessions-etl/sessions-etl/export"
)

// ErrNoExport is returned when the database holds no export (NoRefresh on
// a database export never wrote).
var ErrNoExport = errors.New("not a sessions-etl export database")

// Run refreshes the database from opts.Roots (unless NoRefresh) and answers
// the report. Reports on one database are serialized by a lock file next to
// it (<db>.lock).
func Run(ctx context.Context, opts Options) (*Report, error) {
	o := opts
	if err := o.check(); err != nil {
		return nil, err
	}
	if len(o.From) > 0 {
		return runFrom(ctx, &o)
	}
	unlock, err := lockDB(ctx, o.DBPath, o.NoRefresh)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := newReport(&o)
	if !o.NoRefresh && o.Managed {
		// The report's own cache: one that is not a DuckDB database (a
		// 0-byte file a full disk left) is rebuilt, with a note.
		if note := dropInvalidCache(o.DBPath); note != "" {
			r.Notes = append(r.Notes, note)
		}
	}
	answered := false
	if !o.NoRefresh {
		// The report is answered on the ingest's own DuckDB instance,
		// right after its commit (export.Options.Then).
		var aerr error
		sum, err := refresh(ctx, &o, func(ctx context.Context, db *sql.DB) error {
			if !answered { // once: export.Run may retry a run that failed after it
				answered, aerr = true, answerOn(ctx, &o, r, db)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if aerr != nil {
			return nil, fmt.Errorf("duckdb %s: %w", o.DBPath, aerr)
		}
		r.Ingest = &sum
	}
	if !answered {
		if err := answer(ctx, &o, r); err != nil {
			return nil, fmt.Errorf("duckdb %s: %w", o.DBPath, err)
		}
	}
	applyOrder(r, o.Order)
	return r, nil
}

// runFrom answers from the Parquet roots o.From (SPEC.md §7.7).
func runFrom(ctx context.Context, o *Options) (*Report, error) {
	db, err := export.OpenRootsCached(ctx, o.From, export.FromCacheDir(), fromPricing(o))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := newReport(o)
	if err := answerOn(ctx, o, r, db); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(o.From, ", "), err)
	}
	applyOrder(r, o.Order)
	return r, nil
}

// dropInvalidCache removes the cache database at path (and its WAL) when
// it exists but is not a DuckDB database, and says so.
func dropInvalidCache(path string) string {
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	ok, err := export.IsDatabaseFile(path)
	if err != nil || ok {
		return ""
	}
	if err := os.Remove(path); err != nil {
		return ""
	}
	os.Remove(path + ".wal")
	return fmt.Sprintf("the report cache %s was not a valid DuckDB database (an interrupted or full-disk write?): rebuilt", path)
}

// newReport is a report's question, from checked options.
func newReport(o *Options) *Report {
	r := &Report{Kind: o.Kind, Location: o.Location, Zone: o.Location.String(), ZoneName: o.Location.String(), Since: o.Since, Until: o.Until,
		Source: o.Source, Project: o.Project, Model: o.Model, CostMode: o.CostMode, Pricing: o.Prices}
	switch {
	case o.Zone.Location == o.Location:
		r.Zone, r.ZoneName = o.Zone.Label, o.Zone.Name
	case o.Location == time.Local:
		r.ZoneName = "" // "Local" is no IANA name (ResolveZone finds one)
	}
	return r
}

// answer queries the database into r.
func answer(ctx context.Context, o *Options, r *Report) (err error) {
	db, err := openReadOnly(o.DBPath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	return answerOn(ctx, o, r, db)
}

// answerOn queries the open database db into r: its problem files, then
// the report (answerDB).
func answerOn(ctx context.Context, o *Options, r *Report, db *sql.DB) error {
	m, ok, err := readMeta(ctx, db)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoExport
	}
	if err := m.current(); err != nil {
		return err
	}
	if r.Files, err = problemFiles(ctx, db); err != nil {
		return err
	}
	return answerDB(ctx, db, m, o, r)
}

// answerDB queries the open database (whose export state is m) into r,
// whose Files are already read.
func answerDB(ctx context.Context, db *sql.DB, m dbMeta, o *Options, r *Report) (err error) {
	if o.Kind == Tools {
		rows, err := toolCells(ctx, db, o, m.mode)
		if err != nil {
			return err
		}
		r.ToolRows = foldTools(rows)
		for _, t := range r.ToolRows {
			r.ToolTotals.Calls += t.Calls
			r.ToolTotals.Results += t.Results
			r.ToolTotals.Errors += t.Errors
			r.ToolTotals.OutputBytes += t.OutputBytes
		}
		return nil
	}
	var cells []cell
	if m.pricing == o.PricingID {
		cells, err = usageCellsSQL(ctx, db, o)
	} else {
		r.Repriced = true
		cells, err = usageCellsGo(ctx, db, o)
	}
	if err != nil {
		return err
	}
	var infos map[string]*SessionInfo
	if o.Kind == Session {
		if infos, err = sessionInfos(ctx, db); err != nil {
			return err
		}
	}
	fold(r, cells, infos)
	switch o.Kind {
	case Project:
		return projectCwds(ctx, db, r.Rows)
	case Session:
		return subagentTree(ctx, db, r)
	}
	return nil
}

// projectCwds sets the cwd of each project row.
func projectCwds(ctx context.Context, db *sql.DB, rows []Row) error {
	q, err := db.QueryContext(ctx, `SELECT project, min(cwd) FROM sessions WHERE project IS NOT NULL GROUP BY project`)
	if err != nil {
		return err
	}
	defer q.Close()
	cwd := map[string]string{}
	for q.Next() {
		var p, c sql.NullString
		if err := q.Scan(&p, &c); err != nil {
			return err
		}
		cwd[p.String] = c.String
	}
	if err := q.Err(); err != nil {
		return err
	}
	for i := range rows {
		rows[i].Cwd = cwd[rows[i].Key]
	}
	return nil
}

// foldTools merges rows of the same tool name and orders them by calls.
func foldTools(in []ToolRow) []ToolRow {
	byName := map[string]*ToolRow{}
	var out []*ToolRow
	for _, t := range in {
		row := byName[t.Tool]
		if row == nil {
			row = &ToolRow{Tool: t.Tool}
			byName[t.Tool] = row
			out = append(out, row)
		}
		for _, m := range t.Models {
			row.add(m)
			row.Models = append(row.Models, m)
		}
	}
	res := make([]ToolRow, len(out))
	for i, t := range out {
		sort.SliceStable(t.Models, func(a, b int) bool { return t.Models[a].Calls > t.Models[b].Calls })
		res[i] = *t
	}
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].Calls != res[j].Calls {
			return res[i].Calls > res[j].Calls
		}
		return res[i].Tool < res[j].Tool
	})
	return res
}

// rowKey is the row a cell belongs to.
func rowKey(k Kind, c cell) (key, week string) {
	switch k {
	case Daily:
		if c.hasDay {
			return c.day.Format(time.DateOnly), ""
		}
	case Weekly:
		if c.hasDay {
			monday := c.day.AddDate(0, 0, -((int(c.day.Weekday()) + 6) % 7))
			y, w := c.day.ISOWeek()
			return monday.Format(time.DateOnly), fmt.Sprintf("%04d-W%02d", y, w)
		}
	case Monthly:
		if c.hasDay {
			return c.day.Format("2006-01"), ""
		}
	case Session, Project:
		return c.dim1, ""
	case Model:
		return c.key.String(), ""
	case Provider:
		return c.key.Provider, ""
	}
	return "", ""
}

// fold aggregates cells into the report's rows, totals and unpriced list.
func fold(r *Report, cells []cell, infos map[string]*SessionInfo) {
	type acc struct {
		row      *Row
		models   map[ModelKey]*ModelUsage
		sessions map[string]bool
	}
	byKey := map[string]*acc{}
	var order []*acc
	unpriced := map[ModelKey]*UnpricedUsage{}
	for _, c := range cells {
		key, week := rowKey(r.Kind, c)
		a := byKey[key]
		if a == nil {
			a = &acc{row: &Row{Key: key, Week: week}, models: map[ModelKey]*ModelUsage{}, sessions: map[string]bool{}}
			switch r.Kind {
			case Model:
				a.row.ModelKey = c.key
			case Provider:
				a.row.Provider = c.key.Provider
			case Session:
				a.row.Session = infos[key]
				if a.row.Session == nil {
					a.row.Session = &SessionInfo{}
				}
			}
			byKey[key] = a
			order = append(order, a)
		}
		row := a.row
		row.Usage.add(c.u)
		if !c.first.IsZero() && (row.First.IsZero() || c.first.Before(row.First)) {
			row.First = c.first
		}
		if c.last.After(row.Last) {
			row.Last = c.last
		}
		if r.Kind == Project {
			a.sessions[c.dim2] = true
		}
		mu := a.models[c.key]
		if mu == nil {
			mu = &ModelUsage{ModelKey: c.key}
			a.models[c.key] = mu
		}
		mu.Usage.add(c.u)
		r.Totals.add(c.u)
		if c.u.Unpriced.Records > 0 {
			un := unpriced[c.key]
			if un == nil {
				un = &UnpricedUsage{ModelKey: c.key}
				unpriced[c.key] = un
			}
			un.Tokens.add(c.u.Unpriced)
		}
	}
	for _, a := range order {
		for _, mu := range a.models {
			a.row.Models = append(a.row.Models, *mu)
		}
		sortModels(a.row.Models)
		a.row.Sessions = len(a.sessions)
		r.Rows = append(r.Rows, *a.row)
	}
	sortRows(r.Kind, r.Rows)
	for _, un := range unpriced {
		r.Unpriced = append(r.Unpriced, *un)
	}
	sort.Slice(r.Unpriced, func(i, j int) bool {
		a, b := r.Unpriced[i], r.Unpriced[j]
		if a.TotalTokens != b.TotalTokens {
			return a.TotalTokens > b.TotalTokens
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.Model < b.Model
	})
}

// sortRows orders rows: periods in time order (records without a
// timestamp last), sessions by last activity, the others most expensive
// first.
func sortRows(k Kind, rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case k.timeKind():
			if (a.Key == "") != (b.Key == "") {
				return b.Key == ""
			}
			return a.Key < b.Key
		case k == Session:
			if !a.Last.Equal(b.Last) {
				return a.Last.Before(b.Last)
			}
			return a.Key < b.Key
		}
		if a.Cost != b.Cost {
			return a.Cost > b.Cost
		}
		if a.TotalTokens != b.TotalTokens {
			return a.TotalTokens > b.TotalTokens
		}
		return a.Key < b.Key
	})
}
