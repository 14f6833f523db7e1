package report

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rec is one assistant message of a fixture session.
type rec struct {
	at                 time.Time // zero: no timestamp at all
	provider, model    string
	in, out, cr, cw    int64
	cost               float64 // recorded usage.cost.total; < 0: no cost object
	entryTSOnlyMessage bool    // only message.timestamp (no entry timestamp)
}

// session renders a v3 session file holding recs as assistant messages.
func session(id, cwd string, created time.Time, recs []rec) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`+"\n", id, created.UTC().Format(time.RFC3339Nano), cwd)
	parent := "null"
	for i, r := range recs {
		eid := fmt.Sprintf("%08x", i+1)
		ts, msgTS := "", ""
		if !r.at.IsZero() {
			if !r.entryTSOnlyMessage {
				ts = fmt.Sprintf(`"timestamp":%q,`, r.at.UTC().Format("2006-01-02T15:04:05.000Z"))
			}
			msgTS = fmt.Sprintf(`,"timestamp":%d`, r.at.UnixMilli())
		}
		cost := ""
		if r.cost >= 0 {
			cost = fmt.Sprintf(`,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%g}`, r.cost)
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,%s"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"x","provider":%q,"model":%q,"usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d%s},"stopReason":"stop"%s}}`+"\n",
			eid, parent, ts, r.provider, r.model, r.in, r.out, r.cr, r.cw, cost, msgTS)
		parent = fmt.Sprintf("%q", eid)
	}
	return b.String()
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// zoneInstants are instants on both sides of local midnights next to
// offset changes, in zones with DST, half-hour DST and 45-minute offsets.
var zoneInstants = []string{
	// America/Los_Angeles: PST midnight 2025-03-09 = 08:00Z; DST starts 10:00Z; PDT midnight 2025-03-10 = 07:00Z
	"2025-03-09T07:59:59.999Z", "2025-03-09T08:00:00Z", "2025-03-09T09:59:59.999Z", "2025-03-09T10:00:00Z",
	"2025-03-10T06:59:59.999Z", "2025-03-10T07:00:00Z",
	// DST ends 2025-11-02 09:00Z; PDT midnight 11-02 = 07:00Z; PST midnight 11-03 = 08:00Z
	"2025-11-02T06:59:59.999Z", "2025-11-02T07:00:00Z", "2025-11-02T08:30:00Z", "2025-11-02T09:00:00Z",
	"2025-11-03T07:59:59.999Z", "2025-11-03T08:00:00Z",
	// Asia/Kathmandu +05:45: midnight = 18:15Z
	"2025-06-01T18:14:59.999Z", "2025-06-01T18:15:00Z",
	// Australia/Lord_Howe +10:30 / +11 (DST starts 2025-10-05 02:00 local = 2025-10-04T15:30Z)
	"2025-10-04T13:29:59.999Z", "2025-10-04T13:30:00Z", "2025-10-04T15:30:00Z", "2025-10-05T12:59:59.999Z", "2025-10-05T13:00:00Z",
	// Asia/Tokyo +09: midnight = 15:00Z
	"2025-12-31T14:59:59.999Z", "2025-12-31T15:00:00Z",
}

var testZones = []string{"UTC", "America/Los_Angeles", "Asia/Tokyo", "Asia/Kathmandu", "Australia/Lord_Howe", "Europe/London"}

// ways are the three ways days are computed: in DuckDB with the zone's
// offset spans as a CASE expression or as an ASOF-joined table, and in Go
// record by record (when prices are recomputed).
var ways = []string{"sql-case", "sql-asof", "go"}

// useWay selects the SQL form for way and returns the undo.
func useWay(way string) func() {
	old := caseSpans
	if way == "sql-asof" {
		caseSpans = 0
	}
	return func() { caseSpans = old }
}

// TestZonesAgainstGo: days in every zone are those of time.In, on the
// edges above and on random instants over three years, through every way
// of computing them.
func TestZonesAgainstGo(t *testing.T) {
	var recs []rec
	for _, s := range zoneInstants {
		recs = append(recs, rec{at: mustTime(t, s), provider: "anthropic", model: "claude-sonnet-4-5", in: 1, cost: 0.5})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lo := mustTime(t, "2024-01-01T00:00:00Z").UnixMilli()
	for range 400 {
		at := time.UnixMilli(lo + rng.Int64N(3*365*86400*1000)).UTC()
		recs = append(recs, rec{at: at, provider: "openai", model: "gpt-5", in: 1 + rng.Int64N(1000), out: rng.Int64N(100), cost: -1})
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.jsonl"), session("11111111-0000-4000-8000-000000000001", "/w/p", recs[0].at, recs))
	db := filepath.Join(t.TempDir(), "r.duckdb")
	for _, zone := range testZones {
		loc := mustLoc(t, zone)
		want := map[string]int64{}
		for _, r := range recs {
			want[r.at.In(loc).Format(time.DateOnly)] += r.in
		}
		for _, way := range ways {
			t.Run(zone+"/"+way, func(t *testing.T) {
				defer useWay(way)()
				rep := runOnDB(t, Daily, db, []string{dir}, func(o *Options) {
					o.Location = loc
					if way == "go" {
						o.PricingID = "test:same-table-other-id"
					}
				})
				if rep.Repriced != (way == "go") {
					t.Fatalf("Repriced = %v", rep.Repriced)
				}
				got := map[string]int64{}
				for _, row := range rep.Rows {
					got[row.Key] = row.Input
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("input per day (-time.In +report):\n%s", d)
				}
			})
		}
	}
}

// TestZoneSpans: the offset list covers the range and changes where Go's
// zone data does.
func TestZoneSpans(t *testing.T) {
	la := mustLoc(t, "America/Los_Angeles")
	from, to := mustTime(t, "2025-01-01T00:00:00Z"), mustTime(t, "2026-01-01T00:00:00Z")
	spans, err := zoneSpans(la, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []span{{from, -8 * 3600}, {mustTime(t, "2025-03-09T10:00:00Z"), -7 * 3600}, {mustTime(t, "2025-11-02T09:00:00Z"), -8 * 3600}}
	if d := cmp.Diff(want, spans, cmp.AllowUnexported(span{})); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}
	utc, err := zoneSpans(time.UTC, from, to)
	if err != nil || len(utc) != 1 || utc[0].off != 0 {
		t.Errorf("UTC spans %v, %v", utc, err)
	}
	if !strings.Contains(spansSQL(spans), "(TIMESTAMP '2025-03-09 10:00:00', -25200)") ||
		!strings.HasPrefix(spansSQL(spans), "tz(start, off) AS (VALUES (TIMESTAMP '0001-01-01 00:00:00', -28800)") {
		t.Errorf("spansSQL = %s", spansSQL(spans))
	}
}

// TestSinceUntil: the bounds are inclusive days in the report's zone, in
// both spellings; records without a timestamp have a row of their own and
// are left out by a bound.
func TestSinceUntil(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	recs := []rec{
		{at: mustTime(t, "2025-03-09T07:59:59Z"), provider: "anthropic", model: "claude-sonnet-4-5", in: 1, cost: 0.1}, // LA 03-08
		{at: mustTime(t, "2025-03-09T08:00:00Z"), provider: "anthropic", model: "claude-sonnet-4-5", in: 2, cost: 0.1}, // LA 03-09
		{at: mustTime(t, "2025-03-10T06:59:59Z"), provider: "anthropic", model: "claude-sonnet-4-5", in: 4, cost: 0.1}, // LA 03-09
		{at: mustTime(t, "2025-03-10T07:00:00Z"), provider: "anthropic", model: "claude-sonnet-4-5", in: 8, cost: 0.1}, // LA 03-10
		{provider: "anthropic", model: "claude-sonnet-4-5", in: 16, cost: 0.1},                                         // no timestamp
		{at: mustTime(t, "2025-03-11T00:00:00Z"), provider: "anthropic", model: "claude-sonnet-4-5", in: 32, cost: 0.1, entryTSOnlyMessage: true},
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.jsonl"), session("11111111-0000-4000-8000-000000000002", "/w/p", recs[0].at, recs))
	db := filepath.Join(t.TempDir(), "r.duckdb")
	la := mustLoc(t, "America/Los_Angeles")
	day := func(s string) time.Time {
		d, err := ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		since, until string
		want         map[string]int64
	}{
		{"", "", map[string]int64{"2025-03-08": 1, "2025-03-09": 6, "2025-03-10": 40, "": 16}},
		{"2025-03-09", "", map[string]int64{"2025-03-09": 6, "2025-03-10": 40}},
		{"", "20250309", map[string]int64{"2025-03-08": 1, "2025-03-09": 6}},
		{"20250309", "2025-03-09", map[string]int64{"2025-03-09": 6}},
		{"2025-04-01", "", map[string]int64{}},
	}
	for _, c := range cases {
		for _, way := range ways {
			t.Run(c.since+".."+c.until+"/"+way, func(t *testing.T) {
				defer useWay(way)()
				r := runOnDB(t, Daily, db, []string{dir}, func(o *Options) {
					o.Location = la
					if c.since != "" {
						o.Since = day(c.since)
					}
					if c.until != "" {
						o.Until = day(c.until)
					}
					if way == "go" {
						o.PricingID = "test:other"
					}
				})
				got := map[string]int64{}
				for _, row := range r.Rows {
					got[row.Key] = row.Input
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("input per day (-want +got):\n%s", d)
				}
				var sum int64
				for _, v := range c.want {
					sum += v
				}
				if r.Totals.Input != sum {
					t.Errorf("total input %d, want %d", r.Totals.Input, sum)
				}
			})
		}
	}
	for _, bad := range []string{"2025-3-9", "2025/03/09", "09-03-2025", "2025-02-30", ""} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q) accepted", bad)
		}
	}
}
