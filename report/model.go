package report

import (
	"sort"
	"time"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// Tokens are token sums over billed records.
type Tokens struct {
	Records     int64
	Input       int64
	Output      int64
	CacheRead   int64
	CacheWrite  int64
	TotalTokens int64 // SPEC.md §4: each record's totalTokens, else the sum of its four counts
}

func (t *Tokens) add(o Tokens) {
	t.Records += o.Records
	t.Input += o.Input
	t.Output += o.Output
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
	t.TotalTokens += o.TotalTokens
}

// Usage is the billed usage of a group of records and what it cost.
type Usage struct {
	Tokens
	// Cost is the sum of the priced records' costs in USD. It is the whole
	// cost only when Unpriced.Records is 0.
	Cost              float64
	RecordedRecords   int64  // costed from usage.cost
	CalculatedRecords int64  // costed from the price table
	Unpriced          Tokens // records with neither (SPEC.md §4: never $0)

	exact femto // Cost, summed exactly
}

func (u *Usage) add(o Usage) {
	u.Tokens.add(o.Tokens)
	u.exact = u.exact.add(o.exact)
	u.Cost = u.exact.usd()
	u.RecordedRecords += o.RecordedRecords
	u.CalculatedRecords += o.CalculatedRecords
	u.Unpriced.add(o.Unpriced)
}

// Priced reports whether any record of u has a cost.
func (u Usage) Priced() bool { return u.RecordedRecords+u.CalculatedRecords > 0 }

// Complete reports whether every record of u has a cost.
func (u Usage) Complete() bool { return u.Unpriced.Records == 0 }

// ModelKey names a provider/model pair; either may be empty (unknown).
type ModelKey struct{ Provider, Model string }

// String is "provider/model", with "unknown" for a missing part.
func (k ModelKey) String() string {
	p, m := k.Provider, k.Model
	if p == "" {
		p = "unknown"
	}
	if m == "" {
		m = "unknown"
	}
	return p + "/" + m
}

// ModelUsage is the usage of one provider/model.
type ModelUsage struct {
	ModelKey
	Usage
}

// UnpricedUsage is the usage of one provider/model that has no cost.
type UnpricedUsage struct {
	ModelKey
	Tokens
}

// SessionInfo describes a session, from its oldest file.
type SessionInfo struct {
	Source, Project, Cwd, Name, ParentSessionID string
}

// Row is one line of a usage report.
type Row struct {
	// Key identifies the row: the day (YYYY-MM-DD), the Monday of the ISO
	// week, the month (YYYY-MM), the session id, project, "provider/model"
	// or provider. It is "" for records without a timestamp (time reports)
	// or without a project.
	Key string
	// Week is the ISO week (2025-W18) of weekly rows.
	Week string
	// ModelKey is set on model rows; Provider on provider rows.
	ModelKey
	Usage
	Models []ModelUsage // per provider/model, most expensive first
	// First and Last are the instants of the row's first and last record
	// (zero when none has a timestamp).
	First, Last time.Time
	// Sessions counts distinct sessions (project rows).
	Sessions int
	// Subagents are the sessions a session row's subagent roll-ups stand
	// for (SPEC.md §7.3), WithSubagents its usage with theirs (nil without
	// subagents), and Depth how deep a child row sits under its parent.
	Subagents     []string
	WithSubagents *Usage
	Depth         int
	// Cwd is the working directory of a project row's sessions (SPEC.md
	// §7.5: labels tell cwds apart; the first in sort order when several
	// spellings of one directory share the label).
	Cwd     string
	Session *SessionInfo // session rows
}

// ToolRow is one line of the tools report.
type ToolRow struct {
	Tool    string // "" when the toolCall block has no name
	Calls   int64  // toolCall blocks
	Results int64  // calls answered by a toolResult in the same file
	Errors  int64  // results with isError
	// OutputBytes sums the byte sizes of the results' content blocks.
	OutputBytes int64
	Models      []ToolModel // per model of the calling assistant message
}

// ToolModel is the part of a ToolRow made by one model.
type ToolModel struct {
	ModelKey
	Calls, Results, Errors, OutputBytes int64
}

func (t *ToolRow) add(o ToolModel) {
	t.Calls += o.Calls
	t.Results += o.Results
	t.Errors += o.Errors
	t.OutputBytes += o.OutputBytes
}

// ErrorRate is Errors / Results (0 when there are no results).
func (t ToolRow) ErrorRate() float64 {
	if t.Results == 0 {
		return 0
	}
	return float64(t.Errors) / float64(t.Results)
}

// Report is the answer to one report question.
type Report struct {
	// Notes are things the user should know about the run (printed on
	// stderr by the CLI), e.g. a cache database rebuilt.
	Notes    []string
	Kind     Kind
	Location *time.Location
	// Zone is the name the text header shows for Location
	// (Location.String() unless the caller names it: Zone.Label).
	Zone string
	// ZoneName is the IANA name of Location, the JSON report.timezone
	// (Location.String() unless the caller names it: Zone.Name); "" when
	// unknown (JSON null), never a display string.
	ZoneName     string
	Since, Until time.Time // zero: open
	Source       string
	Project      string
	Model        string
	CostMode     export.CostMode
	Pricing      *pricing.Table
	// Repriced says costs were computed again in Go because the database
	// was priced with another table.
	Repriced bool

	Rows   []Row
	Totals Usage
	// Unpriced lists, per provider/model, the usage that has no cost.
	Unpriced []UnpricedUsage

	ToolRows   []ToolRow
	ToolTotals ToolRow

	// Budget is the USD limit of one period of a daily, weekly or monthly
	// report (0: none), set by the caller; see budget.go.
	Budget float64

	// Files are the files left out or used only in part (every report
	// kind; not narrowed by the filters).
	Files Files

	// Ingest is the export run that refreshed the database (nil with
	// NoRefresh).
	Ingest *export.Summary
}

// sortModels orders model usage most expensive first, then by tokens and
// name, so that output never depends on map order.
func sortModels(ms []ModelUsage) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.Cost != b.Cost {
			return a.Cost > b.Cost
		}
		if a.TotalTokens != b.TotalTokens {
			return a.TotalTokens > b.TotalTokens
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.Model < b.Model
	})
}
