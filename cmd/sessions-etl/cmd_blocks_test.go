package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runAt runs sessions-etl in-process with a fixed clock.
func runAt(t *testing.T, now time.Time, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IO{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb, Now: func() time.Time { return now }, Home: t.TempDir()}
	code := runWith(context.Background(), ios, args)
	return code, out.String(), errb.String()
}

// TestBlocksCLI: report blocks over the fork case c07 with a fixed clock:
// two blocks and a gap, the fork's copy counted once; --active with now
// inside the second block; bad flag values are usage errors.
func TestBlocksCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(reportCases, "c07-early-v4-and-fork-counted-once")
	now := time.Date(2025, 5, 2, 9, 0, 0, 0, time.UTC)
	code, out, errOut := runAt(t, now, "", "report", "blocks", "--json", "--tz", "UTC", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Blocks []struct {
			ID         string  `json:"id"`
			IsActive   bool    `json:"isActive"`
			IsGap      bool    `json:"isGap"`
			Entries    int64   `json:"entries"`
			CostUSD    float64 `json:"costUSD"`
			BurnRate   *struct{ CostPerHour float64 }
			Projection *struct{ RemainingMinutes int64 }
		} `json:"blocks"`
		Totals struct {
			Records   int64    `json:"records"`
			TotalCost *float64 `json:"totalCost"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Blocks) != 3 || !doc.Blocks[1].IsGap || !doc.Blocks[2].IsActive || doc.Blocks[0].IsActive {
		t.Fatalf("blocks %+v", doc.Blocks)
	}
	if doc.Totals.Records != 2 || doc.Totals.TotalCost == nil || *doc.Totals.TotalCost != 0.024 {
		t.Errorf("totals %+v, want c07's 2 records and $0.024", doc.Totals)
	}
	a := doc.Blocks[2]
	// $0.004 over the hour since 08:00; 4 h left.
	if a.BurnRate == nil || a.BurnRate.CostPerHour != 0.004 || a.Projection == nil || a.Projection.RemainingMinutes != 240 {
		t.Errorf("active block %+v %+v", a.BurnRate, a.Projection)
	}
	code, out, _ = runAt(t, now, "", "report", "blocks", "--active", "--tz", "UTC", dir)
	if code != ExitOK || !strings.Contains(out, "ACTIVE") || strings.Contains(out, "2025-05-01") ||
		!strings.Contains(out, "4h 00m left") || !strings.Contains(out, "Burn rate:") {
		t.Errorf("--active: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--token-limit", "lots"}, {"--token-limit", "-5"}, {"--active", "--recent"}, {"--breakdown"}} {
		code, _, errOut := runAt(t, now, "", append([]string{"report", "blocks", dir}, bad...)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, errOut)
		}
	}
	code, out, _ = runAt(t, now, "", "report", "blocks", "--csv", "--token-limit", "10000", "--tz", "UTC", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 4 || !strings.HasPrefix(lines[0], "block_id,start,end") || !strings.HasSuffix(lines[1], ",65") {
		t.Errorf("--csv: exit %d\n%s", code, out)
	}
}
