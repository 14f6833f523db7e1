package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Billing blocks (SPEC.md §7.8, ccusage's rule): a block starts at its
// first record's instant floored to the UTC hour and holds every record
// before start + 5 h; the first record at or after that starts the next
// block, floored again. Blocks are made from the same counted usage as
// the other reports (forks, copies and roll-ups once) with the Source,
// Project and Model filters applied; Since and Until then select blocks by
// the day their start falls on in Location.

// ErrBusy is returned when the database stays locked by another run
// longer than the caller wanted to wait.
var ErrBusy = errors.New("busy: another run is updating the database")

// BlockDuration is the length of a billing block.
const BlockDuration = 5 * time.Hour

// RecentDays is how far back BlockOptions.Recent looks (ccusage's default).
const RecentDays = 3

// BlockOptions are the options of a blocks report besides [Options].
type BlockOptions struct {
	// Now is the instant "now" for the active block, burn rate and
	// projection (zero: time.Now()).
	Now time.Time
	// Active keeps only the block now is in (none when there is none).
	Active bool
	// Recent keeps the blocks that started in the last RecentDays days
	// and the active block.
	Recent bool
	// TokenLimit is the token budget of a block (0: none). With
	// TokenLimitMax it is the largest total of a past block.
	TokenLimit    int64
	TokenLimitMax bool
	// NoGaps leaves out gap rows.
	NoGaps bool
}

// BurnRate is how fast the active block spends, over its elapsed time
// (now - start).
type BurnRate struct {
	TokensPerMinute float64
	// TokensPerMinuteForIndicator counts input and output tokens only
	// (ccusage's field: cache reads dwarf the others).
	TokensPerMinuteForIndicator float64
	CostPerHour                 float64 // USD per hour of the priced records
}

// Projection is the active block's usage at its end if the burn rate
// holds.
type Projection struct {
	TotalTokens      int64
	TotalCost        float64
	RemainingMinutes int64
}

// Block is one billing block or a gap between two.
type Block struct {
	// ID is the start as ccusage writes it (UTC, milliseconds); gaps are
	// "gap-" and the gap's start.
	ID string
	// Start and End bound the block ([Start, End), End = Start + 5 h); a
	// gap runs from the last record before it + 5 h to the next record.
	Start, End time.Time
	// First and Last are the instants of the block's first and last
	// records (Last is ccusage's actualEndTime).
	First, Last time.Time
	Active, Gap bool
	Usage
	Models []ModelUsage // most expensive first
	// BurnRate and Projection are set on the active block.
	BurnRate   *BurnRate
	Projection *Projection
}

// BlocksReport is the answer of [RunBlocks].
type BlocksReport struct {
	// Report carries the question (zone, filters, cost mode, prices), the
	// totals over the blocks shown, the unpriced usage and the ingest.
	Report
	Now    time.Time
	Blocks []Block
	// TokenLimit is the limit shares are computed against (0: none);
	// TokenLimitMax says it is the largest past block.
	TokenLimit    int64
	TokenLimitMax bool
	// NoTimestamp is the usage of records without an instant, which no
	// block can hold (counted in the other reports under "(no timestamp)").
	NoTimestamp Usage
	Active      bool // only the active block was asked for
	Recent      bool
}

// ActiveBlock returns the active block, or nil.
func (b *BlocksReport) ActiveBlock() *Block {
	for i := range b.Blocks {
		if b.Blocks[i].Active {
			return &b.Blocks[i]
		}
	}
	return nil
}

// hourCell is the usage of one provider/model in one UTC hour (or of one
// record, when priced in Go).
type hourCell struct {
	hour        time.Time
	key         ModelKey
	first, last time.Time
	u           Usage
}

// RunBlocks refreshes the database (unless NoRefresh) and answers the
// blocks report. opts.Kind is ignored.
func RunBlocks(ctx context.Context, opts Options, bo BlockOptions) (*BlocksReport, error) {
	o := opts
	o.Kind = Daily // the usage query of the day reports, without the day filter
	br := &BlocksReport{Now: bo.Now, Active: bo.Active, Recent: bo.Recent, TokenLimit: bo.TokenLimit, TokenLimitMax: bo.TokenLimitMax}
	if br.Now.IsZero() {
		br.Now = time.Now()
	}
	err := withDB(ctx, &o, &br.Report, 0, func(db *sql.DB, m dbMeta) error {
		return blocksDB(ctx, db, m, &o, bo, br)
	})
	if err != nil {
		return nil, err
	}
	return br, nil
}

// blocksDB answers the blocks report br over the open database (whose
// export state is m).
func blocksDB(ctx context.Context, db *sql.DB, m dbMeta, o *Options, bo BlockOptions, br *BlocksReport) error {
	cells, none, err := blockCellsFrom(ctx, db, o, m, time.Time{})
	if err != nil {
		return err
	}
	br.NoTimestamp = none
	br.Blocks = buildBlocks(cells, br.Now)
	br.Kind = "blocks"
	if bo.TokenLimitMax {
		br.TokenLimit = maxPastBlock(br.Blocks)
	}
	br.Blocks = selectBlocks(br.Blocks, o, bo, br.Now)
	for _, b := range br.Blocks {
		br.Totals.add(b.Usage)
	}
	br.Unpriced = unpricedOf(br.Blocks)
	return nil
}

// withDB runs the common part of a report: check the options, lock the
// database, refresh it (unless NoRefresh), open it and read its export
// state, then fn. r gets the question and the ingest summary. lockWait
// bounds the wait for the database's lock (0: as long as ctx allows);
// past it the error is ErrBusy.
func withDB(ctx context.Context, o *Options, r *Report, lockWait time.Duration, fn func(db *sql.DB, m dbMeta) error) error {
	if err := o.check(); err != nil {
		return err
	}
	lockCtx := ctx
	if lockWait > 0 {
		var cancel context.CancelFunc
		lockCtx, cancel = context.WithTimeout(ctx, lockWait)
		defer cancel()
	}
	unlock, err := lockDB(lockCtx, o.DBPath, o.NoRefresh)
	if err != nil {
		if lockCtx.Err() != nil && ctx.Err() == nil {
			return ErrBusy
		}
		return err
	}
	defer unlock()
	*r = Report{Kind: o.Kind, Location: o.Location, Zone: o.Location.String(), ZoneName: o.Location.String(), Since: o.Since,
		Until: o.Until, Source: o.Source, Project: o.Project, Model: o.Model, CostMode: o.CostMode, Pricing: o.Prices}
	switch {
	case o.Zone.Location == o.Location:
		r.Zone, r.ZoneName = o.Zone.Label, o.Zone.Name
	case o.Location == time.Local:
		r.ZoneName = ""
	}
	if !o.NoRefresh {
		sum, err := refresh(ctx, o, nil)
		if err != nil {
			return err
		}
		r.Ingest = &sum
	}
	db, err := openReadOnly(o.DBPath)
	if err != nil {
		return fmt.Errorf("duckdb %s: %w", o.DBPath, err)
	}
	m, ok, err := readMeta(ctx, db)
	if err == nil && !ok {
		err = ErrNoExport
	}
	if err == nil {
		err = m.current()
	}
	if err == nil {
		r.Repriced = m.pricing != o.PricingID
		err = fn(db, m)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, ErrNoExport) {
		return fmt.Errorf("duckdb %s: %w", o.DBPath, err)
	}
	return err
}

// blockCellsFrom reads the counted usage per UTC hour and provider/model
// of the records at or after from (zero: all), and the usage of records
// without a timestamp (none; only when from is zero).
func blockCellsFrom(ctx context.Context, db *sql.DB, o *Options, m dbMeta, from time.Time) (cells []hourCell, none Usage, err error) {
	if m.pricing != o.PricingID {
		// Priced in Go with a table the database was not built with:
		// one cell per record, as the other reports do.
		oo := *o
		oo.Since, oo.Until = time.Time{}, time.Time{}
		cs, err := usageCellsGo(ctx, db, &oo)
		if err != nil {
			return nil, none, err
		}
		for _, c := range cs {
			if c.first.IsZero() {
				if from.IsZero() {
					none.add(c.u)
				}
				continue
			}
			if c.first.Before(from) {
				continue
			}
			cells = append(cells, hourCell{hour: c.first.Truncate(time.Hour), key: c.key, first: c.first, last: c.last, u: c.u})
		}
		return cells, none, nil
	}
	where, args := filterSQL(o)
	if !from.IsZero() {
		// epoch_ms: the instant, whether ts is a TIMESTAMP in UTC or a
		// TIMESTAMPTZ (no session time zone involved).
		where += " AND epoch_ms(ts) >= ?"
		args = append(args, from.UnixMilli())
	}
	cost, src := costSQL(o.CostMode)
	q := `WITH ` + baseCTE() + `,
c AS (SELECT *, ` + cost + ` AS cost, ` + src + ` AS src FROM base WHERE ` + where + `)
SELECT epoch_ms(ts) // 3600000 AS hr, provider, model,
` + usageAggregates() + `
FROM c
GROUP BY ALL
ORDER BY hr NULLS LAST, provider NULLS LAST, model NULLS LAST`
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, none, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			c           hourCell
			hr          sql.NullInt64
			pv, md      sql.NullString
			first, last sql.NullTime
			costSum     sql.NullString
			un          Tokens
		)
		if err := rows.Scan(&hr, &pv, &md, &first, &last, &c.u.Records,
			&c.u.Input, &c.u.Output, &c.u.CacheRead, &c.u.CacheWrite, &c.u.TotalTokens, &costSum,
			&c.u.RecordedRecords, &c.u.CalculatedRecords, &c.u.Unpriced.Records,
			&un.Input, &un.Output, &un.CacheRead, &un.CacheWrite, &un.TotalTokens); err != nil {
			return nil, none, err
		}
		if c.u.exact, err = parseFemto(costSum.String); err != nil {
			return nil, none, err
		}
		c.u.Cost = c.u.exact.usd()
		un.Records = c.u.Unpriced.Records
		c.u.Unpriced = un
		if !hr.Valid {
			none.add(c.u)
			continue
		}
		c.hour = time.UnixMilli(hr.Int64 * 3600000).UTC()
		c.key = ModelKey{pv.String, md.String}
		c.first, c.last = first.Time.UTC(), last.Time.UTC()
		cells = append(cells, c)
	}
	return cells, none, rows.Err()
}

// buildBlocks groups cells into blocks, with a gap row wherever more than
// BlockDuration passed between a block's last record and the next record
// (ccusage's rule: the gap runs from that last record + 5 h to the next
// record). now decides the active block: now is before its end and less
// than 5 h after its last record.
func buildBlocks(cells []hourCell, now time.Time) []Block {
	sort.SliceStable(cells, func(i, j int) bool {
		if !cells[i].hour.Equal(cells[j].hour) {
			return cells[i].hour.Before(cells[j].hour)
		}
		return cells[i].first.Before(cells[j].first)
	})
	var out []Block
	var cur *Block
	models := map[ModelKey]*ModelUsage{}
	flush := func() {
		if cur == nil {
			return
		}
		for _, mu := range models {
			cur.Models = append(cur.Models, *mu)
		}
		sortModels(cur.Models)
		cur.Active = now.Before(cur.End) && now.Sub(cur.Last) < BlockDuration && !now.Before(cur.Start)
		if cur.Active {
			cur.BurnRate, cur.Projection = burn(cur, now)
		}
		out = append(out, *cur)
		cur, models = nil, map[ModelKey]*ModelUsage{}
	}
	for _, c := range cells {
		if cur != nil && !c.hour.Before(cur.End) {
			last := cur.Last
			flush()
			if c.first.Sub(last) > BlockDuration {
				gs := last.Add(BlockDuration)
				out = append(out, Block{ID: "gap-" + *isoMillis(gs), Start: gs, End: c.first, Gap: true})
			}
		}
		if cur == nil {
			cur = &Block{Start: c.hour, End: c.hour.Add(BlockDuration), First: c.first}
			cur.ID = *isoMillis(cur.Start)
		}
		cur.Usage.add(c.u)
		if c.first.Before(cur.First) {
			cur.First = c.first
		}
		if c.last.After(cur.Last) {
			cur.Last = c.last
		}
		mu := models[c.key]
		if mu == nil {
			mu = &ModelUsage{ModelKey: c.key}
			models[c.key] = mu
		}
		mu.Usage.add(c.u)
	}
	flush()
	return out
}

// burn is the active block's burn rate over its elapsed time (now -
// start; at least a minute, so that a block a few seconds old does not
// project wildly) and its projection to End at that rate.
func burn(b *Block, now time.Time) (*BurnRate, *Projection) {
	elapsed := max(now.Sub(b.Start), time.Minute)
	min := elapsed.Minutes()
	br := &BurnRate{TokensPerMinute: float64(b.TotalTokens) / min,
		TokensPerMinuteForIndicator: float64(b.Input+b.Output) / min,
		CostPerHour:                 b.Cost / elapsed.Hours()}
	remaining := max(b.End.Sub(now), 0)
	p := &Projection{RemainingMinutes: int64(remaining.Round(time.Minute) / time.Minute),
		TotalTokens: b.TotalTokens + int64(br.TokensPerMinute*remaining.Minutes()+0.5),
		TotalCost:   b.Cost + br.CostPerHour*remaining.Hours()}
	return br, p
}

// maxPastBlock is the largest total of a block that is neither a gap nor
// active.
func maxPastBlock(bs []Block) int64 {
	var m int64
	for _, b := range bs {
		if !b.Gap && !b.Active {
			m = max(m, b.TotalTokens)
		}
	}
	return m
}

// selectBlocks applies Since/Until (the block's start day in Location),
// Active, Recent and NoGaps. A gap row stays only between two blocks that
// stay.
func selectBlocks(bs []Block, o *Options, bo BlockOptions, now time.Time) []Block {
	keep := func(b Block) bool {
		if bo.Active {
			return b.Active
		}
		if bo.Recent && !b.Active && b.Start.Before(now.Add(-RecentDays*24*time.Hour)) {
			return false
		}
		y, m, d := b.Start.In(o.Location).Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return (o.Since.IsZero() || !day.Before(o.Since)) && (o.Until.IsZero() || !day.After(o.Until))
	}
	var out []Block
	for i, b := range bs {
		if b.Gap {
			if !bo.NoGaps && i > 0 && i+1 < len(bs) && keep(bs[i-1]) && keep(bs[i+1]) {
				out = append(out, b)
			}
			continue
		}
		if keep(b) {
			out = append(out, b)
		}
	}
	return out
}

// unpricedOf lists the unpriced usage of the blocks per provider/model.
func unpricedOf(bs []Block) []UnpricedUsage {
	byKey := map[ModelKey]*UnpricedUsage{}
	for _, b := range bs {
		for _, m := range b.Models {
			if m.Unpriced.Records == 0 {
				continue
			}
			u := byKey[m.ModelKey]
			if u == nil {
				u = &UnpricedUsage{ModelKey: m.ModelKey}
				byKey[m.ModelKey] = u
			}
			u.Tokens.add(m.Unpriced)
		}
	}
	out := []UnpricedUsage{}
	for _, u := range byKey {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TotalTokens != b.TotalTokens {
			return a.TotalTokens > b.TotalTokens
		}
		return a.ModelKey.String() < b.ModelKey.String()
	})
	return out
}

// Share is tokens / limit (0 without a limit).
func (b *BlocksReport) Share(tokens int64) float64 {
	if b.TokenLimit <= 0 {
		return 0
	}
	return float64(tokens) / float64(b.TokenLimit)
}
