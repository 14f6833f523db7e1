package report

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestRunStatus: today's cost, the active block (found from the records
// after the last 5-hour silence, also when activity has run for days
// without one), burn rate and the session's cost, at a fixed now.
func TestRunStatus(t *testing.T) {
	dir := t.TempDir()
	// Continuous activity every 4 h from June 1 00:30 to June 5 08:30,
	// $1 each: no 5-hour silence, so the block chain starts on June 1.
	var recs []brec
	for at := utc("2025-06-01T00:30:00Z"); !at.After(utc("2025-06-05T08:30:00Z")); at = at.Add(4 * time.Hour) {
		recs = append(recs, brec{at: at.Format("2006-01-02T15:04:05.000Z"), input: 100, output: 20, cost: 1})
	}
	p := sessionFile(t, dir, "44444444-0000-4000-8000-000000000001", "2025-06-01T00:00:00.000Z", recs)
	sessionFile(t, dir, "44444444-0000-4000-8000-000000000002", "2025-06-05T09:00:00.000Z", []brec{
		{at: "2025-06-05T09:10:00.000Z", model: "gpt-5", input: 10, output: 5, cost: 0.5},
	})
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "s.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	now := utc("2025-06-05T10:00:00Z")
	st, err := RunStatus(context.Background(), o, StatusQuery{File: p}, now)
	if err != nil {
		t.Fatal(err)
	}
	// The whole chain, as report blocks makes it.
	br, err := RunBlocks(context.Background(), Options{Roots: roots, DBPath: o.DBPath, Managed: true, Workers: 2, Location: time.UTC,
		NoRefresh: true}, BlockOptions{Now: now, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(br.Blocks) != 1 || st.Block == nil || st.Block.ID != br.Blocks[0].ID || st.Block.Usage.Cost != br.Blocks[0].Cost {
		t.Fatalf("active block: status %+v, blocks %+v", st.Block, br.Blocks)
	}
	// Today: 00:30, 04:30, 08:30 ($3) and 09:10 ($0.50).
	if st.Day != "2025-06-05" || st.Today.Records != 4 || math.Abs(st.Today.Cost-3.5) > 1e-12 {
		t.Errorf("today %s: %d records $%v", st.Day, st.Today.Records, st.Today.Cost)
	}
	// The file's session: $1 a record.
	if st.Session == nil || st.SessionID != "44444444-0000-4000-8000-000000000001" || st.Session.Records != int64(len(recs)) ||
		st.Session.Cost != float64(len(recs)) {
		t.Errorf("session %s %+v, want %d records", st.SessionID, st.Session, len(recs))
	}
	line := st.Line(-1)
	if strings.ContainsAny(line, "\n\r") || !strings.HasPrefix(line, fmt.Sprintf("session $%d.00 · today $3.50 · block $1.50, 3h00m left · $0.7500/h", len(recs))) {
		t.Errorf("line %q", line)
	}
	// Unknown session: the hook's cost, marked.
	st, err = RunStatus(context.Background(), o, StatusQuery{SessionID: "nope"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Session != nil || !strings.HasPrefix(st.Line(1.25), "session $1.25 (agent) · ") {
		t.Errorf("unknown session: %q", st.Line(1.25))
	}
	// A week later nothing is active.
	st, err = RunStatus(context.Background(), o, StatusQuery{}, utc("2025-06-12T10:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Block != nil || st.Line(-1) != "today $0.00 · no active block" {
		t.Errorf("a week later: %q", st.Line(-1))
	}
}

func TestOneLine(t *testing.T) {
	got := OneLine("a\nb\r\tc" + strings.Repeat("x", 300))
	if strings.ContainsAny(got, "\n\r\t") || len([]rune(got)) != 200 {
		t.Errorf("OneLine: %q", got)
	}
}

// TestRunStatusCached: a second status line over unchanged files answers
// from the cache without the database (removed here to prove it), with
// time left and burn rate computed again for the new now; a changed file
// or another day recomputes.
func TestRunStatusCached(t *testing.T) {
	dir := t.TempDir()
	p := sessionFile(t, dir, "55555555-0000-4000-8000-000000000001", "2025-06-05T09:00:00.000Z", []brec{
		{at: "2025-06-05T09:10:00.000Z", input: 1000, output: 200, cost: 1},
	})
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "c.duckdb")
	o := Options{Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC}
	now := utc("2025-06-05T10:00:00Z")
	first, err := RunStatusCached(context.Background(), o, StatusQuery{File: p}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(db, db+".away"); err != nil {
		t.Fatal(err)
	}
	later := now.Add(30 * time.Minute)
	cached, err := RunStatusCached(context.Background(), o, StatusQuery{File: p}, later)
	if err != nil {
		t.Fatalf("cached answer needed the database: %v", err)
	}
	if err := os.Rename(db+".away", db); err != nil {
		t.Fatal(err)
	}
	fresh, err := RunStatus(context.Background(), Options{Roots: roots, DBPath: db, Managed: true, Workers: 2, Location: time.UTC},
		StatusQuery{File: p}, later)
	if err != nil {
		t.Fatal(err)
	}
	if cached.Line(-1) != fresh.Line(-1) || cached.Line(-1) == first.Line(-1) {
		t.Errorf("cached %q, fresh %q, first %q", cached.Line(-1), fresh.Line(-1), first.Line(-1))
	}
	// The file grows: recomputed.
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"type":"message","id":"m0000002","parentId":"m0000001","timestamp":"2025-06-05T10:20:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":2}},"timestamp":1749118800000}}` + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	grown, err := RunStatusCached(context.Background(), o, StatusQuery{File: p}, later)
	if err != nil {
		t.Fatal(err)
	}
	if grown.Today.Records != 2 || grown.Today.Cost != 3 || grown.Session == nil || grown.Session.Cost != 3 {
		t.Errorf("after an append: today %+v", grown.Today)
	}
	// Past the block's end: no active block, from the cache.
	over, err := RunStatusCached(context.Background(), o, StatusQuery{File: p}, utc("2025-06-05T14:30:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if over.Block != nil || !strings.Contains(over.Line(-1), "no active block") {
		t.Errorf("after the block: %q", over.Line(-1))
	}
}
