package main

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/report"
)

// reportSubcommands are `report` subcommands with flags of their own
// (blocks); newReportCmd adds them after the usual kinds.
var reportSubcommands []func(*IO, *reportOptions) *cobra.Command

func init() {
	reportSubcommands = append(reportSubcommands, func(ios *IO, opts *reportOptions) *cobra.Command {
		return newBlocksCmd(ios, opts, nil)
	})
}

type blocksOptions struct {
	*reportOptions // report's flags
	Active         bool
	Recent         bool
	TokenLimit     string
	NoGaps         bool
}

const blocksLong = `Billing blocks (ccusage's rule): a block starts at the instant of
its first record floored to the UTC hour (whatever --tz says: a block is 5 real
hours, also across a DST change) and holds every record before start + 5 h; the
first record after that starts the next block. When more than 5 h pass without
a record, a gap row runs from the last record + 5 h to the next record
(--no-gaps leaves them out).

Each block shows its start, end and last activity (in --tz), its records,
tokens by kind, cost and models, from the same counted usage as every report
(forks, copies and roll-ups once; unpriced usage never $0). The active block
(now before its end) also gets its burn rate — tokens per minute and USD per
hour over its elapsed time (now - start) — and the projection of its tokens
and cost to its end at that rate.

--active shows only the active block; --recent the blocks of the last 3 days;
--token-limit N (or max: the largest past block) adds the share of N each
block used and the active block's projected share. --since/--until select
blocks by the day their start falls on in --tz; --source, --project and
--model select the records blocks are made of.

--json: {"blocks": [{"id", "startTime", "endTime", "actualEndTime", "isActive",
"isGap", "entries", "tokenCounts", "totalTokens", "costUSD", "models",
"burnRate", "projection", "tokenLimitStatus"} + "records", "costIncomplete",
"unpricedRecords", "unpricedTokens", "modelBreakdowns"], "totals", "unpriced",
"report"} (ccusage's blocks keys; costUSD is the priced part, a number).`

func newBlocksCmd(ios *IO, opts *reportOptions, runF runFunc[blocksOptions]) *cobra.Command {
	bo := &blocksOptions{reportOptions: opts}
	run := orDefault(runF, runBlocks)
	cmd := &cobra.Command{
		Use:   "blocks [PATH...]",
		Short: "5-hour billing blocks: usage, cost, burn rate and projection of the active block",
		Long:  blocksLong,
		Example: `  sessions-etl report blocks
  sessions-etl report blocks --active --token-limit max
  sessions-etl report blocks --recent --tz Europe/Paris --json
  sessions-etl report blocks ~/.pi/agent/sessions --since 2026-11-01 --csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			bo.Paths = args
			return run(cmd.Context(), bo, ios)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&bo.Active, "active", false, "only the active block (the one now is in)")
	f.BoolVar(&bo.Recent, "recent", false, "only the blocks of the last 3 days (and the active one)")
	f.StringVar(&bo.TokenLimit, "token-limit", "", "tokens per block to compare against: a number, or max (the largest past block)")
	f.BoolVar(&bo.NoGaps, "no-gaps", false, "leave out the gap rows")
	completeValues(cmd)
	return cmd
}

// runBlocks is `report blocks`'s run.
func runBlocks(ctx context.Context, bo *blocksOptions, ios *IO) error {
	opts := bo.reportOptions
	ro, err := reportRunOptions(ios, opts, report.Daily)
	if err != nil {
		return err
	}
	if opts.Breakdown {
		return usagef("--breakdown is not a blocks option (blocks list their models)")
	}
	bro, err := bo.blockOptions(ios.Now())
	if err != nil {
		return err
	}
	pr := &phaseProgress{ios: ios, g: opts.globalOptions}
	ro.Progress = pr
	br, err := report.RunBlocks(ctx, ro, bro)
	pr.done()
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	switch {
	case opts.JSON:
		err = br.WriteJSON(out)
	case opts.CSV:
		err = br.WriteText(out, report.CSV)
	case opts.MD:
		err = br.WriteText(out, report.Markdown)
	default:
		err = br.WriteText(out, report.Table)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	readerNotes(ios, opts, ro, br.Ingest)
	return nil
}

// blockOptions checks blocks' own flags and turns them into
// report.BlockOptions at now.
func (bo *blocksOptions) blockOptions(now time.Time) (report.BlockOptions, error) {
	bro := report.BlockOptions{Now: now, Active: bo.Active, Recent: bo.Recent, NoGaps: bo.NoGaps}
	if bo.Active && bo.Recent {
		return bro, usagef("--active and --recent exclude each other")
	}
	switch strings.ToLower(bo.TokenLimit) {
	case "":
	case "max":
		bro.TokenLimitMax = true
	default:
		n, err := strconv.ParseInt(strings.ReplaceAll(bo.TokenLimit, "_", ""), 10, 64)
		if err != nil || n <= 0 {
			return bro, usagef("--token-limit %q: want a positive number of tokens or max", bo.TokenLimit)
		}
		bro.TokenLimit = n
	}
	return bro, nil
}

// readerNotes writes, on stderr, what a reader command (report blocks,
// budget check, dashboard) says after its answer: the database it used
// (PATH arguments), "no session files found", and the files it could not
// use. Readers exit 0 whatever the state of the files (SPEC.md §7.6).
func readerNotes(ios *IO, opts *reportOptions, ro report.Options, sum *export.Summary) {
	args := opts.Paths
	if opts.Quiet && (sum == nil || sum.Rejected == 0) {
		return
	}
	if ro.Managed && len(args) > 0 && !opts.JSON && !opts.Quiet {
		fmt.Fprintf(ios.ErrOut, "Report database for %s: %s\n", strings.Join(quoteArgs(args), " "), ro.DBPath)
	}
	if sum == nil {
		return
	}
	if sum.Files == 0 && !opts.JSON && !opts.Quiet {
		fmt.Fprintf(ios.ErrOut, "No session files found (looked in: %s).\n", lookedIn(ios, args, opts.Source))
	}
	if sum.Rejected > 0 {
		fmt.Fprintln(ios.ErrOut, rejectedLine(sum, progOr(ios.Prog)))
	}
}

// rejectedLine is the one stderr line of SPEC.md §7.6 for the files and
// paths an ingest could not use, by status ("3 files not used (2
// future_version, 1 not_session) — see: sessions-etl validate").
func rejectedLine(sum *export.Summary, prog string) string {
	// not_session files with a BOM are read (SPEC.md §1.5): the rest of
	// the rejected files are the other not_session ones.
	unreadable := sum.ByStatus["unreadable"] + sum.RejectedPaths
	others := sum.ByStatus["future_version"] + sum.ByStatus["unrecognized_version"] + unreadable
	counts := map[string]int{"not_session": sum.Rejected - others, "future_version": sum.ByStatus["future_version"],
		"unrecognized_version": sum.ByStatus["unrecognized_version"], "unreadable": unreadable}
	var parts []string
	for _, st := range []string{"future_version", "unrecognized_version", "not_session", "unreadable"} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return fmt.Sprintf("%s not used (%s) — see: %s validate", plural(sum.Rejected, "file", "files"), strings.Join(parts, ", "), prog)
}
