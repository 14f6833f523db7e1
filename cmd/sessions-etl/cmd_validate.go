package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/validate"
)

func init() { registerCommand(newValidateCmd) }

type validateOptions struct {
	*globalOptions
	Paths       []string // PATH arguments; none: the stores
	MaxProblems int
}

func newValidateCmd(ios *IO, g *globalOptions, runF runFunc[validateOptions]) *cobra.Command {
	opts := &validateOptions{globalOptions: g}
	run := orDefault(runF, runValidate)
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Give every session file a verdict: would the agent load it, and if not, why and where",
		Long: `validate reads every session file and gives it one status:
current, needs_upgrade, empty (fine), or not_session, future_version,
unrecognized_version, torn, corrupt, unreadable (errors), with the issues that
explain it (file, line, stable code). Files are only read, never written.

Exit status: 0 when no file has an error, 1 when some do, 2 on usage errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return run(cmd.Context(), opts, ios)
		},
	}
	addSourceFlag(cmd, g)
	cmd.Flags().IntVar(&opts.MaxProblems, "problems", 20, "problems listed in the human summary")
	return cmd
}

// jsonFileVerdict is one line of `validate --json`.
type jsonFileVerdict struct {
	Path          string         `json:"path"`
	PathBytes     string         `json:"path_bytes,omitempty"` // base64 of a path that is not UTF-8
	Source        string         `json:"source"`
	Status        string         `json:"status"`
	FormatVersion *int           `json:"format_version"`
	EarlyV4       bool           `json:"early_v4"`
	SessionID     string         `json:"session_id,omitempty"`
	Entries       int            `json:"entries"`
	SizeBytes     int64          `json:"size_bytes"`
	Archived      bool           `json:"archived,omitempty"`    // an OpenClaw reset/deleted archive (SPEC.md §7.2)
	Compression   string         `json:"compression,omitempty"` // zstd or gzip: read decompressed
	Issues        []ingest.Issue `json:"issues"`
}

// problem is an error or warning validate lists, with the file it is in.
type problem struct {
	path string
	is   ingest.Issue
}

// String is "PATH[:LINE]: SEVERITY CODE: MESSAGE".
func (p problem) String() string {
	loc := p.path
	if p.is.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.path, p.is.Line)
	}
	return fmt.Sprintf("%s: %s %s: %s", loc, p.is.Severity, p.is.Code, p.is.Message)
}

// runValidate is validate's run.
func runValidate(ctx context.Context, opts *validateOptions, ios *IO) error {
	if err := validSource(ios, opts.Source); err != nil {
		return err
	}
	rts, err := selectRoots(ios, rootSelection{args: opts.Paths, source: opts.Source})
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	bar := newProgress(ios, opts.globalOptions, "validating").totalFrom(ctx, rts)
	var problems []problem
	moreProblems := 0

	sum, err := validate.Run(ctx, validate.Options{Roots: rts, Workers: opts.Workers, Progress: bar.Add},
		func(fr validate.FileResult) error {
			if opts.JSON {
				return enc.Encode(fileVerdict(fr))
			}
			for _, is := range fr.Issues {
				if is.Severity == ingest.SeverityNote {
					continue
				}
				if len(problems) < opts.MaxProblems {
					problems = append(problems, problem{showPath(fr.File.Path), is})
				} else {
					moreProblems++
				}
			}
			return nil
		})
	bar.Done()
	if err != nil {
		return err
	}
	switch {
	case opts.JSON:
		if err := enc.Encode(map[string]any{"summary": sum}); err != nil {
			return err
		}
	case opts.Quiet:
		// --quiet: the problems only, one per line.
		for _, p := range problems {
			fmt.Fprintln(out, p)
		}
	default:
		printValidateSummary(out, sum)
		printProblems(out, sum, problems, moreProblems)
		printValidateVerdict(out, sum, lookedIn(ios, opts.Paths, opts.Source))
	}
	if sum.Failed > 0 {
		return errFailed
	}
	return nil
}

// fileVerdict is the line of `validate --json` for fr.
func fileVerdict(fr validate.FileResult) jsonFileVerdict {
	v := jsonFileVerdict{Path: fr.File.Path, PathBytes: pathBytes(fr.File.Path), Source: fr.File.Source, Status: string(fr.Status),
		EarlyV4: fr.EarlyV4, SessionID: fr.Header.ID, Entries: fr.Entries, SizeBytes: fr.File.Size, Issues: fr.Issues,
		Archived: fr.File.Kind.Archived, Compression: fr.File.Kind.Compression}
	if fr.FormatVersion > 0 {
		fv := fr.FormatVersion
		v.FormatVersion = &fv
	}
	if v.Issues == nil {
		v.Issues = []ingest.Issue{}
	}
	return v
}

// printProblems lists the first problems, under a heading that gives
// their total when some were left out: every error and warning, those
// beyond a file's listing cap (issues_truncated) included.
func printProblems(out *bufio.Writer, sum validate.Summary, problems []problem, more int) {
	if len(problems) == 0 {
		return
	}
	if total := max(sum.Errors+sum.Warnings, len(problems)+more); total > len(problems) {
		fmt.Fprintf(out, "\nProblems (first %d of %d):\n", len(problems), total)
	} else {
		fmt.Fprintf(out, "\nProblems:\n")
	}
	for _, p := range problems {
		fmt.Fprintf(out, "  %s\n", p)
	}
}

// printValidateVerdict is the last line of the human output: no files
// found (and where validate looked), how many have errors, or that all
// are loadable.
func printValidateVerdict(out *bufio.Writer, sum validate.Summary, lookedIn string) {
	skipped := sum.ByStatus[validate.StatusSkipped]
	switch {
	case sum.Files-skipped == 0:
		fmt.Fprintf(out, "\nNo session files found (looked in: %s).\n", lookedIn)
	case sum.Failed > 0:
		verb := "have errors: the agent will not load them"
		if sum.Failed == 1 {
			verb = "has errors: the agent will not load it"
		}
		fmt.Fprintf(out, "\n%d of %s %s. Run with --json for every issue.\n", sum.Failed, plural(sum.Files, "file", "files"), verb)
	default:
		msg := fmt.Sprintf("All %d files are loadable", sum.Files-skipped)
		if sum.Files-skipped == 1 {
			msg = "The file is loadable"
		}
		if skipped > 0 {
			msg += fmt.Sprintf(" (%d skipped)", skipped)
		}
		fmt.Fprintf(out, "\n%s.\n", msg)
	}
}

func printValidateSummary(w *bufio.Writer, sum validate.Summary) {
	fmt.Fprintf(w, "Validated %s (%s) in %s\n", plural(sum.Files, "file", "files"), humanBytes(sum.Bytes), humanDuration(time.Duration(sum.ElapsedMS)*time.Millisecond))
	if sum.Files == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  status\tfiles\tmeaning")
	for _, st := range append(validate.Statuses, validate.StatusSkipped) {
		if n := sum.ByStatus[st]; n > 0 {
			kind := "ok"
			switch {
			case st == validate.StatusSkipped:
				kind = "passed over (not a session file, broken link, link cycle)"
			case st.IsError():
				kind = "error: the agent will not load these"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", st, n, kind)
		}
	}
	tw.Flush()
	fmt.Fprint(w, formatVersions(sum))
	fmt.Fprintf(w, "issues: %s, %s, %s\n", plural(sum.Errors, "error", "errors"), plural(sum.Warnings, "warning", "warnings"), plural(sum.Notes, "note", "notes"))
}

// formatVersions spells the "format versions" line of the summary, the
// early-v4 files next to the v4 ones they are part of: "v1 3, v4 12 (2
// early v4), unknown 1" ("" when no file has a version to count).
func formatVersions(sum validate.Summary) string {
	var vs []string
	early := sum.EarlyV4 > 0
	for _, v := range sum.Versions() {
		switch v {
		case "unknown":
			vs = append(vs, fmt.Sprintf("unknown %d", sum.ByVersion[v]))
		case "4":
			s := fmt.Sprintf("v4 %d", sum.ByVersion[v])
			if early {
				s += fmt.Sprintf(" (%d early v4)", sum.EarlyV4)
				early = false
			}
			vs = append(vs, s)
		default:
			vs = append(vs, fmt.Sprintf("v%s %d", v, sum.ByVersion[v]))
		}
	}
	if early { // not expected: early-v4 files are counted under v4
		vs = append(vs, fmt.Sprintf("%d early v4", sum.EarlyV4))
	}
	if len(vs) == 0 {
		return ""
	}
	return "\nformat versions: " + strings.Join(vs, ", ") + "\n"
}

// humanDuration prints 850ms, 1.2s, 75.0s.
func humanDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
