package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// Exit codes (README.md, SPEC.md §5).
const (
	ExitOK          = 0   // success
	ExitFailed      = 1   // some files failed or were rejected, or the command failed
	ExitUsage       = 2   // bad flags or arguments
	ExitInterrupted = 130 // SIGINT/SIGTERM
)

// IO carries the streams and environment a command uses, so tests can run
// any command in-process.
type IO struct {
	In            io.Reader
	Out, ErrOut   io.Writer
	ErrIsTerminal bool // show progress bars on ErrOut
	OutIsTerminal bool // stdout is a terminal (colour with --color auto)
	OutWidth      int  // stdout's width in columns when a terminal (0: unknown)
	Getenv        func(string) string
	Now           func() time.Time // injected clock
	Home          string           // the user's home directory (default roots)
	// Prog is how the user ran the tool, for hints that must work as
	// printed: "sessions-etl", or the path typed ("bin/sessions-etl") when
	// it was run by path.
	Prog string
}

// progName is the program as the user typed it when that was a path to
// sessions-etl (./sessions-etl, bin/sessions-etl), else "sessions-etl".
func progName(arg0 string) string {
	if strings.ContainsRune(arg0, filepath.Separator) && filepath.Base(arg0) == "sessions-etl" {
		return arg0
	}
	return "sessions-etl"
}

// globalOptions are the flags every command shares (SPEC.md §5).
type globalOptions struct {
	JSON    bool
	Quiet   bool
	Workers int
}

// errFailed is returned by a command that has already reported per-file
// failures: exit 1 without another message.
var errFailed = errors.New("some files failed")

type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Run executes sessions-etl with args (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	home, _ := os.UserHomeDir()
	ios := &IO{In: stdin, Out: stdout, ErrOut: stderr, Now: time.Now, Home: home, Prog: progName(os.Args[0])}
	if f, ok := stderr.(*os.File); ok {
		ios.ErrIsTerminal = term.IsTerminal(int(f.Fd()))
	}
	if f, ok := stdout.(*os.File); ok {
		ios.OutIsTerminal, ios.OutWidth = streamInfo(f)
	}
	ios.Getenv = os.Getenv
	return runWith(ctx, ios, args)
}

func runWith(ctx context.Context, ios *IO, args []string) int {
	started := false
	root := newRootCmd(ios, &started)
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		fmt.Fprintln(ios.ErrOut, "sessions-etl: interrupted")
		return ExitInterrupted
	case errors.Is(err, errFailed):
		return ExitFailed
	}
	var ue usageError
	if errors.As(err, &ue) || !started {
		help := "sessions-etl --help"
		if c, _, ferr := root.Find(args); ferr == nil && c != root {
			help = c.CommandPath() + " --help"
		}
		fmt.Fprintf(ios.ErrOut, "sessions-etl: %v\nRun '%s' for usage.\n", err, help)
		return ExitUsage
	}
	fmt.Fprintf(ios.ErrOut, "sessions-etl: %v\n", err)
	return ExitFailed
}

func newRootCmd(ios *IO, started *bool) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "sessions-etl",
		Short: "Validate, migrate, export and report on pi / Atomic / Prime session logs",
		Long: `sessions-etl reads the JSONL session files of pi-agent, Atomic and Prime Agent.

With no PATH arguments, commands use the default roots that exist:
  ~/.pi/agent/sessions, ~/.pi/agent/*.jsonl, ~/.atomic/agent/sessions, ~/.prime/agent/sessions
Paths given on the command line (directories or files) replace them.

Exit codes: 0 success, 1 some files failed or were rejected, 2 usage error, 130 interrupted.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			*started = true
			if g.Workers < 1 {
				return usagef("--workers must be at least 1")
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.BoolVar(&g.JSON, "json", false, "machine-readable output (JSON Lines) on stdout")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "no progress bar and no summary: print only problems")
	pf.IntVar(&g.Workers, "workers", runtime.NumCPU(), "files processed in parallel")

	for _, mk := range commandMakers {
		root.AddCommand(mk(ios, g))
	}
	setupConventions(root)
	return root
}

// commandMakers holds one constructor per subcommand; each cmd_*.go file
// registers its own in an init function, so adding a command touches only
// its file.
var commandMakers []func(*IO, *globalOptions) *cobra.Command

func registerCommand(mk func(*IO, *globalOptions) *cobra.Command) {
	commandMakers = append(commandMakers, mk)
}

// roots returns the roots for the PATH arguments, or the default roots.
// Every root skips this tool's state directory (run directories hold
// backups of session files) and the extra directories given (--backup-dir).
func roots(ios *IO, args []string, skip ...string) ([]ingest.Root, error) {
	skip = append([]string{stateDir(ios)}, skip...)
	var rts []ingest.Root
	if len(args) > 0 {
		for _, a := range args {
			if _, err := os.Stat(a); errors.Is(err, fs.ErrNotExist) {
				return nil, usagef("%s: no such file or directory", a)
			}
		}
		var err error
		if rts, err = ingest.PathRoots(args); err != nil {
			return nil, err
		}
	} else {
		if ios.Home == "" {
			return nil, usagef("no PATH given and no home directory to find the default roots")
		}
		rts = ingest.DefaultRoots(ios.Home)
	}
	for i := range rts {
		rts[i].Skip = skip
	}
	return rts, nil
}

// lookedIn names the places a command searched for session files, for the
// message saying none held any: the PATH arguments, or every default root
// (with ~ for the home directory), marked "(missing)" when it does not exist
// and "(unreadable)" when it could not be looked at (ingest.DefaultRootState).
func lookedIn(ios *IO, args []string) string {
	if len(args) > 0 {
		return strings.Join(args, ", ")
	}
	var where []string
	for _, r := range ingest.DefaultRootCandidates(ios.Home) {
		p := r.Path
		if rel, err := filepath.Rel(ios.Home, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.Join("~", rel)
		}
		if !r.Recursive {
			p = filepath.Join(p, "*.jsonl")
		}
		switch ingest.DefaultRootState(r.Path) {
		case ingest.RootMissing:
			p += " (missing)"
		case ingest.RootUnreadable:
			p += " (unreadable)" // e.g. a parent of mode 000: not a missing root
		}
		where = append(where, p)
	}
	return strings.Join(where, ", ")
}
