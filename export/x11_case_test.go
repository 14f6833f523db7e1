package export

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestX11RollupParts: in both sinks, the rows of the two roll-ups of the
// case x11-parallel-rollup-in-part are those its expected.json gives
// (computed by hand): the roll-up itself, its rest row and one part per
// child with its own usage, and which of them count — the parts of the
// children not read and a rest row with something left; and the
// calculated cost the case gives a row (R: a roll-up whose children's sum
// crosses the long-context tier, read in part, leaves no rest: seed 39).
func TestX11RollupParts(t *testing.T) {
	dir := filepath.Join(casesDir, "x11-parallel-rollup-in-part")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		UsageRows map[string][]struct {
			Part      *int     `json:"rollup_part"`
			Counted   bool     `json:"counted"`
			Input     int64    `json:"input"`
			Output    int64    `json:"output"`
			CacheRead int64    `json:"cache_read"`
			Cost      float64  `json:"cost_total"`
			Calc      *float64 `json:"calculated_cost_total"`
		} `json:"usage_rows"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			for label, rows := range exp.UsageRows {
				entry := label[strings.LastIndexByte(label, ' ')+1:]
				var want []string
				for _, r := range rows {
					part := "∅"
					if r.Part != nil {
						part = fmt.Sprint(*r.Part)
					}
					want = append(want, fmt.Sprintf("%s|%v|%d|%d|%d|%.9f", part, r.Counted, r.Input, r.Output, r.CacheRead, r.Cost))
				}
				got := queryStrings(t, db, `SELECT rollup_part, counted, input, output, cache_read, printf('%.9f', cost_total)
					FROM usage WHERE entry_id = '`+entry+`' ORDER BY rollup_part NULLS FIRST`)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s (-want +got):\n%s", label, d)
				}
				// The calculated cost, where the case gives it: a rest row's
				// is its tokens at the roll-up's rates, none when no token is
				// left (a roll-up in a long-context tier its parts are not in).
				for _, r := range rows {
					if r.Calc == nil {
						continue
					}
					part := "rollup_part IS NULL"
					if r.Part != nil {
						part = fmt.Sprint("rollup_part = ", *r.Part)
					}
					var calc sql.NullFloat64
					queryOne(t, db, `SELECT calculated_cost_total FROM usage WHERE entry_id = '`+entry+`' AND `+part, &calc)
					if !calc.Valid || math.Abs(calc.Float64-*r.Calc) > 1e-9 {
						t.Errorf("%s part %s: calculated_cost_total %v, want %.9f", label, part, calc, *r.Calc)
					}
				}
			}
		})
	}
}
