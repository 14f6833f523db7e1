package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sessions-etl/sessions-etl/report"
)

// ExitOverBudget is the exit status of `budget check` when a current
// period is over its budget.
const ExitOverBudget = 3

// errOverBudget makes runWith exit with ExitOverBudget; the check has
// printed its answer.
var errOverBudget = errors.New("over budget")

func init() { registerCommand(newBudgetCmd) }

// budgetFlags fill report.Budgets from flags (the config file's budgets
// section fills the same value).
type budgetFlags struct {
	report.Budgets
}

// usdValue is a flag holding a positive amount of dollars.
type usdValue struct{ p *float64 }

func (v usdValue) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return fmt.Sprint(*v.p)
}
func (v usdValue) Set(s string) error {
	usd, err := report.ParseUSD(s)
	if err != nil {
		return err
	}
	*v.p = usd
	return nil
}
func (usdValue) Type() string { return "USD" }

// projectBudgetValue is the repeatable NAME:daily=USD,… flag.
type projectBudgetValue struct{ b *report.Budgets }

func (v projectBudgetValue) String() string { return "" }
func (v projectBudgetValue) Set(s string) error {
	name, l, err := report.ParseProjectBudget(s)
	if err != nil {
		return err
	}
	if v.b.Projects == nil {
		v.b.Projects = map[string]report.Limits{}
	}
	v.b.Projects[name] = l
	return nil
}
func (projectBudgetValue) Type() string { return "NAME:daily=USD,…" }

// addBudgetFlags defines <prefix>daily, <prefix>weekly, <prefix>monthly
// and <prefix>project (report: "budget-"; budget check: "").
func addBudgetFlags(f *pflag.FlagSet, b *budgetFlags, prefix string) {
	f.Var(usdValue{&b.Daily}, prefix+"daily", "budget per day in USD: mark days over it")
	f.Var(usdValue{&b.Weekly}, prefix+"weekly", "budget per ISO week in USD")
	f.Var(usdValue{&b.Monthly}, prefix+"monthly", "budget per month in USD")
	name := prefix + "project"
	if prefix == "" {
		name = "project-budget"
	}
	f.Var(projectBudgetValue{&b.Budgets}, name, "a project's own budgets, NAME:daily=USD,weekly=USD,monthly=USD (repeatable)")
}

type budgetOptions struct {
	reportOptions
}

func newBudgetCmd(ios *IO, g *globalOptions, runF runFunc[budgetOptions]) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "budget",
		Short: "Spend budgets per day, week and month: check the current periods (exit 3 when over)",
		Example: `  sessions-etl budget check --daily 20 --monthly 300
  sessions-etl budget check --weekly 100 --source pi
  sessions-etl budget check --project-budget web:daily=5,monthly=80 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("budget needs a subcommand: check")
		},
	}
	cmd.AddCommand(newBudgetCheckCmd(ios, g, runF))
	return cmd
}

const budgetCheckLong = `budget check compares the current day, ISO week and month (in --tz, at the
current time) with their budgets, overall and per project, and prints one line
per period: its cost, the budget, the share used and whether it is over.

The cost is the same counted usage as 'report' (forks and roll-ups once). Usage
with no price is not in the cost (never $0): the line says the cost is at
least that much, and a period is over only when its priced part is over.

Budgets: --daily, --weekly, --monthly (USD, overall, with --source, --project
and --model applied) and --project-budget NAME:daily=5,weekly=25,monthly=80
(repeatable; NAME as --project accepts it: a project label or a cwd).

Exit status: 0 when no current period is over its budget, 3 when one is, 2 on
usage errors (no budget given, a bad amount), 1 when the check failed. Files
that could not be used are named on stderr; they do not change the exit
status (a check is a reader).
--json: {"periods": [{"project", "period", "key", "start", "end", "cost",
"budget", "percentUsed", "overBudget", "costIncomplete", "records",
"unpricedTokens"}], "overBudget", "now", "report"}.`

func newBudgetCheckCmd(ios *IO, g *globalOptions, runF runFunc[budgetOptions]) *cobra.Command {
	opts := &budgetOptions{reportOptions: reportOptions{globalOptions: g}}
	run := orDefault(runF, runBudgetCheck)
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Compare today, this ISO week and this month with their budgets; exit 3 when one is over",
		Long:  budgetCheckLong,
		Example: `  sessions-etl budget check --daily 20 --monthly 300
  sessions-etl budget check --weekly 100 --project-budget web:daily=10 --json
  sessions-etl budget check --daily 20 || notify-send "agent spend over budget"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			configDefaults(cmd.Flags().Changed, ios, &opts.TZ, &opts.Cost, &opts.Pricing)
			configBudgets(ios, &opts.budget.Budgets)
			return run(cmd.Context(), opts, ios)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&g.JSON, "json", false, "one JSON document on stdout")
	addReaderFlags(f, &opts.reportOptions)
	addBudgetFlags(f, &opts.budget, "")
	completeValues(cmd)
	return cmd
}

// runBudgetCheck is `budget check`'s run: exit 3 (errOverBudget) when a
// current period is over its budget.
func runBudgetCheck(ctx context.Context, opts *budgetOptions, ios *IO) error {
	if !opts.budget.Any() {
		return usagef("no budget to check: give --daily, --weekly, --monthly or --project-budget")
	}
	ro, err := reportRunOptions(ios, &opts.reportOptions, report.Daily)
	if err != nil {
		return err
	}
	if opts.CSV || opts.MD {
		return usagef("budget check writes a table or --json")
	}
	pr := &phaseProgress{ios: ios, g: opts.globalOptions}
	ro.Progress = pr
	c, err := report.CheckBudgets(ctx, ro, opts.budget.Budgets, ios.Now())
	pr.done()
	if err != nil {
		return err
	}
	out := bufio.NewWriter(ios.Out)
	if opts.JSON {
		err = c.WriteJSON(out)
	} else {
		err = c.WriteText(out)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	readerNotes(ios, &opts.reportOptions, ro, c.Ingest)
	if c.Over() {
		return errOverBudget
	}
	return nil
}

// addReaderFlags defines the flags `report` takes for choosing the
// database, the zone, the filters and the cost, for commands that answer
// from the report's database (budget check, statusline, dashboard).
func addReaderFlags(f *pflag.FlagSet, opts *reportOptions) {
	f.StringVar(&opts.DB, "db", "", "DuckDB database to refresh and report from (default: one in the user's cache directory)")
	f.BoolVar(&opts.NoRefresh, "no-refresh", false, "answer from the database as it is, without reading the session files")
	f.StringVar(&opts.TZ, "tz", "", "IANA time zone for days, weeks and months (default: local, honouring TZ)")
	f.StringVar(&opts.Source, "source", "", "only usage from files of this source label: pi, atomic, prime, omp, openclaw, kimchi, custom, or a config store's name")
	f.StringVar(&opts.Project, "project", "", "only this project (name or full cwd)")
	f.StringVar(&opts.Model, "model", "", "only models whose id or provider/id contains this (case-insensitive)")
	f.StringVar(&opts.Cost, "cost", "auto", "auto, recorded or calculate")
	f.StringVar(&opts.Pricing, "pricing", "", "price table file replacing the bundled one (JSON: source, retrieved, models with USD per million tokens)")
}

// completeValues registers shell completions for the values of flags
// that take one of a fixed set (those of the flags cmd has).
func completeValues(cmd *cobra.Command) {
	fixed := map[string][]string{
		"cost":        {"auto", "recorded", "calculate"},
		"source":      report.Sources,
		"token-limit": {"max"},
		"tz":          {"UTC", "Local", "America/New_York", "America/Los_Angeles", "Europe/London", "Europe/Paris", "Asia/Tokyo", "Asia/Kolkata"},
	}
	for name, vals := range fixed {
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
			continue
		}
		vals := vals
		_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		})
	}
	for _, name := range []string{"db", "pricing", "out"} {
		if cmd.Flags().Lookup(name) != nil {
			_ = cmd.MarkFlagFilename(name)
		}
	}
}

// configBudgets fills the budgets the command line left unset from the
// configuration file's [budgets] section (a flag beats the file, period by
// period and project by project).
func configBudgets(ios *IO, b *report.Budgets) {
	if ios.Config == nil {
		return
	}
	c := ios.Config.Budgets
	fill := func(dst *float64, v *float64) {
		if *dst == 0 && v != nil {
			*dst = *v
		}
	}
	fill(&b.Daily, c.Daily)
	fill(&b.Weekly, c.Weekly)
	fill(&b.Monthly, c.Monthly)
	for name, p := range c.Projects {
		l := b.Projects[name]
		fill(&l.Daily, p.Daily)
		fill(&l.Weekly, p.Weekly)
		fill(&l.Monthly, p.Monthly)
		if b.Projects == nil {
			b.Projects = map[string]report.Limits{}
		}
		b.Projects[name] = l
	}
}
