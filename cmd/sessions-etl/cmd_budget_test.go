package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// budgetCase writes a pi session with $3 on 2025-06-02 and $2 on
// 2025-06-04 (UTC).
func budgetCase(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	line := func(id, parent, at string, cost float64) string {
		return `{"type":"message","id":"` + id + `","parentId":` + parent + `,"timestamp":"` + at + `","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"total":` + strconv.FormatFloat(cost, 'g', -1, 64) + `}}}}` + "\n"
	}
	body := `{"type":"session","version":3,"id":"33333333-0000-4000-8000-000000000001","timestamp":"2025-06-02T10:00:00.000Z","cwd":"/home/dev/web"}` + "\n" +
		line("a0000001", "null", "2025-06-02T10:00:00.000Z", 3) + line("a0000002", `"a0000001"`, "2025-06-04T10:00:00.000Z", 2)
	p := filepath.Join(dir, ".pi", "agent", "sessions", "--home-dev-web--", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBudgetCheckExitCodes: 0 when every current period is within its
// budget, 3 when one is over, 2 on usage errors; report daily marks the
// days over --budget-daily.
func TestBudgetCheckExitCodes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := budgetCase(t)
	now := time.Date(2025, 6, 4, 12, 0, 0, 0, time.UTC)
	code, out, errOut := runAt(t, now, "", "budget", "check", "--tz", "UTC", "--daily", "5", "--weekly", "10", dir)
	if code != ExitOK || !strings.Contains(out, "2025-06-04") || !strings.Contains(out, "2025-W23") || strings.Contains(out, "OVER") {
		t.Errorf("within budget: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runAt(t, now, "", "budget", "check", "--tz", "UTC", "--daily", "5", "--weekly", "4.99", dir)
	if code != ExitOverBudget || !strings.Contains(out, "OVER by $0.0100") {
		t.Errorf("over the weekly budget: exit %d, want 3\n%s%s", code, out, errOut)
	}
	code, out, _ = runAt(t, now, "", "budget", "check", "--tz", "UTC", "--project-budget", "web:daily=1.5", "--json", dir)
	var doc struct {
		Periods []struct {
			Project    *string `json:"project"`
			Key        string  `json:"key"`
			Cost       float64 `json:"cost"`
			OverBudget bool    `json:"overBudget"`
		} `json:"periods"`
		OverBudget bool `json:"overBudget"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != ExitOverBudget || !doc.OverBudget || len(doc.Periods) != 1 || doc.Periods[0].Project == nil ||
		*doc.Periods[0].Project != "web" || doc.Periods[0].Cost != 2 {
		t.Errorf("project budget --json: exit %d %+v", code, doc)
	}
	for _, bad := range [][]string{
		{"budget", "check", dir},                   // no budget
		{"budget", "check", "--daily", "-1", dir},  // not positive
		{"budget", "check", "--daily", "ten", dir}, // not a number
		{"budget", "check", "--project-budget", "web", dir},
		{"budget", "check", "--project-budget", "web:hourly=3", dir},
		{"budget", "check", "--daily", "5", "--since", "2025-06-01", dir}, // not a flag of check
		{"budget"},
		{"report", "daily", "--budget-daily", "0", dir},
	} {
		code, _, errOut := runAt(t, now, "", bad...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, errOut)
		}
	}
	code, out, _ = runAt(t, now, "", "report", "daily", "--tz", "UTC", "--budget-daily", "2.5", dir)
	if code != ExitOK || !strings.Contains(out, "OVER 120.0%") || !strings.Contains(out, "80.0%") || !strings.Contains(out, "1 day over the budget of $2.50.") {
		t.Errorf("report daily --budget-daily: exit %d\n%s", code, out)
	}
}
