package main

// Flag parsing through the runF seam (cli/cli): each command built with a
// runF that records the options it is given, so the flags, the arguments
// and the configuration file's defaults are checked without running
// anything; the options are then turned into what the packages take
// (report.Options, report.BlockOptions) where that is the CLI's work.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/internal/config"
	"github.com/sessions-etl/sessions-etl/report"
)

// parseFlags runs args through a root holding the commands mk builds (the
// global flags included), as runWith does, and returns the error.
func parseCmdFlags(ios *IO, mk func(*IO, *globalOptions) *cobra.Command, args ...string) error {
	started := false
	root := newRootCmdOf(ios, &started, mk)
	root.SetArgs(args)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	return root.ExecuteContext(context.Background())
}

// capture is a runF that keeps the options it was given.
func captureOpts[O any](got **O) runFunc[O] {
	return func(_ context.Context, opts *O, _ *IO) error {
		*got = opts
		return nil
	}
}

func isUsageErr(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// flagsNow is a Sunday: its ISO week began on Monday 2026-11-23.
var flagsNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestReportFlagsFillOptions(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	path := runCase(t, c20Case)
	day := func(tm time.Time) string {
		if tm.IsZero() {
			return ""
		}
		return tm.Format(time.DateOnly)
	}
	for _, c := range []struct {
		now         time.Time
		args        []string
		kind        report.Kind
		since, till string // report.Options' days, worked out by hand
		order       string
		check       func(t *testing.T, o *reportOptions)
	}{
		{flagsNow, []string{"report", "daily", "--last", "7d", "--tz", "UTC"}, report.Daily, "2026-11-23", "", "", nil},
		{flagsNow, []string{"report", "weekly", "--last", "2", "--tz", "UTC", "--order", "desc", "--color", "never", "--compact", path},
			report.Weekly, "2026-11-16", "", "desc", func(t *testing.T, o *reportOptions) {
				if o.Color != "never" || !o.Compact || len(o.Paths) != 1 || o.Paths[0] != path || o.Last != "2" {
					t.Errorf("options %+v", o)
				}
			}},
		{flagsNow, []string{"report", "monthly", "--last", "3", "--tz", "UTC"}, report.Monthly, "2026-09-01", "", "", nil},
		{flagsNow, []string{"report", "session", "--since", "20261101", "--until", "2026-11-15", "--order", "asc"}, report.Session, "2026-11-01", "2026-11-15", "asc", nil},
		// 20:00 UTC is 05:00 the next day in Tokyo: the last day is Tokyo's.
		{time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC), []string{"report", "daily", "--last", "1d", "--tz", "Asia/Tokyo"}, report.Daily, "2026-11-30", "", "", nil},
		{flagsNow, []string{"report", "tools", "--budget-daily", "20", "--budget-project", "web:daily=5,monthly=80", "--strict", "-v"}, report.Tools, "", "", "",
			func(t *testing.T, o *reportOptions) {
				if o.budget.Daily != 20 || o.budget.Projects["web"].Daily != 5 || o.budget.Projects["web"].Monthly != 80 || !o.Strict || !o.Verbose {
					t.Errorf("budgets %+v strict %v verbose %v", o.budget, o.Strict, o.Verbose)
				}
			}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			ios, _, errOut := runTestIO(t, c.now)
			var got *reportOptions
			err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newReportCmd(ios, g, captureOpts(&got)) }, c.args...)
			if err != nil || got == nil {
				t.Fatalf("%v (run called: %v)\n%s", err, got != nil, errOut)
			}
			if got.Kind != c.kind {
				t.Errorf("kind %q, want %q", got.Kind, c.kind)
			}
			ro, err := reportRunOptions(ios, got, got.Kind)
			if err != nil {
				t.Fatal(err)
			}
			if day(ro.Since) != c.since || day(ro.Until) != c.till || ro.Order != c.order {
				t.Errorf("since %q until %q order %q, want %q %q %q", day(ro.Since), day(ro.Until), ro.Order, c.since, c.till, c.order)
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}

	// Flags that parse but exclude each other, or values out of range:
	// usage errors from the options, before anything is read.
	for _, args := range [][]string{
		{"report", "daily", "--since", "2026-11-01", "--last", "7d"},
		{"report", "daily", "--order", "sideways"},
		{"report", "daily", "--color", "sometimes"},
		{"report", "daily", "--since", "2026-11-02", "--until", "2026-11-01"},
		{"report", "daily", "--json", "--csv"},
		{"report", "daily", "--last", "0"},
		{"report", "daily", "--tz", "Not/AZone"},
		{"report", "daily", "--from", "r", "--db", "x.duckdb"},
	} {
		ios, _, _ := runTestIO(t, flagsNow)
		var got *reportOptions
		if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newReportCmd(ios, g, captureOpts(&got)) }, args...); err != nil {
			t.Errorf("%v: parse: %v", args, err)
			continue
		}
		if _, err := reportRunOptions(ios, got, got.Kind); !isUsageErr(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}

	// A flag with no value or a report that does not exist: run is not called.
	for _, args := range [][]string{{"report", "daily", "--order"}, {"report", "dialy"}, {"report", "daily", "--budget-daily", "-3"}} {
		ios, _, _ := runTestIO(t, flagsNow)
		var got *reportOptions
		err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newReportCmd(ios, g, captureOpts(&got)) }, args...)
		if !isUsageErr(err) || got != nil {
			t.Errorf("%v: %v (run called: %v), want a usage error", args, err, got != nil)
		}
	}
}

// TestConfigDefaultsOnlyForFlagsNotGiven: the configuration file's tz and
// cost fill the flags the command line left out, never one it gave.
func TestConfigDefaultsOnlyForFlagsNotGiven(t *testing.T) {
	for _, c := range []struct {
		args           []string
		wantTZ, wantCo string
	}{
		{[]string{"report", "daily"}, "Asia/Tokyo", "calculate"},
		{[]string{"report", "daily", "--tz", "UTC", "--cost", "recorded"}, "UTC", "recorded"},
		{[]string{"report", "daily", "--cost", "auto"}, "Asia/Tokyo", "auto"},
	} {
		ios, _, _ := runTestIO(t, flagsNow)
		ios.Config = &config.Config{Defaults: config.Defaults{TZ: "Asia/Tokyo", Cost: "calculate"}}
		var got *reportOptions
		if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newReportCmd(ios, g, captureOpts(&got)) }, c.args...); err != nil {
			t.Fatal(err)
		}
		if got.TZ != c.wantTZ || got.Cost != c.wantCo {
			t.Errorf("%v: tz %q cost %q, want %q %q", c.args, got.TZ, got.Cost, c.wantTZ, c.wantCo)
		}
	}
	for _, c := range []struct {
		args   []string
		wantCo string
	}{
		{[]string{"export", "--duckdb", "x.duckdb"}, "calculate"},
		{[]string{"export", "--duckdb", "x.duckdb", "--cost", "recorded"}, "recorded"},
	} {
		ios, _, _ := runTestIO(t, flagsNow)
		ios.Config = &config.Config{Defaults: config.Defaults{Cost: "calculate"}}
		var got *exportOptions
		if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newExportCmd(ios, g, captureOpts(&got)) }, c.args...); err != nil {
			t.Fatal(err)
		}
		if got.Cost != c.wantCo {
			t.Errorf("%v: cost %q, want %q", c.args, got.Cost, c.wantCo)
		}
	}
}

func TestExportFlagsFillOptions(t *testing.T) {
	host, hostErr := os.Hostname()
	noHost := hostErr != nil || host == ""
	mk := func(got **exportOptions) func(*IO, *globalOptions) *cobra.Command {
		return func(ios *IO, g *globalOptions) *cobra.Command { return newExportCmd(ios, g, captureOpts(got)) }
	}
	ios, _, _ := runTestIO(t, flagsNow)
	var got *exportOptions
	if err := parseCmdFlags(ios, mk(&got), "export", "--parquet", "root", "--partition-by", "month", "--machine", "m1",
		"--work-dir", "w", "--private", "--no-content", "--workers", "3", "p1", "p2"); err != nil {
		t.Fatal(err)
	}
	if got.Parquet != "root" || got.Partition != "month" || got.Machine != "m1" || got.WorkDir != "w" || !got.Private || !got.NoContent ||
		got.Workers != 3 || strings.Join(got.Paths, " ") != "p1 p2" || got.Cost != "auto" {
		t.Errorf("options %+v (global %+v)", got, got.globalOptions)
	}

	// No --machine: the host name; without one, a usage error that asks
	// for --machine.
	got = nil
	err := parseCmdFlags(ios, mk(&got), "export", "--duckdb", "x.duckdb", "--with-raw")
	if noHost {
		if err == nil || !strings.Contains(err.Error(), "--machine NAME") {
			t.Errorf("no host name: err = %v, want a usage error asking for --machine NAME", err)
		}
	} else if err != nil {
		t.Fatal(err)
	} else if got.Machine != host || got.DuckDB != "x.duckdb" || !got.WithRaw || got.Partition != "" {
		t.Errorf("options %+v, want machine %q", got, host)
	}

	// Usage errors: run is not called.
	for _, args := range [][]string{
		{"export"},
		{"export", "--duckdb", "x.duckdb", "--partition-by", "day"},
		{"export", "--parquet", "root", "--partition-by", "weekly"},
		{"export", "--parquet", "root", "--partition-by", "source", "--machine", "a/b"},
		{"export", "--duckdb", "x.duckdb", "--cost", "cheap"},
	} {
		got = nil
		if err := parseCmdFlags(ios, mk(&got), args...); !isUsageErr(err) || got != nil {
			t.Errorf("%v: %v (run called: %v), want a usage error", args, err, got != nil)
		}
	}
}

func TestQueryFlagsFillOptions(t *testing.T) {
	mk := func(got **queryOptions) func(*IO, *globalOptions) *cobra.Command {
		return func(ios *IO, g *globalOptions) *cobra.Command { return newQueryCmd(ios, g, captureOpts(got)) }
	}
	ios, _, _ := runTestIO(t, flagsNow)
	var got *queryOptions
	if err := parseCmdFlags(ios, mk(&got), "query", "--csv", "SELECT 1", "a", "b"); err != nil {
		t.Fatal(err)
	}
	if got.SQL != "SELECT 1" || strings.Join(got.Paths, " ") != "a b" || !got.CSV || got.DuckDB != "" {
		t.Errorf("options %+v", got)
	}
	got = nil
	if err := parseCmdFlags(ios, mk(&got), "query", "--from", "r1", "--from", "r2", "--json", "SELECT 2"); err != nil {
		t.Fatal(err)
	}
	if got.SQL != "SELECT 2" || strings.Join(got.From, " ") != "r1 r2" || !got.JSON || len(got.Paths) != 0 {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{
		{"query"},
		{"query", "  "},
		{"query", "--csv", "--json", "SELECT 1"},
		{"query", "--duckdb", "x.duckdb", "SELECT 1", "p"},
		{"query", "--from", "r", "--duckdb", "x.duckdb", "SELECT 1"},
		{"query", "--from", "r", "SELECT 1", "p"},
	} {
		got = nil
		if err := parseCmdFlags(ios, mk(&got), args...); !isUsageErr(err) || got != nil {
			t.Errorf("%v: %v (run called: %v), want a usage error", args, err, got != nil)
		}
	}
}

func TestMigrateImportFlagsFillOptions(t *testing.T) {
	ios, _, _ := runTestIO(t, flagsNow)
	var mo *migrateOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newMigrateCmd(ios, g, captureOpts(&mo)) },
		"migrate", "--undo", "20261202T101500Z-1a2b", "--lock-wait", "30s", "--backup-dir", "b"); err != nil {
		t.Fatal(err)
	}
	if mo.Undo != "20261202T101500Z-1a2b" || mo.LockWait != 30*time.Second || mo.BackupDir != "b" || len(mo.Paths) != 0 {
		t.Errorf("options %+v", mo)
	}
	mo = nil
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newMigrateCmd(ios, g, captureOpts(&mo)) },
		"migrate", "--dry-run", "--relayout", "--repair", "--no-backup", "--keep-unresolved-parent", "-v", "--source", "pi", "p"); err != nil {
		t.Fatal(err)
	}
	if !mo.DryRun || !mo.Relayout || !mo.Repair || !mo.NoBackup || !mo.KeepUnresolvedParent || !mo.Verbose || mo.Source != "pi" || strings.Join(mo.Paths, " ") != "p" {
		t.Errorf("options %+v", mo)
	}

	var im *importOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newImportCmd(ios, g, captureOpts(&im)) },
		"import", "--to", "store", "--flat", "--dry-run", "--lock-wait", "1m", "s1", "s2"); err != nil {
		t.Fatal(err)
	}
	if im.To != "store" || !im.Flat || !im.DryRun || im.LockWait != time.Minute || strings.Join(im.Sources, " ") != "s1 s2" {
		t.Errorf("options %+v", im)
	}
}

func TestReaderFlagsFillOptions(t *testing.T) {
	ios, out, _ := runTestIO(t, flagsNow)

	// report blocks: its own flags, turned into report.BlockOptions.
	blocks := func(got **blocksOptions) func(*IO, *globalOptions) *cobra.Command {
		return func(ios *IO, g *globalOptions) *cobra.Command {
			return newBlocksCmd(ios, &reportOptions{globalOptions: g}, captureOpts(got))
		}
	}
	for _, c := range []struct {
		args  []string
		limit int64
		max   bool
		ok    bool
	}{
		{[]string{"blocks", "--token-limit", "1_000_000", "--active"}, 1000000, false, true},
		{[]string{"blocks", "--token-limit", "MAX", "--recent", "--no-gaps"}, 0, true, true},
		{[]string{"blocks", "--token-limit", "-5"}, 0, false, false},
		{[]string{"blocks", "--active", "--recent"}, 0, false, false},
	} {
		var bo *blocksOptions
		if err := parseCmdFlags(ios, blocks(&bo), c.args...); err != nil {
			t.Fatal(err)
		}
		bro, err := bo.blockOptions(flagsNow)
		if c.ok != (err == nil) || (err != nil && !isUsageErr(err)) {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if c.ok && (bro.TokenLimit != c.limit || bro.TokenLimitMax != c.max || !bro.Now.Equal(flagsNow) ||
			bro.Active != bo.Active || bro.Recent != bo.Recent || bro.NoGaps != bo.NoGaps) {
			t.Errorf("%v: %+v", c.args, bro)
		}
	}

	var bu *budgetOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newBudgetCmd(ios, g, captureOpts(&bu)) },
		"budget", "check", "--daily", "20", "--weekly", "100", "--project-budget", "web:daily=5,monthly=80", "--tz", "UTC", "--json", "p"); err != nil {
		t.Fatal(err)
	}
	if bu.budget.Daily != 20 || bu.budget.Weekly != 100 || bu.budget.Projects["web"].Daily != 5 || bu.budget.Projects["web"].Monthly != 80 ||
		bu.TZ != "UTC" || !bu.JSON || strings.Join(bu.Paths, " ") != "p" {
		t.Errorf("budget options %+v", bu)
	}

	var da *dashboardOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newDashboardCmd(ios, g, captureOpts(&da)) },
		"dashboard", "-o", "x.html", "--top", "3", "--since", "2026-11-01", "--from", "r"); err != nil {
		t.Fatal(err)
	}
	if da.Out != "x.html" || da.Top != 3 || da.Since != "2026-11-01" || strings.Join(da.From, " ") != "r" {
		t.Errorf("dashboard options %+v", da)
	}

	var st *statuslineOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newStatuslineCmd(ios, g, captureOpts(&st)) },
		"statusline", "--session", "s1", "--transcript", "f.jsonl", "--no-stdin", "--lock-wait", "5s"); err != nil {
		t.Fatal(err)
	}
	if st.Session != "s1" || st.Transcript != "f.jsonl" || !st.NoStdin || st.Timeout != 5*time.Second {
		t.Errorf("statusline options %+v", st)
	}
	// A bad flag: the one-line marker on stdout, no error, run not called.
	st = nil
	out.Reset()
	err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newStatuslineCmd(ios, g, captureOpts(&st)) }, "statusline", "--nope")
	if err != nil || st != nil || !strings.HasPrefix(out.String(), "sessions-etl: ⚠") {
		t.Errorf("bad flag: %v (run called: %v) %q", err, st != nil, out)
	}
}

func TestOtherFlagsFillOptions(t *testing.T) {
	ios, _, _ := runTestIO(t, flagsNow)
	var sy *synthOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newSynthCmd(ios, g, captureOpts(&sy)) },
		"synth", "--out", "d", "--sessions", "7", "--seed", "9", "--size", "1GB", "--profile", "many-tiny", "--machines", "2", "--subagents", "-q"); err != nil {
		t.Fatal(err)
	}
	if sy.Out != "d" || sy.Sessions != 7 || sy.Seed != 9 || sy.Size != "1GB" || sy.Profile != "many-tiny" || sy.Machines != 2 || !sy.Subagents || !sy.Quiet {
		t.Errorf("synth options %+v", sy)
	}

	var va *validateOptions
	if err := parseCmdFlags(ios, func(ios *IO, g *globalOptions) *cobra.Command { return newValidateCmd(ios, g, captureOpts(&va)) },
		"validate", "--problems", "5", "--source", "pi", "--json", "p1", filepath.Join("p", "2")); err != nil {
		t.Fatal(err)
	}
	if va.MaxProblems != 5 || va.Source != "pi" || !va.JSON || strings.Join(va.Paths, " ") != "p1 "+filepath.Join("p", "2") {
		t.Errorf("validate options %+v", va)
	}

	var g *globalOptions
	if err := parseCmdFlags(ios, func(ios *IO, gl *globalOptions) *cobra.Command { return newSourcesCmd(ios, gl, captureOpts(&g)) }, "sources", "--json"); err != nil {
		t.Fatal(err)
	}
	if !g.JSON {
		t.Errorf("sources options %+v", g)
	}
	// --workers 0 is refused for every command before its run.
	g = nil
	if err := parseCmdFlags(ios, func(ios *IO, gl *globalOptions) *cobra.Command { return newSourcesCmd(ios, gl, captureOpts(&g)) }, "sources", "--workers", "0"); !isUsageErr(err) || g != nil {
		t.Errorf("--workers 0: %v (run called: %v)", err, g != nil)
	}
}
