package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// ManifestVersion is the version of the manifest format written by this
// package.
const ManifestVersion = 1

// Manifest describes a generated home: every session file with the verdict
// a validator must reach, and the billed usage a report must find. It is
// computed from the generator's own bookkeeping, never by re-reading the
// files, so other packages' tests can use it as an oracle.
type Manifest struct {
	Generator string  `json:"generator"`
	Version   int     `json:"version"`
	Seed      uint64  `json:"seed"`
	Sessions  int     `json:"sessions"`          // requested number of sessions (Options.Sessions)
	Size      int64   `json:"target_size"`       // requested total bytes (Options.Size), 0 for natural size
	Profile   Profile `json:"profile,omitempty"` // Options.Profile; absent for the default
	Bytes     int64   `json:"bytes"`             // total bytes of all session files
	Files     []File  `json:"files"`             // sorted by Path
	Extras    []Extra `json:"extras"`            // non-session paths tools must skip, sorted by Path
	Usage     Usage   `json:"usage"`
	// Subagents is Options.Subagents; SubagentRuns lists each subagent
	// run's roll-up and children (sorted by parent path, then entry id).
	Subagents    bool          `json:"subagents,omitempty"`
	SubagentRuns []SubagentRun `json:"subagent_runs,omitempty"`
}

// File is one generated *.jsonl file.
type File struct {
	Path            string    `json:"path"`   // relative to the home, slash-separated
	Source          string    `json:"source"` // pi, atomic or prime (from the path)
	Kind            string    `json:"kind"`   // session, fork, branch_extract, whole_copy, prefix_snapshot, or the damage (torn, crlf, …)
	Variant         string    `json:"variant"`
	Special         string    `json:"special,omitempty"` // which fixed special case the file belongs to
	Status          string    `json:"status"`            // SPEC.md §1.5 status
	FormatVersion   *int      `json:"format_version"`    // 1–4, null when the header has no known version
	EarlyV4         bool      `json:"early_v4"`
	SessionID       *string   `json:"session_id"`
	Codes           []string  `json:"codes"`   // issue codes a validator reports (sorted set)
	Entries         int       `json:"entries"` // records after the header a reader recovers
	Bytes           int64     `json:"bytes"`
	SHA256          string    `json:"sha256"`
	ParentSessionID *string   `json:"parent_session_id"`
	CopyOf          *string   `json:"copy_of"` // the file this one duplicates (whole copy or prefix snapshot)
	Cwd             string    `json:"cwd,omitempty"`
	Mtime           string    `json:"mtime"` // the file's modification time: its last entry's instant (or the header's, when later)
	Mode            string    `json:"mode"`  // permission bits, octal
	Usage           FileUsage `json:"usage"` // billed records counted in this file
}

// FileUsage is the billed usage counted in one file (records it shares with
// an older session are copies, counted there).
type FileUsage struct {
	Records            int64   `json:"records"`
	Copies             int64   `json:"copies"`
	Input              int64   `json:"input"`
	Output             int64   `json:"output"`
	CacheRead          int64   `json:"cache_read"`
	CacheWrite         int64   `json:"cache_write"`
	TotalTokens        int64   `json:"total_tokens"`
	CostRecorded       float64 `json:"cost_recorded"`
	CostRecordedMicros int64   `json:"cost_recorded_micros"`
	Rollups            int64   `json:"rollups,omitempty"` // subagent roll-ups not counted: their children's files are in the home
}

func (u *FileUsage) add(rr recRef) {
	x := rr.b.u
	u.Records++
	u.Input += x.in
	u.Output += x.out
	u.CacheRead += x.cr
	u.CacheWrite += x.cw
	u.TotalTokens += x.total()
	if costed(x) {
		u.CostRecordedMicros += x.costTotal()
		u.CostRecorded = microsToUSD(u.CostRecordedMicros)
	}
}

// Extra is a path under the home that is not a session file: a lock
// directory or an unrelated file.
type Extra struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // lock_dir or other
}

// Tokens are token sums over billed records.
type Tokens struct {
	Records     int64 `json:"records"`
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cache_read"`
	CacheWrite  int64 `json:"cache_write"`
	TotalTokens int64 `json:"total_tokens"`
}

func (t *Tokens) add(u usage) {
	t.Records++
	t.Input += u.in
	t.Output += u.out
	t.CacheRead += u.cr
	t.CacheWrite += u.cw
	t.TotalTokens += u.total()
}

func (t *Tokens) merge(o Tokens) {
	t.Records += o.Records
	t.Input += o.Input
	t.Output += o.Output
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
	t.TotalTokens += o.TotalTokens
}

// KindUsage is the usage of one kind of billed record.
type KindUsage struct {
	Tokens
	CostRecorded       float64 `json:"cost_recorded"`
	CostRecordedMicros int64   `json:"cost_recorded_micros"`
}

// ModelUsage is the usage attributed to one provider/model. Uncosted holds
// the records without a recorded non-zero cost (v1 usage, session_summary,
// local models): a report must calculate or flag them.
type ModelUsage struct {
	Tokens
	CostRecorded       float64 `json:"cost_recorded"`
	CostRecordedMicros int64   `json:"cost_recorded_micros"`
	Uncosted           Tokens  `json:"uncosted"`
}

// Usage is the billed usage of the whole home, each record counted once.
type Usage struct {
	Tokens
	Copies             int64                         `json:"copies"`            // occurrences of counted records in other files (counted = false)
	Rollups            int64                         `json:"rollups,omitempty"` // subagent roll-ups not counted (counted = false): every child they name is in the home
	CostRecorded       float64                       `json:"cost_recorded"`
	CostRecordedMicros int64                         `json:"cost_recorded_micros"`
	Uncosted           Tokens                        `json:"uncosted"`
	ByKind             map[string]*KindUsage         `json:"by_kind"`
	ByModel            map[string]*ModelUsage        `json:"by_model"`
	Daily              map[string]map[string]*Tokens `json:"daily"` // zone → YYYY-MM-DD → usage
}

// DailyZones are the time zones of Usage.Daily.
var DailyZones = []string{"UTC", "America/Los_Angeles", "Asia/Tokyo"}

func microsToUSD(m int64) float64 { return float64(m) / 1e6 }

// costed reports whether a usage carries a recorded non-zero cost.
func costed(u usage) bool { return u.hasCost() && u.costTotal() != 0 }

// tally accumulates counted records.
type tally struct {
	all      Tokens
	uncosted Tokens
	copies   int64
	rollups  int64
	micros   int64
	kinds    [numKinds]KindUsage
	models   map[int]*ModelUsage
	daily    [3]map[int32]*Tokens // per zone, keyed by yyyymmdd
}

func newTally() *tally {
	t := &tally{models: make(map[int]*ModelUsage)}
	for i := range t.daily {
		t.daily[i] = make(map[int32]*Tokens)
	}
	return t
}

var zoneLocs [3]*time.Location

func (t *tally) add(rr recRef) {
	u := rr.b.u
	t.all.add(u)
	k := &t.kinds[rr.b.kind]
	k.add(u)
	m := t.models[rr.model]
	if m == nil {
		m = &ModelUsage{}
		t.models[rr.model] = m
	}
	m.add(u)
	if costed(u) {
		t.micros += u.costTotal()
		k.CostRecordedMicros += u.costTotal()
		m.CostRecordedMicros += u.costTotal()
	} else {
		t.uncosted.add(u)
		m.Uncosted.add(u)
	}
	at := time.UnixMilli(rr.ts)
	for z, loc := range zoneLocs {
		y, mo, d := at.In(loc).Date()
		day := int32(y*10000 + int(mo)*100 + d)
		dt := t.daily[z][day]
		if dt == nil {
			dt = &Tokens{}
			t.daily[z][day] = dt
		}
		dt.add(u)
	}
}

func (t *tally) merge(o *tally) {
	t.all.merge(o.all)
	t.uncosted.merge(o.uncosted)
	t.copies += o.copies
	t.rollups += o.rollups
	t.micros += o.micros
	for i := range t.kinds {
		t.kinds[i].Tokens.merge(o.kinds[i].Tokens)
		t.kinds[i].CostRecordedMicros += o.kinds[i].CostRecordedMicros
	}
	for k, v := range o.models {
		m := t.models[k]
		if m == nil {
			m = &ModelUsage{}
			t.models[k] = m
		}
		m.Tokens.merge(v.Tokens)
		m.Uncosted.merge(v.Uncosted)
		m.CostRecordedMicros += v.CostRecordedMicros
	}
	for z := range t.daily {
		for d, v := range o.daily[z] {
			dt := t.daily[z][d]
			if dt == nil {
				dt = &Tokens{}
				t.daily[z][d] = dt
			}
			dt.merge(*v)
		}
	}
}

func (t *tally) usage() Usage {
	u := Usage{Tokens: t.all, Copies: t.copies, Rollups: t.rollups, CostRecordedMicros: t.micros, CostRecorded: microsToUSD(t.micros),
		Uncosted: t.uncosted, ByKind: map[string]*KindUsage{}, ByModel: map[string]*ModelUsage{},
		Daily: map[string]map[string]*Tokens{}}
	for i := range t.kinds {
		k := t.kinds[i]
		k.CostRecorded = microsToUSD(k.CostRecordedMicros)
		u.ByKind[recKindNames[i]] = &k
	}
	for m, v := range t.models {
		mu := *v
		mu.CostRecorded = microsToUSD(mu.CostRecordedMicros)
		u.ByModel[modelKey(m)] = &mu
	}
	for z, name := range DailyZones {
		days := map[string]*Tokens{}
		for d, v := range t.daily[z] {
			days[fmt.Sprintf("%04d-%02d-%02d", d/10000, d/100%100, d%100)] = v
		}
		u.Daily[name] = days
	}
	return u
}

// LoadManifest reads a manifest.json written by [Generate].
func LoadManifest(path string) (*Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if m.Generator != generatorName || m.Version != ManifestVersion {
		return nil, fmt.Errorf("manifest %s: generator %q version %d, want %q version %d", path, m.Generator, m.Version, generatorName, ManifestVersion)
	}
	return &m, nil
}

func (m *Manifest) sortFiles() {
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	sort.Slice(m.Extras, func(i, j int) bool { return m.Extras[i].Path < m.Extras[j].Path })
}
