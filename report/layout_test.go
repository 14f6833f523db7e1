package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestGoldenTable pins the terminal table: the Models column, the
// compact layout (at most 80 columns) and a 60-column terminal, with
// and without colour (a marker style: the escape codes of the CLI's
// colours are pinned by its own golden test). Checked by hand against
// daily.txt: same numbers, models most expensive first.
func TestGoldenTable(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.duckdb")
	la := mustLoc(t, "America/Los_Angeles")
	mark := func(tag string) func(string) string {
		return func(s string) string { return "<" + tag + ">" + s + "</" + tag + ">" }
	}
	marked := Style{Title: mark("title"), Header: mark("h"), Rule: mark("rule"), Total: mark("total"), Unpriced: mark("u")}
	for _, c := range []struct {
		kind Kind
		name string
		o    TableOptions
	}{
		{Daily, "daily-models.txt", TableOptions{Models: true}},
		{Daily, "daily-compact.txt", TableOptions{Models: true, Compact: true}},
		{Daily, "daily-width60.txt", TableOptions{Models: true, Width: 60}},
		{Daily, "daily-styled.txt", TableOptions{Models: true, Style: marked}},
		{Session, "session-compact.txt", TableOptions{Models: true, Compact: true}},
	} {
		r := runOnDB(t, c.kind, db, goldenInputs(), func(o *Options) { o.Location = la })
		r.Zone = "America/Los_Angeles"
		var b bytes.Buffer
		if err := r.WriteTable(&b, c.o); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.name, b.Bytes())
		limit := c.o.Width
		if c.o.Compact {
			limit = CompactWidth
		}
		if limit == 0 {
			continue
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > limit {
				t.Errorf("%s: a line of %d columns, over %d: %q", c.name, n, limit, l)
			}
		}
	}
}

// TestOrder: --order desc puts the latest day first (time reports) and
// asc the cheapest model first (cost reports); the natural orders are
// ascending time and descending cost.
func TestOrder(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.duckdb")
	keys := func(k Kind, order string) []string {
		r := runOnDB(t, k, db, goldenInputs(), func(o *Options) { o.Order = order })
		var out []string
		for _, row := range r.Rows {
			out = append(out, row.Key)
		}
		return out
	}
	asc, desc := keys(Daily, "asc"), keys(Daily, "desc")
	if len(asc) < 3 || strings.Join(asc, ",") != strings.Join(keys(Daily, ""), ",") {
		t.Fatalf("daily asc %v differs from the natural order", asc)
	}
	for i := range asc {
		if desc[i] != asc[len(asc)-1-i] {
			t.Fatalf("daily desc %v is not asc %v reversed", desc, asc)
		}
	}
	r := runOnDB(t, Model, db, goldenInputs(), func(o *Options) { o.Order = "asc" })
	for i := 1; i < len(r.Rows); i++ {
		if r.Rows[i-1].Cost > r.Rows[i].Cost {
			t.Errorf("model --order asc: %v before %v", r.Rows[i-1].Cost, r.Rows[i].Cost)
		}
	}
	if _, err := Run(t.Context(), Options{Kind: Daily, DBPath: db, NoRefresh: true, Order: "up"}); err == nil {
		t.Error("order up: no error")
	}
}

// TestParseSinceLast: relative --since and --last count back from today
// in the report's zone.
func TestParseSinceLast(t *testing.T) {
	paris := mustLoc(t, "Europe/Paris")
	// 23:30 UTC on Wednesday 2026-12-02 is already Thursday 12-03 in Paris.
	now := time.Date(2026, 12, 2, 23, 30, 0, 0, time.UTC)
	day := func(s string) time.Time {
		d, err := ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		since string
		loc   *time.Location
		want  string
	}{
		{"7d", time.UTC, "2026-11-25"}, {"7d", paris, "2026-11-26"}, {"0d", time.UTC, "2026-12-02"},
		{"2w", time.UTC, "2026-11-18"}, {"1m", time.UTC, "2026-11-02"}, {"2025-01-31", time.UTC, "2025-01-31"},
		{"20250131", paris, "2025-01-31"},
	} {
		got, err := ParseSince(c.since, now, c.loc)
		if err != nil || !got.Equal(day(c.want)) {
			t.Errorf("ParseSince(%q, %v) = %v, %v; want %s", c.since, c.loc, got, err, c.want)
		}
	}
	if got := monthsBack(day("2026-03-31"), 1); !got.Equal(day("2026-02-28")) {
		t.Errorf("a month before 03-31: %v, want 02-28", got)
	}
	for _, c := range []struct {
		last string
		kind Kind
		want string
	}{
		{"7d", Daily, "2026-11-26"}, {"1d", Daily, "2026-12-02"}, {"7", Daily, "2026-11-26"},
		{"2w", Daily, "2026-11-23"}, {"2", Weekly, "2026-11-23"}, {"1w", Session, "2026-11-30"},
		{"3m", Daily, "2026-10-01"}, {"3", Monthly, "2026-10-01"}, {"1m", Monthly, "2026-12-01"},
	} {
		got, err := ParseLast(c.last, c.kind, now, time.UTC)
		if err != nil || !got.Equal(day(c.want)) {
			t.Errorf("ParseLast(%q, %s) = %v, %v; want %s", c.last, c.kind, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "0d", "-1d", "7y", "d", "x7d"} {
		if _, err := ParseLast(bad, Daily, now, time.UTC); err == nil {
			t.Errorf("ParseLast(%q): no error", bad)
		}
	}
	for _, bad := range []string{"7y", "yesterday", "2025-13-01"} {
		if _, err := ParseSince(bad, now, time.UTC); err == nil {
			t.Errorf("ParseSince(%q): no error", bad)
		}
	}
}
