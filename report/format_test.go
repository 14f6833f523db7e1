package report

import (
	"math"
	"strings"
	"testing"
)

func TestMoney(t *testing.T) {
	for v, want := range map[float64]string{
		0: "$0.00", 0.00004: "<$0.0001", 0.0006: "$0.0006", 0.5: "$0.5000", 0.99994: "$0.9999", 0.99996: "$1.00",
		1: "$1.00", 1234.567: "$1,234.57", 1e6: "$1,000,000.00",
	} {
		if got := money(v); got != want {
			t.Errorf("money(%v) = %q, want %q", v, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCostText: a cost cell never shows $0.00 for usage without a cost.
func TestCostText(t *testing.T) {
	priced := Usage{Tokens: Tokens{Records: 2}, RecordedRecords: 2, Cost: 1.5}
	mixed := Usage{Tokens: Tokens{Records: 2}, RecordedRecords: 1, Cost: 1.5, Unpriced: Tokens{Records: 1}}
	none := Usage{Tokens: Tokens{Records: 1}, Unpriced: Tokens{Records: 1}}
	free := Usage{Tokens: Tokens{Records: 1}, CalculatedRecords: 1}
	for _, c := range []struct {
		u    Usage
		want string
	}{{priced, "$1.50"}, {mixed, "$1.50 + unpriced"}, {none, "unpriced"}, {free, "$0.00"}, {Usage{}, "$0.00"}} {
		if got := costText(c.u); got != c.want {
			t.Errorf("costText(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
	// SPEC.md §7.6: JSON costs are always numbers, the priced part.
	if costJSON(none) != 0 || costJSON(free) != 0 || costJSON(mixed) != 1.5 {
		t.Errorf("costJSON: none %v, free %v, mixed %v; want 0, 0, 1.5", costJSON(none), costJSON(free), costJSON(mixed))
	}
}

// TestFemto: exact sums in any order, conversion to the nearest float64,
// and the DuckDB DECIMAL text form.
func TestFemto(t *testing.T) {
	a, b, c := femtoOf(0.1), femtoOf(0.2), femtoOf(1500.52180745)
	if got := a.add(b).usd(); got != 0.3 {
		t.Errorf("0.1 + 0.2 = %v, want 0.3", got)
	}
	if x, y := a.add(b).add(c), c.add(a).add(b); x != y || x.usd() != 1500.82180745 {
		t.Errorf("sums %v %v (%v)", x, y, x.usd())
	}
	big := femto{hi: 1}
	if got := big.usd(); math.Abs(got-18446.744073709551616) > 1e-9 {
		t.Errorf("2^64 femto = %v USD", got)
	}
	if femtoOf(-1) != (femto{}) || femtoOf(math.NaN()) != (femto{}) || femtoOf(math.Inf(1)) != (femto{}) {
		t.Error("negative, NaN or infinite costs must be 0")
	}
	if got := femtoOf(1e9); got.usd() != 1e9 {
		t.Errorf("1e9 USD round trip: %v", got.usd())
	}
	for s, want := range map[string]float64{"": 0, "0.000000000000001": 1e-15, "12.5": 12.5, "3974.124293945000000": 3974.124293945} {
		f, err := parseFemto(s)
		if err != nil || f.usd() != want {
			t.Errorf("parseFemto(%q) = %v, %v; want %v", s, f.usd(), err, want)
		}
	}
	for _, bad := range []string{"-1.0", "x", "1.0000000000000001"} {
		if _, err := parseFemto(bad); err == nil {
			t.Errorf("parseFemto(%q) accepted", bad)
		}
	}
}

// TestCellsStayOnTheirRow: a newline or tab in a cell (a cwd, a session
// name) is shown escaped in the table and Markdown outputs, so every row
// is one line; a pipe is escaped in Markdown.
func TestCellsStayOnTheirRow(t *testing.T) {
	g := grid{cols: []column{{"Project", false}, {"Records", true}},
		rows:   [][]string{{"a\nb|c", "1"}, {"tab\there", "2"}},
		totals: []string{"Total", "3"}}
	var table, md strings.Builder
	g.table(&table)
	g.markdown(&md)
	wantTable := "Project    Records\n──────────────────\n" + `a\nb|c` + "           1\n" + `tab\there` + "        2\n──────────────────\nTotal            3\n"
	if table.String() != wantTable {
		t.Errorf("table:\n%q\nwant\n%q", table.String(), wantTable)
	}
	for i, l := range strings.Split(strings.TrimSuffix(md.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
			t.Errorf("markdown line %d is not a table row: %q", i, l)
		}
	}
	if !strings.Contains(md.String(), `| a\nb\|c | 1 |`) {
		t.Errorf("markdown:\n%s", md.String())
	}
	if g.rows[0][0] != "a\nb|c" {
		t.Errorf("rendering changed the grid: %q", g.rows[0][0])
	}
}
