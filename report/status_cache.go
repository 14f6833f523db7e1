package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// The status line's answer cache: ccusage's rule (reuse the answer while
// no session file changed), made safe. A fingerprint of the roots (see
// status_fingerprint.go) is taken before the refresh; the answer's time-free parts (today's usage, the active block's
// bounds and usage, the session's usage) are kept next to the database
// with it. The next status line over the same roots, question and day
// whose fingerprint is equal answers from that, without opening the
// database; the time-dependent parts (time left, burn rate, projection,
// whether the block is still active) are computed again from now. A root
// holding a symbolic link (whose target the walk would not look into) is
// never cached.

type statusCache struct {
	Key         string     `json:"key"`
	Fingerprint string     `json:"fingerprint"`
	Day         string     `json:"day"`
	Today       cachedUse  `json:"today"`
	Block       *cachedBlk `json:"block,omitempty"`
	Session     *cachedUse `json:"session,omitempty"`
	SessionID   string     `json:"sessionId"`
	Zone        string     `json:"zone"`
}

type cachedUse struct {
	Tokens
	Cost              float64
	RecordedRecords   int64
	CalculatedRecords int64
	Unpriced          Tokens
}

type cachedBlk struct {
	ID                      string
	Start, End, First, Last time.Time
	Usage                   cachedUse
}

func toCached(u Usage) cachedUse {
	return cachedUse{u.Tokens, u.Cost, u.RecordedRecords, u.CalculatedRecords, u.Unpriced}
}

func (c cachedUse) usage() Usage {
	u := Usage{Tokens: c.Tokens, Cost: c.Cost, RecordedRecords: c.RecordedRecords, CalculatedRecords: c.CalculatedRecords, Unpriced: c.Unpriced}
	u.exact = femtoOf(c.Cost)
	return u
}

// statusKey names the question a cached answer is for.
func statusKey(o *Options, q StatusQuery) string {
	return fmt.Sprintf("v1|%s|%s|%s|%s|%s|%s|%s|%s", o.Location.String(), o.Source, o.Project, o.Model, o.CostMode, o.PricingID, q.SessionID, q.File)
}

// RunStatusCached is RunStatus with the answer cache: it answers from the
// cache when the roots are unchanged since the last status line with the
// same question on the same day, and otherwise runs RunStatus and keeps
// its answer. NoRefresh bypasses the cache.
func RunStatusCached(ctx context.Context, opts Options, q StatusQuery, now time.Time) (*Status, error) {
	o := opts
	o.Kind = Daily
	if o.NoRefresh {
		return RunStatus(ctx, opts, q, now)
	}
	// The question without the price table: a hit needs only the table's
	// id (the bundled table's is read from its header), not its prices.
	if err := o.checkQuestion(); err != nil {
		return nil, err
	}
	if o.PricingID == "" {
		if o.Prices != nil {
			o.PricingID = TablePricingID(o.Prices)
		} else {
			o.PricingID = tablePricingID(pricing.DefaultSource())
		}
	}
	fp, fpErr := fingerprint(o.Roots)
	path := o.DBPath + ".status.json"
	key := statusKey(&o, q)
	y, mo, d := now.In(o.Location).Date()
	day := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	if fpErr == nil {
		var c statusCache
		if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &c) == nil &&
			c.Key == key && c.Fingerprint == fp && c.Day == day {
			st := &Status{Now: now, Day: day, Today: c.Today.usage(), SessionID: c.SessionID}
			st.Kind, st.Location, st.Zone = "statusline", o.Location, c.Zone
			if c.Session != nil {
				u := c.Session.usage()
				st.Session = &u
			}
			if b := c.Block; b != nil {
				blk := Block{ID: b.ID, Start: b.Start, End: b.End, First: b.First, Last: b.Last, Usage: b.Usage.usage()}
				if now.Before(blk.End) && now.Sub(blk.Last) < BlockDuration && !now.Before(blk.Start) {
					blk.Active = true
					blk.BurnRate, blk.Projection = burn(&blk, now)
					st.Block = &blk
				}
			}
			return st, nil
		}
	}
	st, err := RunStatus(ctx, opts, q, now)
	if err != nil || fpErr != nil {
		return st, err
	}
	c := statusCache{Key: key, Fingerprint: fp, Day: st.Day, Today: toCached(st.Today), SessionID: st.SessionID, Zone: st.Zone}
	if st.Session != nil {
		s := toCached(*st.Session)
		c.Session = &s
	}
	if b := st.Block; b != nil {
		c.Block = &cachedBlk{ID: b.ID, Start: b.Start, End: b.End, First: b.First, Last: b.Last, Usage: toCached(b.Usage)}
	}
	if raw, err := json.Marshal(c); err == nil {
		// Best effort: a cache that cannot be written only costs time.
		// Written whole or not at all (fstx: temporary file, fsync,
		// rename), so a crash never leaves half a cache.
		_ = fstx.WriteBytes(path, raw, 0o600)
	}
	return st, nil
}
