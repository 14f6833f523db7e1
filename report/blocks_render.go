package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteText renders the blocks as a table, Markdown or CSV: one row per
// block (gaps included), the totals, then the active block's burn rate and
// projection and the unpriced usage.
func (b *BlocksReport) WriteText(w io.Writer, f Format) error {
	if f == CSV {
		return b.writeCSV(w)
	}
	var s strings.Builder
	s.WriteString(b.blocksTitle(f))
	s.WriteString("\n\n")
	if len(b.Blocks) == 0 {
		switch {
		case b.Active:
			s.WriteString("No active block")
		default:
			s.WriteString("No usage found")
		}
		s.WriteString(b.filterNote() + ".\n")
		s.WriteString(b.noTimestampNote())
		_, err := io.WriteString(w, s.String())
		return err
	}
	g := b.grid()
	if f == Markdown {
		g.markdown(&s)
	} else {
		g.table(&s)
	}
	if a := b.ActiveBlock(); a != nil {
		s.WriteString("\n")
		s.WriteString(b.activeNote(a))
	}
	s.WriteString(b.noTimestampNote())
	s.WriteString(b.notes(f))
	_, err := io.WriteString(w, s.String())
	return err
}

func (b *BlocksReport) blocksTitle(f Format) string {
	t := "Billing blocks (5 h, from the UTC hour of their first record)"
	parts := []string{"times in " + b.Zone, "cost " + string(b.CostMode)}
	if b.TokenLimit > 0 {
		l := "token limit " + num(b.TokenLimit)
		if b.TokenLimitMax {
			l += " (largest past block)"
		}
		parts = append(parts, l)
	}
	if b.Active {
		parts = append(parts, "active block only")
	} else if b.Recent {
		parts = append(parts, fmt.Sprintf("last %d days", RecentDays))
	}
	if fn := b.filterNote(); fn != "" {
		parts = append(parts, strings.TrimSuffix(strings.TrimPrefix(fn, " ("), ")"))
	}
	s := t + " — " + strings.Join(parts, "; ")
	if f == Markdown {
		return "**" + s + "**"
	}
	return s
}

// localTime formats an instant in the report's zone.
func (b *BlocksReport) localTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(b.Location).Format("2006-01-02 15:04")
}

// hoursMinutes formats a duration as "4h 05m" ("3d 04h 05m" from 48 h).
func hoursMinutes(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int64(d/time.Hour), int64(d%time.Hour/time.Minute)
	if h >= 48 {
		return fmt.Sprintf("%dd %02dh %02dm", h/24, h%24, m)
	}
	return fmt.Sprintf("%dh %02dm", h, m)
}

func modelNames(ms []ModelUsage) string {
	var names []string
	seen := map[string]bool{}
	for _, m := range ms {
		n := modelLabel(m.Model)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

func (b *BlocksReport) grid() grid {
	cols := []column{{"Block start", false}, {"Status", false}, {"End", false}, {"Last activity", false}}
	cols = append(cols, usageColumns[:6]...)
	if b.TokenLimit > 0 {
		cols = append(cols, column{"% of limit", true})
	}
	cols = append(cols, column{"Cost (USD)", true}, column{"Models", false})
	g := grid{cols: cols}
	for _, bl := range b.Blocks {
		if bl.Gap {
			row := []string{b.localTime(bl.Start), "gap", b.localTime(bl.End), ""}
			row = append(row, "", "", "", "", "", "")
			if b.TokenLimit > 0 {
				row = append(row, "")
			}
			row = append(row, "", "no records for "+hoursMinutes(bl.End.Sub(bl.Start)+BlockDuration))
			g.rows = append(g.rows, row)
			g.sub = append(g.sub, false)
			continue
		}
		status := ""
		if bl.Active {
			status = "ACTIVE"
		}
		row := []string{b.localTime(bl.Start), status, b.localTime(bl.End), b.localTime(bl.Last)}
		row = append(row, usageCells(bl.Usage)[:6]...)
		if b.TokenLimit > 0 {
			row = append(row, percent(b.Share(bl.TotalTokens)))
		}
		row = append(row, costText(bl.Usage), modelNames(bl.Models))
		g.rows = append(g.rows, row)
		g.sub = append(g.sub, false)
	}
	tot := []string{"Total", "", "", ""}
	tot = append(tot, usageCells(b.Totals)[:6]...)
	if b.TokenLimit > 0 {
		tot = append(tot, "")
	}
	g.totals = append(tot, costText(b.Totals), "")
	return g
}

// activeNote describes the active block: time left, burn rate,
// projection and, with a limit, the projected share.
func (b *BlocksReport) activeNote(a *Block) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Active block: %s to %s, %s elapsed, %s left; %s tokens, %s so far.\n",
		b.localTime(a.Start), b.localTime(a.End), hoursMinutes(b.Now.Sub(a.Start)), hoursMinutes(a.End.Sub(b.Now)), num(a.TotalTokens), costText(a.Usage))
	if r := a.BurnRate; r != nil {
		fmt.Fprintf(&s, "Burn rate: %s tokens/min (%s input+output), %s/hour.\n",
			num(int64(r.TokensPerMinute+0.5)), num(int64(r.TokensPerMinuteForIndicator+0.5)), burnMoney(a.Usage, r.CostPerHour))
	}
	if p := a.Projection; p != nil {
		fmt.Fprintf(&s, "Projected at its end: %s tokens, %s", num(p.TotalTokens), burnMoney(a.Usage, p.TotalCost))
		if b.TokenLimit > 0 {
			fmt.Fprintf(&s, " (%s of the %s token limit", percent(b.Share(p.TotalTokens)), num(b.TokenLimit))
			if p.TotalTokens > b.TokenLimit {
				s.WriteString(", OVER")
			}
			s.WriteString(")")
		}
		s.WriteString(".\n")
	}
	return s.String()
}

// burnMoney is a rate or projection of u's priced part: never $0 for
// unpriced usage.
func burnMoney(u Usage, v float64) string {
	if !u.Priced() && u.Records > 0 {
		return "unpriced"
	}
	s := money(v)
	if !u.Complete() {
		s += " + unpriced"
	}
	return s
}

func (b *BlocksReport) noTimestampNote() string {
	if b.NoTimestamp.Records == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s without a timestamp (%s tokens, %s) belong to no block.\n",
		plural(b.NoTimestamp.Records, "record", "records"), num(b.NoTimestamp.TotalTokens), costText(b.NoTimestamp))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return num(n) + " " + many
}

func (b *BlocksReport) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"block_id", "start", "end", "first_activity", "last_activity", "is_active", "is_gap", "records",
		"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens", "cost_usd",
		"cost_complete", "unpriced_records", "unpriced_tokens", "models", "tokens_per_minute", "cost_per_hour",
		"projected_tokens", "projected_cost", "remaining_minutes", "percent_of_limit"}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, bl := range b.Blocks {
		rec := []string{bl.ID, instant(bl.Start), instant(bl.End), instant(bl.First), instant(bl.Last),
			strconv.FormatBool(bl.Active), strconv.FormatBool(bl.Gap), i64(bl.Records), i64(bl.Input), i64(bl.Output),
			i64(bl.CacheWrite), i64(bl.CacheRead), i64(bl.TotalTokens), f(bl.Cost), strconv.FormatBool(bl.Complete()),
			i64(bl.Unpriced.Records), i64(bl.Unpriced.TotalTokens), strings.Join(jsonModelNames(bl.Models), ";")}
		if r := bl.BurnRate; r != nil {
			rec = append(rec, f(r.TokensPerMinute), f(r.CostPerHour))
		} else {
			rec = append(rec, "", "")
		}
		if p := bl.Projection; p != nil {
			rec = append(rec, i64(p.TotalTokens), f(p.TotalCost), i64(p.RemainingMinutes))
		} else {
			rec = append(rec, "", "", "")
		}
		pct := ""
		if b.TokenLimit > 0 && !bl.Gap {
			pct = f(100 * b.Share(bl.TotalTokens))
		}
		if err := cw.Write(append(rec, pct)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// JSON: ccusage's `blocks --json` keys (id, startTime, endTime,
// actualEndTime, isActive, isGap, entries, tokenCounts, totalTokens,
// costUSD, models, burnRate, projection, tokenLimitStatus) plus ours:
// records, firstActivity, costIncomplete, unpricedRecords, unpricedTokens,
// modelBreakdowns. costUSD is always a number, the priced part; it is the
// whole cost only when costIncomplete is false.

type jsonTokenCounts struct {
	InputTokens              int64 `json:"inputTokens"`
	OutputTokens             int64 `json:"outputTokens"`
	CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
	CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
}

type jsonBurnRate struct {
	TokensPerMinute             float64 `json:"tokensPerMinute"`
	TokensPerMinuteForIndicator float64 `json:"tokensPerMinuteForIndicator"`
	CostPerHour                 float64 `json:"costPerHour"`
}

type jsonProjection struct {
	TotalTokens      int64   `json:"totalTokens"`
	TotalCost        float64 `json:"totalCost"`
	RemainingMinutes int64   `json:"remainingMinutes"`
}

type jsonLimitStatus struct {
	Limit          int64   `json:"limit"`
	ProjectedUsage int64   `json:"projectedUsage"`
	PercentUsed    float64 `json:"percentUsed"`
	Status         string  `json:"status"` // ok, warning (above 80%), exceeds
}

type jsonBlock struct {
	ID               string           `json:"id"`
	StartTime        string           `json:"startTime"`
	EndTime          string           `json:"endTime"`
	ActualEndTime    *string          `json:"actualEndTime"`
	FirstActivity    *string          `json:"firstActivity"`
	IsActive         bool             `json:"isActive"`
	IsGap            bool             `json:"isGap"`
	Entries          int64            `json:"entries"`
	TokenCounts      jsonTokenCounts  `json:"tokenCounts"`
	TotalTokens      int64            `json:"totalTokens"`
	CostUSD          float64          `json:"costUSD"`
	Models           []string         `json:"models"`
	BurnRate         *jsonBurnRate    `json:"burnRate"`
	Projection       *jsonProjection  `json:"projection"`
	TokenLimitStatus *jsonLimitStatus `json:"tokenLimitStatus,omitempty"`
	Records          int64            `json:"records"`
	CostIncomplete   bool             `json:"costIncomplete"`
	UnpricedRecords  int64            `json:"unpricedRecords"`
	UnpricedTokens   int64            `json:"unpricedTokens"`
	ModelBreakdowns  []jsonBreakdown  `json:"modelBreakdowns"`
}

func jsonModelNames(ms []ModelUsage) []string {
	used, _ := breakdownsJSON(ms)
	return used
}

func (b *BlocksReport) blockJSON(bl Block) jsonBlock {
	j := jsonBlock{ID: bl.ID, StartTime: *isoMillis(bl.Start), EndTime: *isoMillis(bl.End), ActualEndTime: isoMillis(bl.Last),
		FirstActivity: isoMillis(bl.First), IsActive: bl.Active, IsGap: bl.Gap, Entries: bl.Records,
		TokenCounts: jsonTokenCounts{InputTokens: bl.Input, OutputTokens: bl.Output, CacheCreationInputTokens: bl.CacheWrite,
			CacheReadInputTokens: bl.CacheRead},
		TotalTokens: bl.TotalTokens, CostUSD: bl.Cost, Records: bl.Records, CostIncomplete: !bl.Complete(),
		UnpricedRecords: bl.Unpriced.Records, UnpricedTokens: bl.Unpriced.TotalTokens}
	j.Models, j.ModelBreakdowns = breakdownsJSON(bl.Models)
	if r := bl.BurnRate; r != nil {
		j.BurnRate = &jsonBurnRate{r.TokensPerMinute, r.TokensPerMinuteForIndicator, r.CostPerHour}
	}
	if p := bl.Projection; p != nil {
		j.Projection = &jsonProjection{p.TotalTokens, p.TotalCost, p.RemainingMinutes}
	}
	if b.TokenLimit > 0 && !bl.Gap {
		used := bl.TotalTokens
		if bl.Projection != nil {
			used = bl.Projection.TotalTokens
		}
		st := &jsonLimitStatus{Limit: b.TokenLimit, ProjectedUsage: used, PercentUsed: 100 * b.Share(bl.TotalTokens), Status: "ok"}
		switch share := b.Share(used); {
		case share > 1:
			st.Status = "exceeds"
		case share > 0.8:
			st.Status = "warning"
		}
		j.TokenLimitStatus = st
	}
	return j
}

// WriteJSON writes the blocks report as one indented JSON document.
func (b *BlocksReport) WriteJSON(w io.Writer) error {
	blocks := []jsonBlock{}
	for _, bl := range b.Blocks {
		blocks = append(blocks, b.blockJSON(bl))
	}
	un := []jsonUnpriced{}
	for _, u := range b.Unpriced {
		un = append(un, jsonUnpriced{Provider: optString(u.Provider), ModelName: optString(u.Model), Records: u.Records,
			InputTokens: u.Input, OutputTokens: u.Output, CacheCreationTokens: u.CacheWrite, CacheReadTokens: u.CacheRead,
			TotalTokens: u.TotalTokens})
	}
	tot := tokensJSON(b.Totals)
	tot.TotalCost = b.Totals.Cost
	meta := jsonBlocksMeta{jsonMeta: b.meta(), Now: *isoMillis(b.Now), TokenLimitMax: b.TokenLimitMax,
		NoTimestamp: b.NoTimestamp.Records}
	if b.TokenLimit > 0 {
		l := b.TokenLimit
		meta.TokenLimit = &l
	}
	return encodeJSON(w, map[string]any{"blocks": blocks, "totals": tot, "unpriced": un, "report": meta})
}

type jsonBlocksMeta struct {
	jsonMeta
	Now           string `json:"now"`
	TokenLimit    *int64 `json:"tokenLimit"`
	TokenLimitMax bool   `json:"tokenLimitIsMaxPastBlock"`
	NoTimestamp   int64  `json:"recordsWithoutTimestamp"`
}
