package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/synth"
)

// The report stages (issue 5) time `sessions-etl report daily` with no set-up
// beyond a cache directory: cold (the cache removed first, so the whole home
// is ingested) and warm (nothing changed since), over the whole home and
// over the pi sessions directory alone, side by side with `ccusage pi daily
// --json` over that same directory when ccusage is on PATH. Each run goes
// through a small wrapper child (child:report-run, child:ccusage-run) that
// points XDG_CACHE_HOME at the work directory and prints the totals, so the
// output column shows where the numbers differ ("$cost+N unpriced, records,
// tok input/output/cache write/cache read, days"), then the command's own
// wall time and MB/s over the root's bytes ("alone"): the table's wall time
// also holds the wrapper's start-up (some 30–40 ms: benchrun links DuckDB).
//
// "report agrees with manifest" checks every report's totals against the
// generator's manifest (tokens exactly, cost within 1e-9 relative) and the
// daily totals in UTC, America/Los_Angeles and Asia/Tokyo day by day, over a
// hard-linked copy of the home.
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		base := filepath.Join(work, "report")
		cacheAll, cachePi := filepath.Join(base, "cache-all"), filepath.Join(base, "cache-pi")
		piDir := filepath.Join(home, ".pi", "agent", "sessions")
		daily := func(cache, root string) []string {
			return []string{"", "child:report-run", cache, root, bin, "report", "daily", "--json", "--quiet", "--tz", "UTC", root}
		}
		fresh := func(cache string) func() error { return func() error { return os.RemoveAll(cache) } }
		// A warm stage run on its own (-only) first fills the cache.
		filled := func(argv []string) func() error {
			return func() error {
				if _, err := os.Stat(argv[2]); err == nil {
					return nil
				}
				_, _, err := timed([]string{"XDG_CACHE_HOME=" + argv[2]}, argv[4:])
				return err
			}
		}
		st := []stage{
			{name: "report daily cold", argv: daily(cacheAll, home), setup: fresh(cacheAll)},
			{name: "report daily warm", compare: "report daily cold", argv: daily(cacheAll, home), setup: filled(daily(cacheAll, home))},
			{name: "report daily cold (.pi sessions)", compare: "ccusage pi daily", argv: daily(cachePi, piDir), setup: fresh(cachePi)},
			{name: "report daily warm (.pi sessions)", compare: "ccusage pi daily", argv: daily(cachePi, piDir), setup: filled(daily(cachePi, piDir))},
		}
		if cc := ccusageBinary(); cc != "" {
			st = append(st, stage{name: "ccusage pi daily", argv: []string{"", "child:ccusage-run", piDir, cc, "pi", "daily", "--json",
				"--offline", "--timezone", "UTC", "--pi-path", piDir}})
		}
		st = append(st, stage{name: "report agrees with manifest", argv: []string{"", "child:check-report", bin, home, filepath.Join(base, "check")}})
		return st
	})
	childModes["report-run"] = reportRun
	childModes["ccusage-run"] = ccusageRun
	childModes["check-report"] = checkReport
}

// ccusageBinary is ccusage's native binary (the npm package's `ccusage` is a
// Node script that starts it; timing the binary leaves Node's start-up
// out), else the `ccusage` on PATH, else "".
func ccusageBinary() string {
	p, err := exec.LookPath("ccusage")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		native := filepath.Join(filepath.Dir(real), "..", "node_modules", "@ccusage", "ccusage-linux-x64", "bin", "ccusage")
		if fi, err := os.Stat(native); err == nil && fi.Mode().IsRegular() {
			return native
		}
	}
	return p
}

// dailyJSON is the part of a daily --json output (ours or ccusage's) the
// stages print.
type dailyJSON struct {
	Daily  []json.RawMessage `json:"daily"`
	Totals struct {
		InputTokens         int64    `json:"inputTokens"`
		OutputTokens        int64    `json:"outputTokens"`
		CacheCreationTokens int64    `json:"cacheCreationTokens"`
		CacheReadTokens     int64    `json:"cacheReadTokens"`
		TotalTokens         int64    `json:"totalTokens"`
		TotalCost           *float64 `json:"totalCost"`
		Records             int64    `json:"records"`
		UnpricedRecords     int64    `json:"unpricedRecords"`
	} `json:"totals"`
}

// summary is one short line (benchrun keeps 160 characters of it): cost,
// records, tokens in/out/cache write/cache read, days.
func (d dailyJSON) summary() string {
	t := d.Totals
	cost := "null"
	if t.TotalCost != nil {
		cost = fmt.Sprintf("$%.2f", *t.TotalCost)
	}
	if t.UnpricedRecords > 0 {
		cost += fmt.Sprintf("+%d unpriced", t.UnpricedRecords)
	}
	rec := ""
	if t.Records > 0 {
		rec = fmt.Sprintf(" %d rec,", t.Records)
	}
	return fmt.Sprintf("%s,%s tok %d/%d/%d/%d, %d days", cost, rec, t.InputTokens, t.OutputTokens,
		t.CacheCreationTokens, t.CacheReadTokens, len(d.Daily))
}

// dirBytes sums the *.jsonl bytes under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// timed runs argv with env added, and returns its stdout and wall time;
// exit status 1 (damaged files in the home) counts as success.
func timed(env []string, argv []string) ([]byte, time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && out.Len() > 0 {
		err = nil
	}
	if err != nil {
		return nil, wall, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), wall, nil
}

// reportRun: cache-dir root bin args… — runs sessions-etl with its cache in
// cache-dir and prints the daily totals and the throughput over root.
func reportRun(args []string) error {
	cache, root, argv := args[0], args[1], args[2:]
	out, wall, err := timed([]string{"XDG_CACHE_HOME=" + cache}, argv)
	if err != nil {
		return err
	}
	var d dailyJSON
	if err := json.Unmarshal(out, &d); err != nil {
		return fmt.Errorf("report output: %w", err)
	}
	fmt.Println(d.summary() + throughput(root, wall))
	return nil
}

// throughput is the command's own wall time (without the wrapper's start-up)
// and MB/s over the bytes under root.
func throughput(root string, wall time.Duration) string {
	mb := float64(dirBytes(root)) / 1e6
	return fmt.Sprintf("; alone %.2fs, %.0f MB at %.0f MB/s", wall.Seconds(), mb, mb/wall.Seconds())
}

// ccusageRun: root bin args… — runs ccusage and prints its daily totals.
func ccusageRun(args []string) error {
	root, argv := args[0], args[1:]
	out, wall, err := timed(nil, argv)
	if err != nil {
		return err
	}
	var d dailyJSON
	if err := json.Unmarshal(out, &d); err != nil {
		return fmt.Errorf("ccusage output: %w", err)
	}
	fmt.Println(d.summary() + throughput(root, wall))
	return nil
}

// usageJSON is the part of a usage report the check reads.
type usageJSON struct {
	Totals struct {
		InputTokens         int64    `json:"inputTokens"`
		OutputTokens        int64    `json:"outputTokens"`
		CacheCreationTokens int64    `json:"cacheCreationTokens"`
		CacheReadTokens     int64    `json:"cacheReadTokens"`
		TotalTokens         int64    `json:"totalTokens"`
		TotalCost           *float64 `json:"totalCost"`
		Records             int64    `json:"records"`
		UnpricedRecords     int64    `json:"unpricedRecords"`
		UnpricedTokens      int64    `json:"unpricedTokens"`
	} `json:"totals"`
	Daily []struct {
		Date                *string `json:"date"`
		InputTokens         int64   `json:"inputTokens"`
		OutputTokens        int64   `json:"outputTokens"`
		CacheCreationTokens int64   `json:"cacheCreationTokens"`
		CacheReadTokens     int64   `json:"cacheReadTokens"`
		TotalTokens         int64   `json:"totalTokens"`
		Records             int64   `json:"records"`
	} `json:"daily"`
}

// checkReport: bin home work — every report's totals against the manifest.
func checkReport(args []string) error {
	bin, home, work := args[0], args[1], args[2]
	m, err := synth.LoadManifest(filepath.Join(home, "manifest.json"))
	if err != nil {
		return err
	}
	linked := home
	// Expected cost: recorded costs plus the uncosted tokens of priced
	// models at base rates (no record reaches a long-context tier).
	want := synth.Tokens{}
	var wantCost float64
	var wantUnpriced int64
	for key, mu := range m.Usage.ByModel {
		want.Records += mu.Records
		want.Input += mu.Input
		want.Output += mu.Output
		want.CacheRead += mu.CacheRead
		want.CacheWrite += mu.CacheWrite
		want.TotalTokens += mu.TotalTokens
		wantCost += mu.CostRecorded
		prov, model, _ := strings.Cut(key, "/")
		un := mu.Uncosted
		if p, ok := pricing.Default().Lookup(prov, model); ok && key != "unknown/unknown" {
			r := p.Rates
			wantCost += (float64(un.Input)*r.Input + float64(un.Output)*r.Output + float64(un.CacheRead)*r.CacheRead +
				float64(un.CacheWrite)*r.CacheWrite) / 1e6
		} else {
			wantUnpriced += un.Records
		}
	}
	env := []string{"XDG_CACHE_HOME=" + filepath.Join(work, "cache")}
	var bad []string
	checks := 0
	for _, kind := range []string{"daily", "weekly", "monthly", "session", "project", "model", "provider"} {
		out, _, err := timed(env, []string{bin, "report", kind, "--json", "--quiet", "--tz", "UTC", linked})
		if err != nil {
			return err
		}
		var r usageJSON
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("report %s: %w", kind, err)
		}
		t := r.Totals
		got := synth.Tokens{Records: t.Records, Input: t.InputTokens, Output: t.OutputTokens, CacheRead: t.CacheReadTokens,
			CacheWrite: t.CacheCreationTokens, TotalTokens: t.TotalTokens}
		checks++
		if got != want {
			bad = append(bad, fmt.Sprintf("%s: tokens %+v, manifest %+v", kind, got, want))
		}
		if t.TotalCost == nil || math.Abs(*t.TotalCost-wantCost) > 1e-9*wantCost {
			bad = append(bad, fmt.Sprintf("%s: cost %v, manifest %.9f", kind, t.TotalCost, wantCost))
		}
		if t.UnpricedRecords != wantUnpriced {
			bad = append(bad, fmt.Sprintf("%s: %d unpriced records, manifest %d", kind, t.UnpricedRecords, wantUnpriced))
		}
	}
	for _, zone := range synth.DailyZones {
		out, _, err := timed(env, []string{bin, "report", "daily", "--json", "--quiet", "--tz", zone, linked})
		if err != nil {
			return err
		}
		var r usageJSON
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("report daily --tz %s: %w", zone, err)
		}
		days := map[string]synth.Tokens{}
		for _, d := range r.Daily {
			key := "(no timestamp)"
			if d.Date != nil {
				key = *d.Date
			}
			days[key] = synth.Tokens{Records: d.Records, Input: d.InputTokens, Output: d.OutputTokens, CacheRead: d.CacheReadTokens,
				CacheWrite: d.CacheCreationTokens, TotalTokens: d.TotalTokens}
		}
		var keys []string
		for k := range days {
			keys = append(keys, k)
		}
		for k := range m.Usage.Daily[zone] {
			if _, ok := days[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			checks++
			var w synth.Tokens
			if p := m.Usage.Daily[zone][k]; p != nil {
				w = *p
			}
			if days[k] != w {
				bad = append(bad, fmt.Sprintf("%s %s: %+v, manifest %+v", zone, k, days[k], w))
			}
		}
	}
	fmt.Printf("report agrees with the manifest on %d of %d totals and days (records=%d cost=$%.6f, %d unpriced records)\n",
		checks-len(bad), checks, want.Records, wantCost, wantUnpriced)
	if len(bad) > 0 {
		return fmt.Errorf("%d disagreements, first: %s", len(bad), bad[0])
	}
	return nil
}
