package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/report"
)

func init() { registerCommand(newReportCmd) }

type reportOptions struct {
	*globalOptions
	Kind      report.Kind // the report (report's subcommand)
	Paths     []string    // PATH arguments; none: the stores
	DB        string
	From      []string
	NoRefresh bool
	Since     string
	Until     string
	TZ        string
	Source    string
	Project   string
	Model     string
	Breakdown bool
	CSV       bool
	MD        bool
	Cost      string
	Pricing   string
	budget    budgetFlags // --budget-daily, … (cmd_budget.go)
	Strict    bool
	Verbose   bool // the files behind each problem line (text output)
	Last      string
	Order     string
	Compact   bool
	Color     string
}

var reportShort = map[report.Kind]string{
	report.Daily:    "Usage and cost per day",
	report.Weekly:   "Usage and cost per ISO week (Monday to Sunday)",
	report.Monthly:  "Usage and cost per month",
	report.Session:  "Usage and cost per session",
	report.Project:  "Usage and cost per project (last element of the session's cwd)",
	report.Model:    "Usage and cost per provider and model",
	report.Provider: "Usage and cost per provider",
	report.Tools:    "Tool calls per tool name: results, error rate, output bytes",
}

var reportJSONNote = map[report.Kind]string{
	report.Daily:    `--json: {"daily": [{"date": "YYYY-MM-DD", inputTokens, …, totalCost, modelsUsed, modelBreakdowns}], "totals", "unpriced", "report"} (ccusage's daily shape).`,
	report.Weekly:   `--json: {"weekly": [{"period": the Monday, "week": "YYYY-Www", …}], "totals", …} (ccusage's weekly shape).`,
	report.Monthly:  `--json: {"monthly": [{"month": "YYYY-MM", …}], "totals", …} (ccusage's monthly shape).`,
	report.Session:  `--json: {"sessions": [{"sessionId", …, "firstActivity", "lastActivity", "projectPath", "project", "source", "name", "parentSessionId"}], "totals", …} (ccusage's session shape).`,
	report.Project:  `--json: {"projects": [{"project", "sessions", inputTokens, …}], "totals", …}.`,
	report.Model:    `--json: {"models": [{"provider", "modelName", inputTokens, …}], "totals", …}.`,
	report.Provider: `--json: {"providers": [{"provider", inputTokens, …, modelBreakdowns}], "totals", …}.`,
	report.Tools: `A call is a toolCall block of an assistant message; its result is the toolResult with the same
tool call id in the same file. Calls copied into forks are counted once.
--json: {"tools": [{"toolName", "calls", "results", "errors", "errorRate", "outputBytes", "modelBreakdowns"}], "totals"}.`,
}

const reportLong = `report answers "what did my agents cost, per day, week, month, session, project,
model, provider" and "which tools did they call".

It needs no set-up: the session files (the default roots, or the PATHs given)
are first ingested incrementally into a DuckDB database in the user's cache
directory (--db to choose another); unchanged files are not read again, so a
second report answers at once. The default roots use sessions.duckdb there;
reports over PATHs use a database of their own (sessions-<hash>.duckdb, one
per set of PATHs), so they never disturb each other, and say on stderr which
one and how to query it (not under --quiet or --json). These databases keep
only what the reports read (files, sessions, usage, ingest_issues and the
tool call blocks, in tool_uses, filled from the first tools report on; no
entries or content_blocks), with every view. 'sessions-etl query 'SQL' [PATH...]' queries the database of the same
PATHs; 'sessions-etl export --duckdb FILE' writes every table.

Usage copied into forks, backups or the same session under two roots is
counted once, in the session where it first appeared. Every billed record
counts: assistant messages, tool results, compaction and branch summaries,
session summaries and Prime's child usage, on abandoned branches too.

Days, ISO weeks and months are taken from each record's instant in --tz
(an IANA name such as Europe/Paris; default: the local zone, honouring TZ);
--since and --until are inclusive days in that zone (YYYY-MM-DD or
YYYYMMDD). A TZ that cannot be loaded (a POSIX rule such as
EST5EDT,M3.2.0,M11.1.0, an unknown name) is a usage error rather than UTC
in disguise: give --tz Area/City. The JSON report.timezone is the zone's
IANA name (null when the local zone's name is unknown).

Cost: --cost auto (default) uses the recorded cost when present and non-zero
for non-zero tokens, else the price table; recorded and calculate use only
one. --pricing FILE replaces the bundled price table. Usage with no cost is
"unpriced": its tokens count, it is listed by model under every report, it
is never shown as $0, and totals that include it say so ("+ unpriced"; in
JSON "costIncomplete": true; totalCost is always a number, the cost of
the priced records).

Filters: --source LABEL (pi, atomic, prime, omp, openclaw, kimchi, custom,
or a config store's name); --project NAME (the project name or
the full cwd, exact); --model TEXT (case-insensitive substring of the model
or provider/model: "sonnet", "openai/").

Output: an aligned table with a totals row; --md a Markdown table; --csv one
line per row (per row and model with --breakdown); --json one indented JSON
document (not JSON Lines, unlike --json of validate, export and query) in
the shape of ccusage's JSON (daily / weekly / monthly / sessions arrays with
inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
totalTokens, totalCost, modelsUsed, modelBreakdowns, and totals) plus our
fields ("report", "unpriced", record counts). --breakdown adds a line per
model under each row.

Damaged files: a report is a reader. It uses every complete record of a
damaged file (torn, corrupt) and leaves out the files it cannot use (not a
session, an unknown version, unreadable); stderr then gets one line per kind
of problem, under --quiet and --json too, e.g.
  2 files not used (1 future_version, 1 not_session) — see: sessions-etl validate
  3 damaged files used in part (1 torn, 2 corrupt) — see: sessions-etl validate
With --verbose, in text output, each line is followed by its first five files,
relative to the PATH they were found under (or ~), with status, error codes and lines;
--json lists them all under "files": "rejected" and "salvaged" (full path,
status, error codes, lines).

Exit status: 0 when the report was printed, whatever the state of the
files (1 with --strict when some files were not used or used only in part);
1 when the report failed; 2 on usage errors.`

func newReportCmd(ios *IO, g *globalOptions, runF runFunc[reportOptions]) *cobra.Command {
	opts := &reportOptions{globalOptions: g}
	run := orDefault(runF, runReport)
	cmd := &cobra.Command{
		Use:   "report daily|weekly|monthly|session|project|model|provider|tools|blocks [PATH...]",
		Short: "Usage and cost reports: forks counted once, every billed kind, real prices",
		Long:  reportLong,
		Args:  reportKindArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("report needs a kind: daily, weekly, monthly, session, project, model, provider or tools")
		},
	}
	addReportFlags(cmd.PersistentFlags(), opts)
	for _, kind := range report.Kinds {
		cmd.AddCommand(newReportKindCmd(ios, opts, kind, run))
	}
	for _, mk := range reportSubcommands {
		cmd.AddCommand(mk(ios, opts))
	}
	return cmd
}

// reportKindArg refuses `report KIND` with a KIND that is not a
// subcommand, suggesting the nearest.
func reportKindArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown report %q (want daily, weekly, monthly, session, project, model, provider or tools)", args[0])
	if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
		msg += "; did you mean " + strings.Join(sug, " or ") + "?"
	}
	return usagef("%s", msg)
}

// addReportFlags defines report's flags (persistent: every kind has them).
func addReportFlags(f *pflag.FlagSet, opts *reportOptions) {
	// report's --json is one document, not the JSON Lines of the global
	// flag: the same option, described for report.
	f.BoolVar(&opts.JSON, "json", false, "one JSON document on stdout, in ccusage's shape (not JSON Lines)")
	f.StringVar(&opts.DB, "db", "", "DuckDB database to refresh and report from (default: one in the user's cache directory)")
	f.BoolVar(&opts.NoRefresh, "no-refresh", false, "report on the database as it is, without reading the session files")
	f.StringArrayVar(&opts.From, "from", nil, "answer from this partitioned Parquet root (export --partition-by; repeatable) instead of session files, each record counted once across machines (what is read is kept in the cache directory until a Parquet file of the roots changes)")
	f.StringVar(&opts.Since, "since", "", "first day, inclusive, in --tz (YYYY-MM-DD, YYYYMMDD, or 7d, 2w, 3m ago)")
	f.StringVar(&opts.Last, "last", "", "the last N days, weeks or months up to today (7d, 2w, 3m; a bare N counts the report's periods)")
	f.StringVar(&opts.Order, "order", "", "asc or desc: rows by time (time reports, sessions; default asc) or by cost (others; default desc)")
	f.BoolVar(&opts.Compact, "compact", false, "a narrower table, at most 80 columns (key, models, input, output, total, cost)")
	f.StringVar(&opts.Color, "color", "auto", "colour the table and warnings: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces), always or never")
	f.StringVar(&opts.Until, "until", "", "last day, inclusive, in --tz (YYYY-MM-DD or YYYYMMDD)")
	f.StringVar(&opts.TZ, "tz", "", "IANA time zone for days, weeks and months (default: local, honouring TZ)")
	f.StringVar(&opts.Source, "source", "", "only usage from files of this source label: pi, atomic, prime, omp, openclaw, kimchi, custom, or a config store's name")
	f.StringVar(&opts.Project, "project", "", "only this project (name or full cwd)")
	f.StringVar(&opts.Model, "model", "", "only models whose id or provider/id contains this (case-insensitive)")
	f.BoolVar(&opts.Breakdown, "breakdown", false, "a line per model under each row")
	f.BoolVar(&opts.CSV, "csv", false, "CSV output")
	f.BoolVar(&opts.MD, "md", false, "Markdown table output")
	f.StringVar(&opts.Cost, "cost", "auto", "auto, recorded or calculate")
	f.BoolVar(&opts.Strict, "strict", false, "exit 1 when some files were not used or used only in part")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "after each problem line on stderr, name its first files (relative to the PATH or ~) with status, codes and lines")
	f.StringVar(&opts.Pricing, "pricing", "", "price table file replacing the bundled one (JSON: source, retrieved, models with USD per million tokens)")
	addBudgetFlags(f, &opts.budget, "budget-")
}

// newReportKindCmd is `report KIND`: the flags of report, the config
// file's defaults for those not given, then run.
func newReportKindCmd(ios *IO, opts *reportOptions, kind report.Kind, run runFunc[reportOptions]) *cobra.Command {
	return &cobra.Command{
		Use:   string(kind) + " [PATH...]",
		Short: reportShort[kind],
		Long: reportShort[kind] + ".\n\n" + reportJSONNote[kind] +
			"\n\nSee 'sessions-etl report --help' for what is counted, time zones, costs and filters.",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Kind, opts.Paths = kind, args
			configDefaults(cmd.Flags().Changed, ios, &opts.TZ, &opts.Cost, &opts.Pricing)
			configBudgets(ios, &opts.budget.Budgets)
			return run(cmd.Context(), opts, ios)
		},
	}
}

// reportRunOptions checks the flags and turns them into report.Options
// for a report of kind over opts.Paths.
func reportRunOptions(ios *IO, opts *reportOptions, kind report.Kind) (report.Options, error) {
	ro := report.Options{Kind: kind, Workers: opts.Workers, NoRefresh: opts.NoRefresh, Source: opts.Source,
		Project: opts.Project, Model: opts.Model}
	n := 0
	for _, b := range []bool{opts.JSON, opts.CSV, opts.MD} {
		if b {
			n++
		}
	}
	if n > 1 {
		return ro, usagef("--json, --csv and --md exclude each other")
	}
	mode, err := export.ParseCostMode(opts.Cost)
	if err != nil {
		return ro, usageError{err}
	}
	ro.CostMode = mode
	if ro.Zone, err = report.ResolveZone(opts.TZ); err != nil {
		return ro, usageError{err}
	}
	if err := reportPeriod(ios, opts, &ro); err != nil {
		return ro, err
	}
	if err := validSource(ios, opts.Source); err != nil {
		return ro, err
	}
	for _, s := range stores(ios) {
		if !slices.Contains(ingest.Labels, s.Label) {
			ro.Labels = append(ro.Labels, s.Label)
		}
	}
	if opts.Pricing != "" {
		// As `export --pricing` names it.
		if ro.Prices, ro.PricingID, err = loadPricing(opts.Pricing); err != nil {
			return ro, err
		}
	}
	return ro, reportDatabase(ios, opts, &ro)
}

// reportPeriod sets ro's first and last days from --since, --last and
// --until (in ro's zone, at ios.Now), and its order; it also checks
// --order and --color.
func reportPeriod(ios *IO, opts *reportOptions, ro *report.Options) error {
	loc := ro.Zone.Location
	if loc == nil {
		loc = time.UTC
	}
	now := time.Now()
	if ios.Now != nil {
		now = ios.Now()
	}
	if opts.Since != "" && opts.Last != "" {
		return usagef("--since and --last exclude each other")
	}
	var err error
	if opts.Since != "" {
		if ro.Since, err = report.ParseSince(opts.Since, now, loc); err != nil {
			return usagef("--since: %v", err)
		}
	}
	if opts.Last != "" {
		if ro.Since, err = report.ParseLast(opts.Last, ro.Kind, now, loc); err != nil {
			return usagef("--last: %v", err)
		}
	}
	if opts.Until != "" {
		if ro.Until, err = report.ParseDate(opts.Until); err != nil {
			return usagef("--until: %v", err)
		}
	}
	if opts.Order != "" && opts.Order != "asc" && opts.Order != "desc" {
		return usagef("--order %q: want asc or desc", opts.Order)
	}
	ro.Order = opts.Order
	if _, err := useColor(opts.Color, os.Getenv, false); err != nil {
		return err
	}
	if !ro.Since.IsZero() && !ro.Until.IsZero() && ro.Until.Before(ro.Since) {
		return usagef("--until %s is before --since %s", opts.Until, ro.Since.Format(time.DateOnly))
	}
	return nil
}

// reportDatabase sets where ro's answer comes from: the --from roots, or
// the PATHs (or default roots) ingested into --db or the managed
// database of those roots.
func reportDatabase(ios *IO, opts *reportOptions, ro *report.Options) error {
	args := opts.Paths
	if len(opts.From) > 0 {
		if len(args) > 0 || opts.DB != "" {
			return usagef("--from excludes PATH arguments and --db")
		}
		ro.From, ro.DBPath = opts.From, opts.From[0]
		return nil
	}
	var err error
	if ro.Roots, err = roots(ios, args); err != nil {
		return err
	}
	ro.DBPath = opts.DB
	if ro.DBPath == "" {
		ro.Managed = true
		if ro.DBPath, err = report.DBPath(ro.Roots, len(args) == 0); err != nil {
			return err
		}
	}
	return nil
}

// runReport is `report KIND`'s run: the report of opts.Kind on stdout,
// then, on stderr, what the reader says about the files.
func runReport(ctx context.Context, opts *reportOptions, ios *IO) error {
	ro, err := reportRunOptions(ios, opts, opts.Kind)
	if err != nil {
		return err
	}
	pr := &phaseProgress{ios: ios, g: opts.globalOptions}
	ro.Progress = pr.withTotal()
	r, err := report.Run(ctx, ro)
	pr.done()
	if err != nil {
		return err
	}
	r.Budget = opts.budget.Budgets.LimitFor(ro.Kind, ro.Project)
	getenv := ios.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	outColor, err := useColor(opts.Color, getenv, ios.OutIsTerminal)
	if err != nil {
		return err
	}
	errColor, _ := useColor(opts.Color, getenv, ios.ErrIsTerminal)
	if err := writeReport(ios, opts, r, outColor); err != nil {
		return err
	}
	if !opts.Quiet {
		for _, n := range r.Notes {
			fmt.Fprintf(ios.ErrOut, "note: %s\n", n)
		}
	}
	reportFileNotes(ios, opts, ro, r, errColor)
	if opts.Strict && (len(r.Files.Rejected) > 0 || len(r.Files.Salvaged) > 0) {
		return errFailed
	}
	return nil
}

// writeReport writes r on stdout in the format opts ask for.
func writeReport(ios *IO, opts *reportOptions, r *report.Report, color bool) error {
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	var err error
	switch {
	case opts.JSON:
		err = r.WriteJSON(out)
	case opts.CSV:
		err = r.WriteText(out, report.CSV, opts.Breakdown)
	case opts.MD:
		err = r.WriteText(out, report.Markdown, opts.Breakdown)
	default:
		err = r.WriteTable(out, report.TableOptions{Breakdown: opts.Breakdown, Models: true, Compact: opts.Compact,
			Width: ios.OutWidth, Style: tableStyle(color)})
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// reportFileNotes writes on stderr what a report says after its answer:
// the files it left out or used in part, what it read, which database
// (PATH arguments), and where it looked when it found nothing.
func reportFileNotes(ios *IO, opts *reportOptions, ro report.Options, r *report.Report, errColor bool) {
	args := opts.Paths
	// SPEC.md §7.6: a report is a reader. It exits 0 once it printed its
	// answer and says on stderr, one line per kind of problem and under
	// --quiet and --json too, what it left out or used in part.
	// With --verbose, in text output, each line is followed by the files
	// it counts (the first few), named relative to the PATH or ~.
	text := opts.Verbose && !opts.JSON && !opts.CSV && !opts.MD && !opts.Quiet
	show := func(p string) string { return problemPath(ios, ro.Roots, len(args) > 0, p) }
	for _, line := range r.Files.Summary(ios.Prog) {
		warnLine(ios, errColor, line)
		if !text {
			continue
		}
		files := r.Files.Rejected
		if strings.Contains(line, "used in part") {
			files = r.Files.Salvaged
		}
		for _, d := range problemDetail(files, show) {
			fmt.Fprintln(ios.ErrOut, d)
		}
	}
	sum := r.Ingest
	if sum != nil && ios.ErrIsTerminal && !opts.JSON && !opts.Quiet && sum.Read > 0 {
		fmt.Fprintf(ios.ErrOut, "Read %d of %d files (%s) into %s in %.1fs.\n", sum.Read, sum.Files,
			humanBytes(sum.BytesRead), ro.DBPath, float64(sum.ElapsedMS)/1000)
	}
	if ro.Managed && len(args) > 0 && !opts.JSON && !opts.Quiet {
		// Not the default database: say which it is and how to query it.
		fmt.Fprintf(ios.ErrOut, "Report database for %s: %s\nQuery it: %s query 'SELECT * FROM daily_usage' %s\n",
			strings.Join(quoteArgs(args), " "), ro.DBPath, progOr(ios.Prog), strings.Join(quoteArgs(args), " "))
	}
	if sum != nil && sum.Files == 0 && !opts.JSON && !opts.Quiet {
		// Nothing was found to report on: say where the search went.
		fmt.Fprintf(ios.ErrOut, "No session files found (looked in: %s).\n", lookedIn(ios, args, opts.Source))
	}
	if sum != nil && sum.Kept > 0 {
		fmt.Fprintf(ios.ErrOut, "%s under the paths that could not be read kept the usage an earlier run read from them\n",
			plural(sum.Kept, "file", "files"))
	}
}

// progOr is prog, or "sessions-etl" when unset.
func progOr(prog string) string {
	if prog == "" {
		return "sessions-etl"
	}
	return prog
}
