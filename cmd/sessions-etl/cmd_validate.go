package main

import (
	"bufio"
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
	MaxProblems int
}

func newValidateCmd(ios *IO, g *globalOptions) *cobra.Command {
	opts := &validateOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Give every session file a verdict: would the agent load it, and if not, why and where",
		Long: `validate reads every session file and gives it one status:
current, needs_upgrade, empty (fine), or not_session, future_version,
unrecognized_version, torn, corrupt, unreadable (errors), with the issues that
explain it (file, line, stable code). Files are only read, never written.

Exit status: 0 when no file has an error, 1 when some do, 2 on usage errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(cmd, ios, opts, args)
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

func runValidate(cmd *cobra.Command, ios *IO, opts *validateOptions, args []string) error {
	if err := validSource(ios, opts.Source); err != nil {
		return err
	}
	rts, err := selectRoots(ios, rootSelection{args: args, source: opts.Source})
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	bar := newProgress(ios, opts.globalOptions, "validating").totalFrom(cmd.Context(), rts)
	type problem struct {
		path string
		is   ingest.Issue
	}
	var problems []problem
	moreProblems := 0

	sum, err := validate.Run(cmd.Context(), validate.Options{Roots: rts, Workers: opts.Workers, Progress: bar.Add},
		func(fr validate.FileResult) error {
			if opts.JSON {
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
				return enc.Encode(v)
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
	if opts.JSON {
		if err := enc.Encode(map[string]any{"summary": sum}); err != nil {
			return err
		}
	} else if opts.Quiet {
		// --quiet: the problems only, one per line.
		for _, p := range problems {
			loc := p.path
			if p.is.Line > 0 {
				loc = fmt.Sprintf("%s:%d", p.path, p.is.Line)
			}
			fmt.Fprintf(out, "%s: %s %s: %s\n", loc, p.is.Severity, p.is.Code, p.is.Message)
		}
	} else {
		printValidateSummary(out, sum)
		if len(problems) > 0 {
			// Every error and warning, those beyond a file's listing cap
			// (issues_truncated) included.
			if total := max(sum.Errors+sum.Warnings, len(problems)+moreProblems); total > len(problems) {
				fmt.Fprintf(out, "\nProblems (first %d of %d):\n", len(problems), total)
			} else {
				fmt.Fprintf(out, "\nProblems:\n")
			}
			for _, p := range problems {
				loc := p.path
				if p.is.Line > 0 {
					loc = fmt.Sprintf("%s:%d", p.path, p.is.Line)
				}
				fmt.Fprintf(out, "  %s: %s %s: %s\n", loc, p.is.Severity, p.is.Code, p.is.Message)
			}
		}
		skipped := sum.ByStatus[validate.StatusSkipped]
		switch {
		case sum.Files-skipped == 0:
			fmt.Fprintf(out, "\nNo session files found (looked in: %s).\n", lookedIn(ios, args, opts.Source))
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
	if sum.Failed > 0 {
		return errFailed
	}
	return nil
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
