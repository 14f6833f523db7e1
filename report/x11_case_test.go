package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// x11Dir is the case of a pi-subagents parallel run read in part (issue
// 11): its expected.json gives, computed by hand, every session's own
// usage, its children and its usage with them, and the rows' order.
var x11Dir = filepath.Join(casesDir, "x11-parallel-rollup-in-part")

type x11Usage struct {
	Records   int64   `json:"records"`
	Input     int64   `json:"input"`
	Output    int64   `json:"output"`
	CacheRead int64   `json:"cache_read"`
	Cost      float64 `json:"cost"`
}

type x11Expected struct {
	Sessions map[string]struct {
		Parent        string    `json:"parent"`
		Own           x11Usage  `json:"own"`
		Children      []string  `json:"children"`
		WithSubagents *x11Usage `json:"with_subagents"`
	} `json:"sessions"`
	SessionOrder []string `json:"session_order"`
}

func (w x11Usage) differs(u Usage) bool {
	return u.Records != w.Records || u.Input != w.Input || u.Output != w.Output || u.CacheRead != w.CacheRead || relDiff(u.Cost, w.Cost) > 1e-9
}

// TestX11SessionTree: in the session report of a home where a parallel
// run's children were read in part, each child read is under its parent,
// each session's own usage and its usage with its subagents are the
// case's, and no child's spend is counted twice (the totals are checked by
// TestCases from the same expected.json).
func TestX11SessionTree(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(x11Dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp x11Expected
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	r := runOnDB(t, Session, filepath.Join(t.TempDir(), "r.duckdb"), []string{x11Dir}, nil)
	var order []string
	depth := map[string]int{}
	for _, row := range r.Rows {
		order = append(order, row.Key)
		depth[row.Key] = row.Depth
		want, ok := exp.Sessions[row.Key]
		if !ok {
			t.Errorf("unexpected session row %s", row.Key)
			continue
		}
		if want.Own.differs(row.Usage) {
			t.Errorf("%s: own %+v $%.9f, want %+v", row.Key, row.Usage.Tokens, row.Usage.Cost, want.Own)
		}
		if !slices.Equal(row.Subagents, want.Children) {
			t.Errorf("%s: subagents %v, want %v", row.Key, row.Subagents, want.Children)
		}
		switch {
		case want.WithSubagents == nil && row.WithSubagents != nil:
			t.Errorf("%s: with subagents %+v, want none", row.Key, row.WithSubagents.Tokens)
		case want.WithSubagents != nil && (row.WithSubagents == nil || want.WithSubagents.differs(*row.WithSubagents)):
			t.Errorf("%s: with subagents %+v, want %+v", row.Key, row.WithSubagents, want.WithSubagents)
		}
		parent := ""
		if row.Session != nil && row.Session.ParentSessionID != "" {
			parent = row.Session.ParentSessionID
		}
		if parent != want.Parent {
			t.Errorf("%s: parent %q, want %q", row.Key, parent, want.Parent)
		}
	}
	if !slices.Equal(order, exp.SessionOrder) {
		t.Errorf("rows %v, want %v", order, exp.SessionOrder)
	}
	for key, s := range exp.Sessions {
		if want := map[bool]int{true: 1, false: 0}[s.Parent != ""]; depth[key] != want {
			t.Errorf("%s at depth %d, want %d", key, depth[key], want)
		}
	}
}
