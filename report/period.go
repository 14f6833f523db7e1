package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// relSpan is a relative span: a count and a unit, "7d", "2w", "3m".
type relSpan struct {
	n    int
	unit byte // 'd', 'w' or 'm'
}

func parseSpan(s string) (relSpan, bool) {
	if len(s) < 2 {
		return relSpan{}, false
	}
	unit := s[len(s)-1]
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 0 || n > 100000 || !strings.ContainsRune("dwm", rune(unit)) {
		return relSpan{}, false
	}
	return relSpan{n, unit}, true
}

// today is the day of now in loc, as midnight UTC of that date (the form
// of ParseDate).
func today(now time.Time, loc *time.Location) time.Time {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ParseSince reads a --since value: a day (YYYY-MM-DD or YYYYMMDD) or a
// relative one, counted back from today in loc: "7d" (7 days ago), "2w"
// (14 days ago), "3m" (the same day 3 months ago; the month's last day
// when it has no such day), "0d" (today).
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if sp, ok := parseSpan(s); ok {
		t := today(now, loc)
		switch sp.unit {
		case 'd':
			return t.AddDate(0, 0, -sp.n), nil
		case 'w':
			return t.AddDate(0, 0, -7*sp.n), nil
		}
		return monthsBack(t, sp.n), nil
	}
	t, err := ParseDate(s)
	if err != nil {
		return t, fmt.Errorf("date %q: want YYYY-MM-DD, YYYYMMDD or a number of days, weeks or months ago (7d, 2w, 3m)", s)
	}
	return t, nil
}

// monthsBack is the same day n months before t, or that month's last day.
func monthsBack(t time.Time, n int) time.Time {
	first := time.Date(t.Year(), t.Month()-time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(t.Day(), last), 0, 0, 0, 0, time.UTC)
}

// ParseLast reads a --last value, the last N periods up to today in loc,
// today's included: "7d" (today and the 6 days before), "2w" (this ISO
// week and the one before, from its Monday), "3m" (this month and the 2
// before, from the 1st). A bare number counts the report's own periods:
// weeks for weekly, months for monthly, days otherwise. It returns the
// first day (the --since it stands for).
func ParseLast(s string, k Kind, now time.Time, loc *time.Location) (time.Time, error) {
	sp, ok := parseSpan(s)
	if !ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100000 {
			return time.Time{}, fmt.Errorf("%q: want a number of days, weeks or months (7d, 2w, 3m), or a number of the report's periods", s)
		}
		sp = relSpan{n, 'd'}
		switch k {
		case Weekly:
			sp.unit = 'w'
		case Monthly:
			sp.unit = 'm'
		}
	}
	if sp.n < 1 {
		return time.Time{}, fmt.Errorf("%q: want at least one period", s)
	}
	t := today(now, loc)
	switch sp.unit {
	case 'd':
		return t.AddDate(0, 0, -(sp.n - 1)), nil
	case 'w':
		monday := t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
		return monday.AddDate(0, 0, -7*(sp.n-1)), nil
	}
	return time.Date(t.Year(), t.Month()-time.Month(sp.n-1), 1, 0, 0, 0, 0, time.UTC), nil
}

// Orders are the values Options.Order accepts ("" is the natural order).
var Orders = []string{"asc", "desc"}

// applyOrder orders the rows: time reports and sessions by time
// (ascending by default), the others by cost (descending by default);
// "asc" or "desc" chooses the direction of that order. Rows without a
// timestamp stay last.
func applyOrder(r *Report, order string) {
	if order == "" {
		return
	}
	byTime := r.Kind.timeKind() || r.Kind == Session
	if (byTime && order == "asc") || (!byTime && order == "desc") {
		return
	}
	if r.Kind == Tools {
		slices.Reverse(r.ToolRows)
		return
	}
	n := len(r.Rows)
	if byTime && n > 0 && r.Rows[n-1].Key == "" && r.Kind != Session {
		slices.Reverse(r.Rows[:n-1])
		return
	}
	slices.Reverse(r.Rows)
}
