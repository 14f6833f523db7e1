package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sessions-etl/sessions-etl/report"
)

func init() { registerCommand(newStatuslineCmd) }

type statuslineOptions struct {
	reportOptions
	Session    string
	Transcript string
	NoStdin    bool
	Timeout    time.Duration // --lock-wait
}

// hookInput is what an agent's status-line hook writes on stdin (Claude
// Code's statusLine command, ccusage statusline, ccstatusline): only the
// fields used here.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cost           *struct {
		TotalCostUSD *float64 `json:"total_cost_usd"`
	} `json:"cost"`
}

// stdinWait bounds how long statusline waits for the hook's JSON on a
// stdin that is not a terminal (a pipe nobody writes to must not hang the
// status bar).
const stdinWait = 250 * time.Millisecond

const statuslineLong = `statusline prints exactly one line for an agent's status bar:

  session $0.42 · today $12.34 · block $5.67, 2h13m left · $3.21/h · 12k tok/min

today's cost (in --tz), the active 5-hour billing block's cost and time left
(see 'report blocks'), its burn rate, and the current session's cost when the
session is known. The numbers are the same counted usage as 'report' ("+?"
marks a cost with unpriced usage left out; "$?" one with no price at all).

The session: --session ID, --transcript FILE, or the JSON a status-line hook
writes on stdin ({"session_id", "transcript_path", "cost": {"total_cost_usd"}},
as Claude Code's statusLine command and ccusage/ccstatusline read it); stdin is
read only when it is not a terminal, for at most 250 ms. A session not in the
database shows the agent's own cost, marked "(agent)".

It answers from the report's warm database (the one 'report' keeps for the
same PATHs or the default roots): unchanged files are not read again. It never
prints more than one line: on any error it prints a short marker
("sessions-etl: ⚠ …") and exits 0, so the status bar never breaks.`

func newStatuslineCmd(ios *IO, g *globalOptions, runF runFunc[statuslineOptions]) *cobra.Command {
	opts := &statuslineOptions{reportOptions: reportOptions{globalOptions: g}}
	run := orDefault(runF, runStatusline)
	cmd := &cobra.Command{
		Use:   "statusline [PATH...]",
		Short: "One short line for an agent's status bar: today's cost, the active block, burn rate",
		Long:  statuslineLong,
		Example: `  sessions-etl statusline
  sessions-etl statusline --tz Europe/Paris --no-stdin
  sessions-etl statusline --transcript ~/.pi/agent/sessions/--home-me-app--/2026-03-01T09-00-00-000Z_0199.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return run(cmd.Context(), opts, ios)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintln(ios.Out, statusMarker(err))
		return nil
	})
	f := cmd.Flags()
	addReaderFlags(f, &opts.reportOptions)
	f.StringVar(&opts.Session, "session", "", "the current session's id (instead of the hook's session_id)")
	f.StringVar(&opts.Transcript, "transcript", "", "the current session's file (instead of the hook's transcript_path)")
	f.BoolVar(&opts.NoStdin, "no-stdin", false, "do not read the hook's JSON from stdin")
	f.DurationVar(&opts.Timeout, "lock-wait", 2*time.Second, "give up (and print the marker) when another run holds the database longer than this")
	completeValues(cmd)
	return cmd
}

// runStatusline is statusline's run: one line on stdout, whatever
// happens (never an error).
func runStatusline(ctx context.Context, opts *statuslineOptions, ios *IO) error {
	fmt.Fprintln(ios.Out, statusLine(ctx, ios, opts))
	return nil
}

// statusMarker is the one-line answer to an error.
func statusMarker(err error) string {
	msg := err.Error()
	if r := []rune(msg); len(r) > 60 {
		msg = string(r[:59]) + "…"
	}
	return report.OneLine("sessions-etl: ⚠ " + msg)
}

// statusLine computes the line; every error becomes the marker.
func statusLine(ctx context.Context, ios *IO, opts *statuslineOptions) (line string) {
	defer func() {
		if p := recover(); p != nil {
			line = statusMarker(fmt.Errorf("%v", p))
		}
	}()
	q := report.StatusQuery{SessionID: opts.Session, File: opts.Transcript, LockWait: opts.Timeout}
	hookCost := -1.0
	if !opts.NoStdin {
		if h, ok := readHook(ios.In); ok {
			if q.SessionID == "" {
				q.SessionID = h.SessionID
			}
			if q.File == "" {
				q.File = h.TranscriptPath
			}
			if h.Cost != nil && h.Cost.TotalCostUSD != nil && *h.Cost.TotalCostUSD >= 0 {
				hookCost = *h.Cost.TotalCostUSD
			}
		}
	}
	ro, err := reportRunOptions(ios, &opts.reportOptions, report.Daily)
	if err != nil {
		return statusMarker(err)
	}
	st, err := report.RunStatusCached(ctx, ro, q, ios.Now())
	if err != nil {
		return statusMarker(err)
	}
	return st.Line(hookCost)
}

// readHook reads the hook's JSON from in when it is not a terminal;
// ok is false when there is none or it is not JSON.
func readHook(in io.Reader) (hookInput, bool) {
	var h hookInput
	if in == nil {
		return h, false
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return h, false
	}
	done := make(chan []byte, 1)
	go func() {
		raw, _ := io.ReadAll(io.LimitReader(in, 1<<20))
		done <- raw
	}()
	var raw []byte
	select {
	case raw = <-done:
	case <-time.After(stdinWait):
		return h, false
	}
	if strings.TrimSpace(string(raw)) == "" || json.Unmarshal(raw, &h) != nil {
		return h, false
	}
	return h, true
}
