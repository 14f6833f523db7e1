package report

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/sessions-etl/sessions-etl/export"
)

// RunBatch answers several reports — one per kind, then the blocks report
// when blocks is not nil — over one refresh of the database (unless
// NoRefresh) and one open handle on it, holding its lock throughout: what
// a page of many reports (the dashboard) needs. Each report is the one
// Run (or RunBlocks) gives for the same options with that kind; the first
// report carries the ingest summary and the notes of the refresh.
func RunBatch(ctx context.Context, opts Options, kinds []Kind, blocks *BlockOptions) ([]*Report, *BlocksReport, error) {
	o := opts
	o.Kind = Daily
	if len(kinds) > 0 {
		o.Kind = kinds[0]
	}
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	for _, k := range kinds {
		if _, err := ParseKind(string(k)); err != nil {
			return nil, nil, err
		}
		o.withTools = o.withTools || k == Tools
	}
	unlock := func() {}
	if len(o.From) == 0 {
		var err error
		if unlock, err = lockDB(ctx, o.DBPath, o.NoRefresh); err != nil {
			return nil, nil, err
		}
	}
	defer unlock()
	first := newReport(&o)
	if !o.NoRefresh && o.Managed {
		if note := dropInvalidCache(o.DBPath); note != "" {
			first.Notes = append(first.Notes, note)
		}
	}
	var reports []*Report
	var br *BlocksReport
	answerAll := func(ctx context.Context, db *sql.DB) error {
		reports, br = nil, nil
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
		files, err := problemFiles(ctx, db)
		if err != nil {
			return err
		}
		for i, k := range kinds {
			ko := o
			ko.Kind = k
			r := first
			if i > 0 {
				r = newReport(&ko)
			}
			r.Files = files
			if err := answerDB(ctx, db, m, &ko, r); err != nil {
				return err
			}
			applyOrder(r, ko.Order)
			reports = append(reports, r)
		}
		if blocks != nil {
			bo := o
			bo.Kind = Daily
			br = &BlocksReport{Now: blocks.Now, Active: blocks.Active, Recent: blocks.Recent, TokenLimit: blocks.TokenLimit,
				TokenLimitMax: blocks.TokenLimitMax}
			if br.Now.IsZero() {
				br.Now = time.Now()
			}
			br.Report = *newReport(&bo)
			br.Repriced = m.pricing != bo.PricingID
			return blocksDB(ctx, db, m, &bo, *blocks, br)
		}
		return nil
	}
	if len(o.From) > 0 {
		// Partitioned Parquet roots (SPEC.md §7.7), as runFrom.
		db, err := export.OpenRootsCached(ctx, o.From, export.FromCacheDir(), fromPricing(&o))
		if err != nil {
			return nil, nil, err
		}
		err = answerAll(ctx, db)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", strings.Join(o.From, ", "), err)
		}
		return reports, br, nil
	}
	answered := false
	if !o.NoRefresh {
		// Answered on the ingest's own DuckDB instance after its commit,
		// as Run does (once: export.Run may retry a failed run).
		var aerr error
		sum, err := refresh(ctx, &o, func(ctx context.Context, db *sql.DB) error {
			if !answered {
				answered, aerr = true, answerAll(ctx, db)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if aerr != nil {
			return nil, nil, fmt.Errorf("duckdb %s: %w", o.DBPath, aerr)
		}
		first.Ingest = &sum
	}
	if !answered {
		db, err := openReadOnly(o.DBPath)
		if err != nil {
			return nil, nil, fmt.Errorf("duckdb %s: %w", o.DBPath, err)
		}
		err = answerAll(ctx, db)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("duckdb %s: %w", o.DBPath, err)
		}
	}
	return reports, br, nil
}
