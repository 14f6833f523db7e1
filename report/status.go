package report

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Status is what `sessions-etl statusline` shows (SPEC.md §7.8): today's
// cost, the active block's cost, time left and burn rate, and optionally
// the current session's cost.
type Status struct {
	Report // the question and the ingest
	Now    time.Time
	Day    string // today in Location (YYYY-MM-DD)
	Today  Usage
	Block  *Block // the active block, nil when none
	// Session is the usage of the session asked for (nil when none was
	// asked or it is not in the database); SessionID names it.
	Session   *Usage
	SessionID string
}

// StatusQuery names the current session: by id, or by its file (an
// agent's hook gives both; the file is used when the id is unknown).
type StatusQuery struct {
	SessionID string
	File      string
	// LockWait bounds the wait for another run's lock on the database (0:
	// no bound); past it RunStatus returns ErrBusy.
	LockWait time.Duration
}

// RunStatus refreshes the database (unless NoRefresh) and answers the
// status line at now. Only today's records and those of the active
// block's stretch of activity are read (see activeBlock).
func RunStatus(ctx context.Context, opts Options, q StatusQuery, now time.Time) (*Status, error) {
	o := opts
	o.Kind = Daily
	st := &Status{Now: now}
	err := withDB(ctx, &o, &st.Report, q.LockWait, func(db *sql.DB, m dbMeta) error {
		y, mo, d := now.In(o.Location).Date()
		today := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		st.Day = today.Format(time.DateOnly)
		var cells []cell
		var err error
		if m.pricing == o.PricingID {
			// Today's instants in UTC: a range on the column, without
			// taking every record's local day.
			from := time.Date(y, mo, d, 0, 0, 0, 0, o.Location)
			to := time.Date(y, mo, d+1, 0, 0, 0, 0, o.Location)
			where, args := filterSQL(&o)
			cells, err = sumCellsSQL(ctx, &o, db, where+" AND epoch_ms(ts) >= ? AND epoch_ms(ts) < ?",
				append(args, from.UnixMilli(), to.UnixMilli())...)
		} else {
			oo := o
			oo.Since, oo.Until = today, today
			cells, err = usageCellsGo(ctx, db, &oo)
		}
		if err != nil {
			return err
		}
		for _, c := range cells {
			st.Today.add(c.u)
		}
		if st.Block, err = activeBlock(ctx, db, &o, m, now); err != nil {
			return err
		}
		if q.SessionID != "" || q.File != "" {
			st.SessionID, st.Session, err = sessionUsage(ctx, db, &o, m, q)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Kind = "statusline"
	return st, nil
}

// activeBlock finds the block now is in. A silence of 5 h or more always
// ends a block (the next record starts a new one), so blocks are built
// from the records after the last such silence before now: a window of a
// day back from now, widened until the record before it is at least 5 h
// before its first record.
func activeBlock(ctx context.Context, db *sql.DB, o *Options, m dbMeta, now time.Time) (*Block, error) {
	for window := 24 * time.Hour; ; window *= 4 {
		from := now.Add(-window)
		if window > 100*365*24*time.Hour {
			from = time.Time{}
		}
		cells, _, err := blockCellsFrom(ctx, db, o, m, from)
		if err != nil {
			return nil, err
		}
		var first time.Time
		for _, c := range cells {
			if first.IsZero() || c.first.Before(first) {
				first = c.first
			}
		}
		if first.IsZero() && !from.IsZero() {
			// Nothing in the window: no block can be active (its
			// records would be less than 5 h old).
			return nil, nil
		}
		ok := from.IsZero()
		if !ok {
			prev, err := lastBefore(ctx, db, o, m, from)
			if err != nil {
				return nil, err
			}
			ok = prev.IsZero() || first.Sub(prev) >= BlockDuration
		}
		if ok {
			bs := buildBlocks(cells, now)
			for i := range bs {
				if bs[i].Active {
					return &bs[i], nil
				}
			}
			return nil, nil
		}
	}
}

// lastBefore is the instant of the last counted record before t (zero
// when none), with o's filters.
func lastBefore(ctx context.Context, db *sql.DB, o *Options, m dbMeta, t time.Time) (time.Time, error) {
	where, args := filterSQL(o)
	var last sql.NullTime
	err := db.QueryRowContext(ctx, `WITH `+baseCTE()+` SELECT max(ts) FROM base WHERE `+where+` AND epoch_ms(ts) < ?`,
		append(args, t.UnixMilli())...).Scan(&last)
	if err != nil || !last.Valid {
		return time.Time{}, err
	}
	return last.Time.UTC(), nil
}

// sessionUsage is the counted usage of the session q names (its id, else
// the session of the file), with o's cost mode.
func sessionUsage(ctx context.Context, db *sql.DB, o *Options, m dbMeta, q StatusQuery) (string, *Usage, error) {
	id := q.SessionID
	var n int
	if id != "" {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE session_id = ?`, id).Scan(&n); err != nil {
			return "", nil, err
		}
	}
	if n == 0 && q.File != "" {
		var sid sql.NullString
		err := db.QueryRowContext(ctx, `SELECT first(session_id ORDER BY created_at) FROM sessions WHERE path = ?`, q.File).Scan(&sid)
		if err != nil {
			return "", nil, err
		}
		if sid.Valid {
			id, n = sid.String, 1
		}
	}
	if n == 0 {
		return id, nil, nil
	}
	oo := *o
	oo.Kind = Session
	oo.Since, oo.Until = time.Time{}, time.Time{}
	var cells []cell
	var err error
	if m.pricing == o.PricingID {
		cells, err = sumCellsSQL(ctx, o, db, "session_id = ?", id)
		if len(cells) == 1 {
			cells[0].dim1 = id
		}
	} else {
		cells, err = usageCellsGo(ctx, db, &oo)
	}
	if err != nil {
		return "", nil, err
	}
	u := &Usage{}
	for _, c := range cells {
		if c.dim1 == id {
			u.add(c.u)
		}
	}
	return id, u, nil
}

// sumCellsSQL sums in DuckDB the counted usage of the records that match
// where (a condition over base's columns) into one cell.
func sumCellsSQL(ctx context.Context, o *Options, db *sql.DB, where string, args ...any) ([]cell, error) {
	cost, src := costSQL(o.CostMode)
	q := `WITH ` + baseCTE() + `,
c AS (SELECT *, ` + cost + ` AS cost, ` + src + ` AS src FROM base WHERE ` + where + `)
SELECT count(*), CAST(coalesce(sum(input), 0) AS BIGINT), CAST(coalesce(sum(output), 0) AS BIGINT),
       CAST(coalesce(sum(cache_read), 0) AS BIGINT), CAST(coalesce(sum(cache_write), 0) AS BIGINT),
       CAST(coalesce(sum(total_tokens), 0) AS BIGINT), CAST(sum(CAST(cost AS DECIMAL(38,15))) AS VARCHAR),
       count(*) FILTER (WHERE src = 'recorded'), count(*) FILTER (WHERE src = 'calculated'),
       count(*) FILTER (WHERE src IS NULL),
       CAST(coalesce(sum(total_tokens) FILTER (WHERE src IS NULL), 0) AS BIGINT)
FROM c`
	var c cell
	var costSum sql.NullString
	err := db.QueryRowContext(ctx, q, args...).Scan(&c.u.Records, &c.u.Input, &c.u.Output, &c.u.CacheRead, &c.u.CacheWrite,
		&c.u.TotalTokens, &costSum, &c.u.RecordedRecords, &c.u.CalculatedRecords, &c.u.Unpriced.Records, &c.u.Unpriced.TotalTokens)
	if err != nil {
		return nil, err
	}
	if c.u.exact, err = parseFemto(costSum.String); err != nil {
		return nil, err
	}
	c.u.Cost = c.u.exact.usd()
	return []cell{c}, nil
}

// statusMoney is a cost for the status line: "$1.23" ("$0.0040" below a
// dollar), "$1.23+?" when
// part of the usage is unpriced, "?" when none is priced.
func statusMoney(u Usage) string {
	if !u.Priced() && u.Records > 0 {
		return "$?"
	}
	s := money(u.Cost)
	if !u.Complete() {
		s += "+?"
	}
	return s
}

// Line is the status line: one line, no newline, no control characters.
// hookCost is the session cost the agent reported (negative: none), used
// when the session is not in the database.
func (s *Status) Line(hookCost float64) string {
	var parts []string
	if s.Session != nil {
		parts = append(parts, "session "+statusMoney(*s.Session))
	} else if hookCost >= 0 {
		parts = append(parts, "session "+money(hookCost)+" (agent)")
	}
	parts = append(parts, "today "+statusMoney(s.Today))
	if b := s.Block; b != nil {
		left := b.End.Sub(s.Now).Round(time.Minute)
		p := fmt.Sprintf("block %s, %dh%02dm left", statusMoney(b.Usage), int64(left/time.Hour), int64(left%time.Hour/time.Minute))
		parts = append(parts, p)
		if r := b.BurnRate; r != nil {
			if b.Priced() {
				parts = append(parts, money(r.CostPerHour)+"/h")
			}
			parts = append(parts, shortCount(r.TokensPerMinute)+" tok/min")
		}
	} else {
		parts = append(parts, "no active block")
	}
	return OneLine(strings.Join(parts, " · "))
}

// shortCount is 950, 12.3k, 4.5M.
func shortCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// OneLine replaces control characters (newlines included) by spaces and
// caps the length, so that a status line stays one line.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
