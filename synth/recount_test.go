package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawUsage is a usage object as decoded by encoding/json.
type rawUsage struct {
	Input, Output, CacheRead, CacheWrite int64
	TotalTokens                          *int64
	Cost                                 *struct{ Total json.Number }
}

type rawEntry struct {
	Type           string
	ID             *string
	Timestamp      string
	CreatedAt      string
	Usage          *rawUsage
	ChildUsage     *rawUsage
	AggregateUsage *rawUsage
	TargetID       string
	Message        *struct {
		Role      string
		Provider  string
		Model     string
		Timestamp int64
		Usage     *rawUsage
	}
}

type countedRecord struct {
	kind, model string
	u           rawUsage
	ts          time.Time
}

func micros(n json.Number) int64 {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000")[:6]
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	if neg {
		return -(w*1e6 + f)
	}
	return w*1e6 + f
}

// TestRecountFromFiles re-reads every file with encoding/json, applies the
// counting rules of SPEC.md §4 independently of the generator's
// bookkeeping, and compares with the manifest.
func TestRecountFromFiles(t *testing.T) {
	dir, m := testHome(t)
	type parsed struct {
		f       *File
		hdrTs   time.Time
		entries int
		recs    []struct {
			key string
			rec countedRecord
		}
	}
	var files []*parsed
	skip := map[string]bool{"not_session": true, "future_version": true, "unrecognized_version": true, "empty": true}
	for i := range m.Files {
		f := &m.Files[i]
		isBOM := slices.Contains(f.Codes, "bom")
		if skip[f.Status] && !isBOM { // SPEC.md §1.5: a BOM file is read with the BOM dropped
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		p := &parsed{f: f}
		lastModel := ""
		first := true
		for _, line := range bytes.Split(raw, []byte("\n")) {
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			for {
				var e rawEntry
				if err := dec.Decode(&e); err != nil {
					if !errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 && f.Status != "torn" && f.Status != "corrupt" {
						t.Errorf("%s: %v", f.Path, err)
					}
					break
				}
				if first {
					first = false
					ts := e.Timestamp
					if ts == "" {
						ts = e.CreatedAt
					}
					p.hdrTs, err = time.Parse(time.RFC3339, ts)
					if err != nil {
						t.Fatalf("%s: header time %q", f.Path, ts)
					}
					continue
				}
				if e.Type == "session" {
					continue
				}
				p.entries++
				ts, err := time.Parse(time.RFC3339, e.Timestamp)
				if err != nil {
					t.Fatalf("%s: entry time %q", f.Path, e.Timestamp)
				}
				var kind string
				var u *rawUsage
				msgTs := int64(0)
				switch {
				case e.Type == "message" && e.Message != nil && e.Message.Role == "assistant":
					lastModel = e.Message.Provider + "/" + e.Message.Model
					kind, u, msgTs = "assistant", e.Message.Usage, e.Message.Timestamp
				case e.Type == "message" && e.Message != nil && e.Message.Role == "toolResult":
					kind, u = "tool_result", e.Message.Usage
				case e.Type == "compaction", e.Type == "branch_summary", e.Type == "session_summary":
					kind, u = e.Type, e.Usage
				case e.Type == "child_usage_attributed":
					kind, u = "child_usage", e.ChildUsage
				case e.Type == "usage":
					kind, u = "usage_entry", e.Usage
				case e.Type == "model_usage":
					kind, u = "model_usage", e.Usage
				}
				if u == nil {
					continue
				}
				model := lastModel
				if kind == "session_summary" {
					model = "unknown/unknown"
				}
				key := ""
				if e.ID != nil {
					key = *e.ID + "|" + e.Timestamp
				} else {
					key = strings.Join([]string{e.Timestamp, strconv.FormatInt(msgTs, 10), strconv.FormatInt(u.Input, 10),
						strconv.FormatInt(u.Output, 10), strconv.FormatInt(u.CacheRead, 10), strconv.FormatInt(u.CacheWrite, 10)}, "|")
				}
				p.recs = append(p.recs, struct {
					key string
					rec countedRecord
				}{key, countedRecord{kind, model, *u, ts}})
			}
		}
		if p.entries != f.Entries {
			t.Errorf("%s: %d entries decoded, manifest %d", f.Path, p.entries, f.Entries)
		}
		files = append(files, p)
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if !a.hdrTs.Equal(b.hdrTs) {
			return a.hdrTs.Before(b.hdrTs)
		}
		if a.entries != b.entries {
			return a.entries > b.entries
		}
		return a.f.Path < b.f.Path
	})
	seen := map[string]bool{}
	var all, uncosted Tokens
	var copies, cost int64
	byKind := map[string]*Tokens{}
	byModel := map[string]*Tokens{}
	modelCost := map[string]int64{}
	daily := map[string]map[string]*Tokens{}
	locs := map[string]*time.Location{}
	for _, z := range DailyZones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			t.Fatal(err)
		}
		locs[z] = loc
		daily[z] = map[string]*Tokens{}
	}
	add := func(m map[string]*Tokens, k string, u usage) {
		if m[k] == nil {
			m[k] = &Tokens{}
		}
		m[k].add(u)
	}
	for _, p := range files {
		var fileRecs, fileCopies int64
		for _, r := range p.recs {
			if seen[r.key] {
				copies++
				fileCopies++
				continue
			}
			seen[r.key] = true
			fileRecs++
			ru := r.rec.u
			u := usage{in: ru.Input, out: ru.Output, cr: ru.CacheRead, cw: ru.CacheWrite}
			if ru.TotalTokens != nil && *ru.TotalTokens != u.total() {
				t.Errorf("%s: totalTokens %d, sum %d", p.f.Path, *ru.TotalTokens, u.total())
			}
			all.add(u)
			add(byKind, r.rec.kind, u)
			add(byModel, r.rec.model, u)
			if ru.Cost != nil && micros(ru.Cost.Total) != 0 {
				cost += micros(ru.Cost.Total)
				modelCost[r.rec.model] += micros(ru.Cost.Total)
			} else {
				uncosted.add(u)
			}
			for z, loc := range locs {
				add(daily[z], r.rec.ts.In(loc).Format("2006-01-02"), u)
			}
		}
		if fileRecs != p.f.Usage.Records || fileCopies != p.f.Usage.Copies {
			t.Errorf("%s: recount %d records %d copies, manifest %d/%d", p.f.Path, fileRecs, fileCopies, p.f.Usage.Records, p.f.Usage.Copies)
		}
	}
	if all != m.Usage.Tokens || copies != m.Usage.Copies || cost != m.Usage.CostRecordedMicros || uncosted != m.Usage.Uncosted {
		t.Errorf("recount: %+v copies %d cost %d uncosted %+v\nmanifest: %+v copies %d cost %d uncosted %+v",
			all, copies, cost, uncosted, m.Usage.Tokens, m.Usage.Copies, m.Usage.CostRecordedMicros, m.Usage.Uncosted)
	}
	for k, v := range byKind {
		if mk := m.Usage.ByKind[k]; mk == nil || mk.Tokens != *v {
			t.Errorf("by_kind[%s]: recount %+v, manifest %+v", k, *v, mk)
		}
	}
	for k, v := range byModel {
		if mm := m.Usage.ByModel[k]; mm == nil || mm.Tokens != *v || mm.CostRecordedMicros != modelCost[k] {
			t.Errorf("by_model[%s]: recount %+v cost %d, manifest %+v", k, *v, modelCost[k], mm)
		}
	}
	if len(byModel) != len(m.Usage.ByModel) {
		t.Errorf("%d models recounted, manifest has %d", len(byModel), len(m.Usage.ByModel))
	}
	for z, days := range daily {
		if len(days) != len(m.Usage.Daily[z]) {
			t.Errorf("daily[%s]: %d days recounted, manifest %d", z, len(days), len(m.Usage.Daily[z]))
		}
		for d, v := range days {
			if md := m.Usage.Daily[z][d]; md == nil || *md != *v {
				t.Errorf("daily[%s][%s]: recount %+v, manifest %+v", z, d, *v, md)
			}
		}
	}
}

// TestAggregateUsageConsistent checks that each child_usage_attributed
// entry's aggregateUsage is the target's own usage plus the children so far.
func TestAggregateUsageConsistent(t *testing.T) {
	dir, m := testHome(t)
	type acc struct{ in, out, cr, cw, cost int64 }
	of := func(u *rawUsage) acc {
		return acc{u.Input, u.Output, u.CacheRead, u.CacheWrite, micros(u.Cost.Total)}
	}
	checked := 0
	for _, f := range m.Files {
		if f.Source != "prime" || f.Status != "needs_upgrade" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		agg := map[string]acc{}
		for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			var e rawEntry
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			if err := dec.Decode(&e); err != nil {
				t.Fatal(err)
			}
			if e.Message != nil && e.Message.Role == "assistant" && e.ID != nil {
				agg[*e.ID] = of(e.Message.Usage)
			}
			if e.Type == "child_usage_attributed" {
				a, c := agg[e.TargetID], of(e.ChildUsage)
				a = acc{a.in + c.in, a.out + c.out, a.cr + c.cr, a.cw + c.cw, a.cost + c.cost}
				agg[e.TargetID] = a
				if of(e.AggregateUsage) != a {
					t.Errorf("%s: aggregateUsage of %s is %+v, own + children %+v", f.Path, e.TargetID, of(e.AggregateUsage), a)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no child_usage_attributed entries checked")
	}
}
