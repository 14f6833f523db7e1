package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// brec is one assistant message of a test session.
type brec struct {
	at     string // RFC 3339
	model  string
	input  int64
	output int64
	cost   float64 // recorded; 0: none (priced from the table, or unpriced)
}

// sessionFile writes a v3 pi session with one assistant message per rec
// (ids m1, m2, …) and returns its path.
func sessionFile(t *testing.T, dir, id, created string, recs []brec) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":"/home/dev/proj"}`+"\n", id, created)
	parent := "null"
	for i, r := range recs {
		eid := fmt.Sprintf("m%07d", i+1)
		cost := ""
		if r.cost > 0 {
			cost = fmt.Sprintf(`,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%v}`, r.cost)
		}
		model := r.model
		if model == "" {
			model = "claude-sonnet-4-5"
		}
		ms := utc(r.at).UnixMilli()
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages","provider":"anthropic","model":%q,"usage":{"input":%d,"output":%d,"cacheRead":0,"cacheWrite":0,"totalTokens":%d%s},"stopReason":"stop","timestamp":%d}}`+"\n",
			eid, parent, r.at, model, r.input, r.output, r.input+r.output, cost, ms)
		parent = fmt.Sprintf("%q", eid)
	}
	p := filepath.Join(dir, ".pi", "agent", "sessions", "--home-dev-proj--", strings.ReplaceAll(created, ":", "-")+"_"+id+".jsonl")
	writeFile(t, p, b.String())
	return p
}

func runBlocks(t *testing.T, paths []string, bo BlockOptions, edit func(*Options)) *BlocksReport {
	t.Helper()
	roots, err := ingest.PathRoots(paths)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "b.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	if edit != nil {
		edit(&o)
	}
	br, err := RunBlocks(context.Background(), o, bo)
	if err != nil {
		t.Fatal(err)
	}
	return br
}

type blockWant struct {
	id           string
	start, end   string
	last         string
	gap, active  bool
	records      int64
	tokens       int64
	cost         float64
	models       string
	costComplete bool
}

func checkBlocks(t *testing.T, got []Block, want []blockWant) {
	t.Helper()
	if len(got) != len(want) {
		for _, b := range got {
			t.Logf("got %s %s..%s gap=%v records=%d", b.ID, b.Start, b.End, b.Gap, b.Records)
		}
		t.Fatalf("%d blocks, want %d", len(got), len(want))
	}
	for i, w := range want {
		b := got[i]
		if b.ID != w.id || !b.Start.Equal(utc(w.start)) || !b.End.Equal(utc(w.end)) || b.Gap != w.gap || b.Active != w.active {
			t.Errorf("block %d: %s [%s, %s) gap=%v active=%v; want %s [%s, %s) gap=%v active=%v", i, b.ID,
				b.Start.Format(time.RFC3339), b.End.Format(time.RFC3339), b.Gap, b.Active, w.id, w.start, w.end, w.gap, w.active)
		}
		if w.last != "" && !b.Last.Equal(utc(w.last)) {
			t.Errorf("block %d: last activity %s, want %s", i, b.Last.Format(time.RFC3339), w.last)
		}
		if b.Records != w.records || b.TotalTokens != w.tokens || math.Abs(b.Cost-w.cost) > 1e-12 {
			t.Errorf("block %d: %d records, %d tokens, $%v; want %d, %d, $%v", i, b.Records, b.TotalTokens, b.Cost, w.records, w.tokens, w.cost)
		}
		if !w.gap && b.Complete() != w.costComplete {
			t.Errorf("block %d: cost complete %v, want %v", i, b.Complete(), w.costComplete)
		}
		if names := strings.Join(jsonModelNames(b.Models), ","); names != w.models {
			t.Errorf("block %d: models %q, want %q", i, names, w.models)
		}
	}
}

// TestBlocksAcrossGaps: a block starts at its first record's UTC hour; a
// record exactly 5 h after the start opens the next block (SPEC.md §7.8:
// "every record before start + 5 h"); more than 5 h without records makes
// a gap row from the last record + 5 h to the next record.
func TestBlocksAcrossGaps(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "11111111-0000-4000-8000-000000000001", "2025-06-01T09:00:00.000Z", []brec{
		{at: "2025-06-01T09:17:00.000Z", input: 100, output: 10, cost: 0.5},
		{at: "2025-06-01T13:59:59.999Z", input: 200, output: 20, cost: 0.25},
		// exactly start + 5 h: the next block, starting at 14:00
		{at: "2025-06-01T14:00:00.000Z", input: 300, output: 30, cost: 1},
		{at: "2025-06-01T18:30:00.000Z", input: 1, output: 1, cost: 0.125},
		// 18:30 + 5 h = 23:30; next record 2025-06-02 08:45: a gap from 23:30
		{at: "2025-06-02T08:45:00.000Z", model: "gpt-5", input: 10, output: 5, cost: 2},
	})
	br := runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-07-01T00:00:00Z")}, nil)
	checkBlocks(t, br.Blocks, []blockWant{
		{id: "2025-06-01T09:00:00.000Z", start: "2025-06-01T09:00:00Z", end: "2025-06-01T14:00:00Z", last: "2025-06-01T13:59:59.999Z",
			records: 2, tokens: 330, cost: 0.75, models: "claude-sonnet-4-5", costComplete: true},
		{id: "2025-06-01T14:00:00.000Z", start: "2025-06-01T14:00:00Z", end: "2025-06-01T19:00:00Z", last: "2025-06-01T18:30:00Z",
			records: 2, tokens: 332, cost: 1.125, models: "claude-sonnet-4-5", costComplete: true},
		{id: "gap-2025-06-01T23:30:00.000Z", start: "2025-06-01T23:30:00Z", end: "2025-06-02T08:45:00Z", gap: true, models: ""},
		{id: "2025-06-02T08:00:00.000Z", start: "2025-06-02T08:00:00Z", end: "2025-06-02T13:00:00Z", last: "2025-06-02T08:45:00Z",
			records: 1, tokens: 15, cost: 2, models: "gpt-5", costComplete: true},
	})
	if br.ActiveBlock() != nil {
		t.Errorf("a block is active a month later")
	}
	if br.Totals.Records != 5 || math.Abs(br.Totals.Cost-3.875) > 1e-12 {
		t.Errorf("totals: %d records, $%v; want 5, $3.875", br.Totals.Records, br.Totals.Cost)
	}
	// Without gap rows.
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-07-01T00:00:00Z"), NoGaps: true}, nil)
	if len(br.Blocks) != 3 {
		t.Errorf("NoGaps: %d rows, want 3", len(br.Blocks))
	}
}

// TestBlocksExactlyFiveHoursGap: records exactly 5 h apart start a new
// block but make no gap row (ccusage: a gap is longer than 5 h).
func TestBlocksExactlyFiveHoursGap(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "11111111-0000-4000-8000-000000000002", "2025-06-01T09:00:00.000Z", []brec{
		{at: "2025-06-01T09:30:00.000Z", input: 1, output: 1, cost: 0.1},
		{at: "2025-06-01T14:30:00.000Z", input: 1, output: 1, cost: 0.1},
	})
	br := runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-07-01T00:00:00Z")}, nil)
	checkBlocks(t, br.Blocks, []blockWant{
		{id: "2025-06-01T09:00:00.000Z", start: "2025-06-01T09:00:00Z", end: "2025-06-01T14:00:00Z", records: 1, tokens: 2, cost: 0.1, models: "claude-sonnet-4-5", costComplete: true},
		{id: "2025-06-01T14:00:00.000Z", start: "2025-06-01T14:00:00Z", end: "2025-06-01T19:00:00Z", records: 1, tokens: 2, cost: 0.1, models: "claude-sonnet-4-5", costComplete: true},
	})
}

// TestBlocksActiveBurnRate: now inside a block makes it active, with the
// burn rate over its elapsed time (now - start) and the projection to its
// end; --active keeps only it; --token-limit max is the largest past block.
func TestBlocksActiveBurnRate(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "11111111-0000-4000-8000-000000000003", "2025-06-01T00:00:00.000Z", []brec{
		{at: "2025-06-01T01:10:00.000Z", input: 4000, output: 1000, cost: 1}, // past block, 5000 tokens
		{at: "2025-06-02T10:05:00.000Z", input: 1000, output: 200, cost: 0.5},
		{at: "2025-06-02T11:40:00.000Z", input: 700, output: 100, cost: 1.5},
	})
	now := utc("2025-06-02T12:00:00Z") // 2 h into the block of 10:00
	br := runBlocks(t, []string{dir}, BlockOptions{Now: now, TokenLimitMax: true}, nil)
	a := br.ActiveBlock()
	if a == nil {
		t.Fatal("no active block")
	}
	if !a.Start.Equal(utc("2025-06-02T10:00:00Z")) || a.TotalTokens != 2000 || a.Cost != 2 {
		t.Fatalf("active block %s: %d tokens $%v", a.ID, a.TotalTokens, a.Cost)
	}
	// 2000 tokens over 120 minutes; $2 over 2 h.
	if r := a.BurnRate; r == nil || math.Abs(r.TokensPerMinute-2000.0/120) > 1e-9 || math.Abs(r.CostPerHour-1) > 1e-12 ||
		math.Abs(r.TokensPerMinuteForIndicator-2000.0/120) > 1e-9 {
		t.Errorf("burn rate %+v, want 16.67 tokens/min, $1/hour", a.BurnRate)
	}
	// 3 h left: 2000 + 3*60*16.67 = 5000 tokens; $2 + 3 * $1 = $5.
	if p := a.Projection; p == nil || p.TotalTokens != 5000 || math.Abs(p.TotalCost-5) > 1e-12 || p.RemainingMinutes != 180 {
		t.Errorf("projection %+v, want 5000 tokens, $5, 180 min", a.Projection)
	}
	if br.TokenLimit != 5000 {
		t.Errorf("token limit max = %d, want 5000 (the past block)", br.TokenLimit)
	}
	var js bytes.Buffer
	if err := br.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Blocks []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	last := doc.Blocks[len(doc.Blocks)-1]
	for _, k := range []string{"id", "startTime", "endTime", "actualEndTime", "isActive", "isGap", "tokenCounts", "totalTokens",
		"costUSD", "models", "burnRate", "projection", "tokenLimitStatus", "costIncomplete", "unpricedRecords", "unpricedTokens"} {
		if _, ok := last[k]; !ok {
			t.Errorf("JSON block lacks %q", k)
		}
	}
	if last["isActive"] != true || last["tokenLimitStatus"].(map[string]any)["status"] != "warning" {
		t.Errorf("active block JSON: %v", last)
	}
	if pr := last["projection"].(map[string]any); pr["totalTokens"] != 5000.0 || pr["remainingMinutes"] != 180.0 {
		t.Errorf("projection JSON: %v", pr)
	}

	// --active: only the active block; none when now is past every block.
	br = runBlocks(t, []string{dir}, BlockOptions{Now: now, Active: true}, nil)
	if len(br.Blocks) != 1 || !br.Blocks[0].Active {
		t.Errorf("--active: %d blocks", len(br.Blocks))
	}
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-06-02T15:00:00Z"), Active: true}, nil)
	if len(br.Blocks) != 0 {
		t.Errorf("--active after the block's end: %d blocks", len(br.Blocks))
	}
	var txt bytes.Buffer
	if err := br.WriteText(&txt, Table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "No active block") {
		t.Errorf("text: %q", txt.String())
	}
	// --recent: the last 3 days (the block of June 1 01:00 is older).
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-06-04T09:00:00Z"), Recent: true}, nil)
	if len(br.Blocks) != 1 || br.Blocks[0].ID != "2025-06-02T10:00:00.000Z" {
		t.Errorf("--recent: %v", br.Blocks)
	}
}

// TestBlocksDST: blocks are floored to the UTC hour whatever --tz says;
// across the New York DST change a block is 5 real hours (00:00 EST to
// 06:00 EDT on the wall clock), and in Kolkata (UTC+5:30) blocks start on
// the half hour. --since takes the block's start day in --tz.
func TestBlocksDST(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "11111111-0000-4000-8000-000000000004", "2025-03-09T00:00:00.000Z", []brec{
		{at: "2025-03-09T05:30:00.000Z", input: 1, output: 1, cost: 0.1}, // 00:30 EST
		{at: "2025-03-09T09:10:00.000Z", input: 1, output: 1, cost: 0.1}, // 05:10 EDT
		{at: "2025-03-09T10:00:00.000Z", input: 1, output: 1, cost: 0.1}, // 06:00 EDT: next block
	})
	ny := mustLoc(t, "America/New_York")
	br := runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-04-01T00:00:00Z")}, func(o *Options) { o.Location = ny })
	checkBlocks(t, br.Blocks, []blockWant{
		{id: "2025-03-09T05:00:00.000Z", start: "2025-03-09T05:00:00Z", end: "2025-03-09T10:00:00Z", records: 2, tokens: 4, cost: 0.2, models: "claude-sonnet-4-5", costComplete: true},
		{id: "2025-03-09T10:00:00.000Z", start: "2025-03-09T10:00:00Z", end: "2025-03-09T15:00:00Z", records: 1, tokens: 2, cost: 0.1, models: "claude-sonnet-4-5", costComplete: true},
	})
	var txt bytes.Buffer
	if err := br.WriteText(&txt, Table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2025-03-09 00:00", "2025-03-09 06:00", "times in America/New_York"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, txt.String())
		}
	}
	kol := mustLoc(t, "Asia/Kolkata")
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-04-01T00:00:00Z")}, func(o *Options) { o.Location = kol })
	if len(br.Blocks) != 2 || br.localTime(br.Blocks[0].Start) != "2025-03-09 10:30" {
		t.Errorf("Kolkata: first block starts %s, want 2025-03-09 10:30 (05:00 UTC)", br.localTime(br.Blocks[0].Start))
	}
	// --since 2025-03-09 in Tokyo (UTC+9): both blocks start on the 9th
	// there (14:00 and 19:00); --until 2025-03-09 in Honolulu (UTC-10)
	// keeps the first (19:00 on the 8th) and the second (00:00 on the 9th).
	tok := mustLoc(t, "Asia/Tokyo")
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-04-01T00:00:00Z")}, func(o *Options) {
		o.Location, o.Since = tok, utc("2025-03-09T00:00:00Z")
	})
	if len(br.Blocks) != 2 {
		t.Errorf("--since in Tokyo: %d blocks, want 2", len(br.Blocks))
	}
	hnl := mustLoc(t, "Pacific/Honolulu")
	br = runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-04-01T00:00:00Z")}, func(o *Options) {
		o.Location, o.Until = hnl, utc("2025-03-08T00:00:00Z")
	})
	if len(br.Blocks) != 1 || br.Blocks[0].ID != "2025-03-09T05:00:00.000Z" {
		t.Errorf("--until 2025-03-08 in Honolulu: %d blocks, want the one of 19:00 on the 8th", len(br.Blocks))
	}
}

// TestBlocksForkCountedOnce: the shared case c07 (a fork copying its
// parent's billed message) gives blocks whose sums are the case's totals:
// the copy is not counted again in its block.
func TestBlocksForkCountedOnce(t *testing.T) {
	dir := filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once")
	exp := loadCaseUsage(t, dir)
	br := runBlocks(t, []string{dir}, BlockOptions{Now: utc("2026-01-01T00:00:00Z")}, nil)
	checkBlocks(t, br.Blocks, []blockWant{
		{id: "2025-05-01T12:00:00.000Z", start: "2025-05-01T12:00:00Z", end: "2025-05-01T17:00:00Z", records: 1, tokens: 6500, cost: 0.02, models: "claude-sonnet-4-5", costComplete: true},
		{id: "gap-2025-05-01T17:00:02.000Z", start: "2025-05-01T17:00:02Z", end: "2025-05-02T08:00:09Z", gap: true},
		{id: "2025-05-02T08:00:00.000Z", start: "2025-05-02T08:00:00Z", end: "2025-05-02T13:00:00Z", records: 1, tokens: 1500, cost: 0.004, models: "claude-sonnet-4-5", costComplete: true},
	})
	tot := br.Totals
	if tot.Records != *exp.CountedRecords || tot.Input != *exp.Input || tot.Output != *exp.Output ||
		tot.CacheRead != *exp.CacheRead || tot.CacheWrite != *exp.CacheWrite || relDiff(tot.Cost, *exp.CostTotal) > 1e-12 {
		t.Errorf("blocks totals %+v, want the case's %+v", tot, exp)
	}
}

// TestBlocksUnpriced: a block with usage no price covers says so: its
// cost is the priced part, flagged incomplete, never $0 in the table.
func TestBlocksUnpriced(t *testing.T) {
	dir := t.TempDir()
	sessionFile(t, dir, "11111111-0000-4000-8000-000000000005", "2025-06-01T09:00:00.000Z", []brec{
		{at: "2025-06-01T09:10:00.000Z", model: "no-such-model-xyz", input: 100, output: 10},
	})
	br := runBlocks(t, []string{dir}, BlockOptions{Now: utc("2025-07-01T00:00:00Z")}, nil)
	if len(br.Blocks) != 1 || br.Blocks[0].Complete() || br.Blocks[0].Unpriced.Records != 1 {
		t.Fatalf("blocks %+v", br.Blocks)
	}
	var txt bytes.Buffer
	if err := br.WriteText(&txt, Table); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "$0.00") || !strings.Contains(txt.String(), "unpriced") {
		t.Errorf("unpriced block shown as:\n%s", txt.String())
	}
	if len(br.Unpriced) != 1 || br.Unpriced[0].Model != "no-such-model-xyz" {
		t.Errorf("unpriced list %+v", br.Unpriced)
	}
}

// TestBlocksSynthTotals: over a generated home the blocks hold exactly the
// counted usage the daily report counts (forks, copies and roll-ups once),
// with a cost priced in SQL or, with another price table, in Go.
func TestBlocksSynthTotals(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := synthFixture(t)
	db := filepath.Join(t.TempDir(), "s.duckdb")
	daily := runOnDB(t, Daily, db, []string{home}, nil)
	roots, err := ingest.PathRoots([]string{home})
	if err != nil {
		t.Fatal(err)
	}
	br, err := RunBlocks(context.Background(), Options{Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC},
		BlockOptions{Now: utc("2030-01-01T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	sum := br.Totals
	sum.add(br.NoTimestamp)
	if sum.Tokens != daily.Totals.Tokens || sum.Cost != daily.Totals.Cost || sum.Unpriced != daily.Totals.Unpriced {
		t.Errorf("blocks + no-timestamp = %+v\ndaily = %+v", sum, daily.Totals)
	}
	if len(br.Blocks) < 2 {
		t.Errorf("only %d blocks", len(br.Blocks))
	}
	for i, b := range br.Blocks {
		if b.Gap {
			continue
		}
		if b.Start.Truncate(time.Hour) != b.Start || b.End.Sub(b.Start) != BlockDuration || b.First.Before(b.Start) || !b.Last.Before(b.End) {
			t.Errorf("block %d: [%s, %s) first %s last %s", i, b.Start, b.End, b.First, b.Last)
		}
		if i > 0 && !br.Blocks[i-1].Gap && b.Start.Before(br.Blocks[i-1].End) {
			t.Errorf("block %d overlaps the previous one", i)
		}
	}
	// Priced again in Go (a price table the database was not built with):
	// the same blocks, costs within 1e-12.
	goWay, err := RunBlocks(context.Background(), Options{Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC,
		PricingID: "test:same-table-other-id"}, BlockOptions{Now: utc("2030-01-01T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if !goWay.Repriced || len(goWay.Blocks) != len(br.Blocks) {
		t.Fatalf("Go way: repriced %v, %d blocks, want %d", goWay.Repriced, len(goWay.Blocks), len(br.Blocks))
	}
	for i, b := range br.Blocks {
		g := goWay.Blocks[i]
		if g.ID != b.ID || g.Tokens != b.Tokens || g.Unpriced != b.Unpriced || relDiff(g.Cost, b.Cost) > 1e-12 || !g.Last.Equal(b.Last) {
			t.Errorf("block %d: go %s %+v $%v, sql %s %+v $%v", i, g.ID, g.Tokens, g.Cost, b.ID, b.Tokens, b.Cost)
		}
	}
}
