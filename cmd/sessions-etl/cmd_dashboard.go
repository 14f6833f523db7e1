package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/dashboard"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/report"
)

func init() { registerCommand(newDashboardCmd) }

type dashboardOptions struct {
	reportOptions
	Out string
	Top int
}

const dashboardLong = `dashboard writes one HTML file to look at rather than read: daily cost stacked
by model, cost by project, by model and by provider, the 5-hour billing blocks,
the top sessions, tool calls and error rates, the unpriced usage called out,
the period and time zone, and the same totals as 'report' (the same counted
usage: forks, copies and roll-ups once; unpriced usage never $0).

The file is self-contained: the charts are SVG drawn by gonum/plot and inlined,
with the styles; it loads nothing from the network (no script, font,
stylesheet or image), works with JavaScript off and prints. Open it with any
browser: xdg-open FILE.html (Linux), open FILE.html (macOS).

It reads the report's database (refreshed from the PATHs or the default roots
first, as 'report' does); --since/--until (days in --tz), --tz, --source,
--project, --model, --cost and --pricing apply to every chart.`

func newDashboardCmd(ios *IO, g *globalOptions, runF runFunc[dashboardOptions]) *cobra.Command {
	opts := &dashboardOptions{reportOptions: reportOptions{globalOptions: g}}
	run := orDefault(runF, runDashboard)
	cmd := &cobra.Command{
		Use:   "dashboard [PATH...] --out FILE.html",
		Short: "One self-contained HTML page of charts: daily cost by model, projects, models, blocks, sessions, tools",
		Long:  dashboardLong,
		Example: `  sessions-etl dashboard --out usage.html && xdg-open usage.html
  sessions-etl dashboard ~/.pi/agent/sessions --since 2026-11-01 --tz Europe/Paris --out november.html
  sessions-etl dashboard --project web --out web.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return run(cmd.Context(), opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "the HTML file to write (replaced if it exists)")
	f.IntVar(&opts.Top, "top", 15, "rows of the project, model, session and tool charts")
	f.StringVar(&opts.Since, "since", "", "first day, inclusive, in --tz (YYYY-MM-DD or YYYYMMDD)")
	f.StringVar(&opts.Until, "until", "", "last day, inclusive, in --tz (YYYY-MM-DD or YYYYMMDD)")
	addReaderFlags(f, &opts.reportOptions)
	f.StringArrayVar(&opts.From, "from", nil, "answer from this partitioned Parquet root (export --partition-by; repeatable) instead of session files, each record counted once across machines (what is read is kept in the cache directory until a Parquet file of the roots changes)")
	completeValues(cmd)
	return cmd
}

// runDashboard is dashboard's run: the page written to opts.Out.
func runDashboard(ctx context.Context, opts *dashboardOptions, ios *IO) error {
	if opts.Out == "" {
		return usagef("dashboard needs --out FILE.html")
	}
	if opts.Top < 1 {
		return usagef("--top must be at least 1")
	}
	ro, err := reportRunOptions(ios, &opts.reportOptions, report.Daily)
	if err != nil {
		return err
	}
	pr := &phaseProgress{ios: ios, g: opts.globalOptions}
	ro.Progress = pr
	d, err := dashboard.Build(ctx, dashboard.Options{Report: ro, Now: ios.Now(), Top: opts.Top})
	pr.done()
	if err != nil {
		return err
	}
	if err := writeDashboard(opts.Out, d); err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(ios.ErrOut, "Wrote %s (total %s). Open it in a browser.\n", opts.Out, report.CostText(d.Daily.Totals))
	}
	readerNotes(ios, &opts.reportOptions, ro, d.Daily.Ingest)
	return nil
}

// writeDashboard writes the page to a temporary file beside out and
// renames it over out, so that a failed run never leaves half a page.
func writeDashboard(out string, d *dashboard.Data) error {
	// Through fstx as every other file this tool writes: the page appears
	// whole (temporary file, fsync, rename) or the old one stays.
	_, err := fstx.WriteFile(out, fstx.Meta{Mode: 0o644, UID: -1, GID: -1}, fstx.WriteOptions{}, false,
		func(w io.Writer) error { return dashboard.Write(w, d) }, nil)
	if err != nil {
		return fmt.Errorf("dashboard %s: %w", out, err)
	}
	return nil
}
