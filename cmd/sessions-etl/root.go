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
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/config"
	"github.com/sessions-etl/sessions-etl/internal/userdirs"
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
	// Env looks up an environment variable (the variables that move
	// stores, SPEC.md §7.1); nil: os.LookupEnv.
	Env func(string) (string, bool)

	// Config is the configuration file's content, loaded before a command
	// runs (loadConfig; never nil then).
	Config *config.Config
	// Prog is how the user ran the tool, for hints that must work as
	// printed: "sessions-etl", or the path typed ("bin/sessions-etl") when
	// it was run by path.
	Prog string
}

// getenv looks up a variable through ios.Env ("" when unset).
func (ios *IO) getenv(name string) string {
	look := ios.Env
	if look == nil {
		look = os.LookupEnv
	}
	v, _ := look(name)
	return v
}

// configPath is where the configuration file is looked for.
func configPath(ios *IO) string {
	return config.DefaultPath(ios.Home, ios.getenv("XDG_CONFIG_HOME"))
}

// loadConfig reads the configuration file into ios.Config. A file that
// cannot be used is a usage error (exit 2) naming the file and line; keys
// this version does not know are named on stderr and ignored.
func loadConfig(ios *IO) error {
	if ios.Config != nil {
		return nil
	}
	if ios.Home == "" && ios.getenv("XDG_CONFIG_HOME") == "" {
		ios.Config = &config.Config{}
		return nil
	}
	c, err := config.Load(configPath(ios), ios.Home)
	if err != nil {
		return usageError{err}
	}
	for _, k := range c.Unknown {
		fmt.Fprintf(ios.ErrOut, "sessions-etl: config %s: unknown key %s (ignored)\n", c.Path, k)
	}
	ios.Config = c
	return nil

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
	// Source is --source, for the commands that read session files
	// (addSourceFlag): only files of that source label.
	Source string
}

// addSourceFlag gives a command that reads session files --source.
func addSourceFlag(cmd *cobra.Command, g *globalOptions) {
	cmd.Flags().StringVar(&g.Source, "source", "", "only files of this source label: pi, atomic, prime, omp, openclaw, kimchi, custom, or a config store's name")
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
	if len(args) > 0 && args[0] == "statusline" {
		// The status bar runs this every few seconds: build only its
		// command (the tree of every command costs milliseconds).
		root = newRootCmdOf(ios, &started, withRun(newStatuslineCmd))
	}
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
	case errors.Is(err, errOverBudget):
		return ExitOverBudget
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
	return newRootCmdOf(ios, started, commandMakers...)
}

// newRootCmdOf is the root command with the subcommands makers build.
func newRootCmdOf(ios *IO, started *bool, makers ...func(*IO, *globalOptions) *cobra.Command) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "sessions-etl",
		Short: "Validate, migrate, export and report on pi / Atomic / Prime session logs",
		Long: `sessions-etl reads the JSONL session files of pi-agent, Atomic and Prime Agent,
and of the pi derivatives oh-my-pi, OpenClaw and kimchi.

With no PATH arguments, commands read every store that exists ('sessions-etl
sources' lists them, and what chose each): ~/.pi/agent/sessions and
~/.pi/agent/*.jsonl (moved by PI_CODING_AGENT_SESSION_DIR / PI_CODING_AGENT_DIR),
~/.atomic/agent/sessions, ~/.prime/agent/sessions (PRIME_AGENT_SESSION_DIR),
~/.omp/agent/sessions (OMP_CODING_AGENT_SESSION_DIR / OMP_CODING_AGENT_DIR),
~/.openclaw/agents/*/sessions (OPENCLAW_STATE_DIR),
$XDG_CONFIG_HOME/kimchi/harness/sessions.
Paths given on the command line (directories or files) replace them.

Exit codes: 0 success, 1 some files failed or were rejected, 2 usage error, 130 interrupted.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			*started = true
			if g.Workers < 1 {
				return usagef("--workers must be at least 1")
			}
			return loadConfig(ios)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.BoolVar(&g.JSON, "json", false, "machine-readable output (JSON Lines) on stdout")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "no progress bar and no summary: print only problems")
	pf.IntVar(&g.Workers, "workers", runtime.NumCPU(), "files processed in parallel")

	for _, mk := range makers {
		root.AddCommand(mk(ios, g))
	}
	setupConventions(root)
	return root
}

// commandMakers holds one constructor per subcommand; each cmd_*.go file
// registers its own in an init function, so adding a command touches only
// its file.
var commandMakers []func(*IO, *globalOptions) *cobra.Command

// runFunc is a command's work (cli/cli's Options + runF shape): it takes
// the options the flags and arguments filled in, and the IO, never the
// cobra command, so a test can run any command without cobra. Each
// newXCmd takes one: nil runs the command's own, and a test passes its
// own to see what the flags filled in without running anything.
type runFunc[O any] func(ctx context.Context, opts *O, ios *IO) error

// orDefault is runF, or run when runF is nil.
func orDefault[O any](runF, run runFunc[O]) runFunc[O] {
	if runF != nil {
		return runF
	}
	return run
}

// registerCommand adds a subcommand's constructor, built with its own run.
func registerCommand[O any](mk func(*IO, *globalOptions, runFunc[O]) *cobra.Command) {
	commandMakers = append(commandMakers, withRun(mk))
}

// withRun is mk with the command's own run.
func withRun[O any](mk func(*IO, *globalOptions, runFunc[O]) *cobra.Command) func(*IO, *globalOptions) *cobra.Command {
	return func(ios *IO, g *globalOptions) *cobra.Command { return mk(ios, g, nil) }
}

// roots returns the roots for the PATH arguments, or the default roots.
// Every root skips this tool's state directory (run directories hold
// backups of session files) and the extra directories given (--backup-dir).
func roots(ios *IO, args []string, skip ...string) ([]ingest.Root, error) {
	return selectRoots(ios, rootSelection{args: args, skip: skip})
}

// rootSelection says which roots a command reads.
type rootSelection struct {
	args []string // PATH arguments; none: the stores
	skip []string // directories never entered, beside the state directory
	// source keeps only files of this source label (--source; "" all):
	// stores of another label are not walked, and files under PATHs are
	// kept by their label.
	source string
	// kinds, with no PATH, keeps the stores of these kinds only (nil: all).
	kinds []string
}

// selectRoots returns the discovery roots of sel: the PATH arguments, or
// the roots of every store that is not missing (ingest.StoreRoots). With
// no PATH, a store that a variable or the config file chose and that is
// not there is named on stderr (SPEC.md §7.1: never silently ignored).
func selectRoots(ios *IO, sel rootSelection) ([]ingest.Root, error) {
	skip := append([]string{stateDir(ios)}, sel.skip...)
	var rts []ingest.Root
	if len(sel.args) > 0 {
		for _, a := range sel.args {
			if _, err := os.Stat(a); errors.Is(err, fs.ErrNotExist) {
				return nil, usagef("%s: no such file or directory", a)
			}
		}
		var err error
		if rts, err = ingest.PathRoots(sel.args); err != nil {
			return nil, err
		}
		if ios.Home != "" {
			// A PATH inside a store (wherever a variable or the config
			// file put it) keeps that store's label; a PATH that is pi's
			// agent directory is read as one.
			var known []ingest.Root
			for _, s := range stores(ios) {
				known = append(known, s.Roots()...)
			}
			for i := range rts {
				if rts[i].Archive {
					continue
				}
				rts[i].Stores = known
				for _, k := range known {
					if k.AgentDir && k.Path == rts[i].Path {
						rts[i].AgentDir = true
					}
				}
			}
		}
	} else {
		if ios.Home == "" {
			return nil, usagef("no PATH given and no home directory to find the default roots")
		}
		var sts []ingest.Store
		for _, s := range stores(ios) {
			if (sel.source == "" || s.Label == sel.source) && (sel.kinds == nil || slices.Contains(sel.kinds, s.Kind)) {
				sts = append(sts, s)
			}
		}
		warnMissingStores(ios, sts)
		rts = ingest.StoreRoots(sts)
	}
	for i := range rts {
		rts[i].Skip = skip
		if sel.source != "" {
			rts[i].Labels = []string{sel.source}
		}
	}
	return rts, nil
}

// stores returns every store the commands read with no PATH: those of
// SPEC.md §7.1 under the home directory and the environment, then the
// configuration file's.
func stores(ios *IO) []ingest.Store {
	out := ingest.DefaultStores(ingest.StoreEnv{Home: ios.Home, Lookup: ios.Env})
	if ios.Config != nil {
		for _, s := range ios.Config.Stores {
			out = append(out, ingest.Store{Label: s.Name, Kind: s.Source, Root: s.Path,
				SelectedBy: ingest.SelectedConfig, Config: ios.Config.Path})
		}
	}
	return out
}

// warnMissingStores names on stderr each store a variable or the config
// file moved to a place that is not there.
func warnMissingStores(ios *IO, sts []ingest.Store) {
	for _, s := range ingest.MissingMoved(sts) {
		fmt.Fprintf(ios.ErrOut, "sessions-etl: %s: %s (%s sessions there not read)\n", storeChooser(s), s.Root, s.Label)
	}
}

// storeChooser says what chose a store that is not there: "PI_CODING_AGENT_DIR=~/x
// names no directory", "config store work (file) names no directory".
func storeChooser(s ingest.Store) string {
	what := "names no directory"
	if s.State() == ingest.RootUnreadable {
		what = "names a directory that cannot be read"
	}
	if s.SelectedBy == ingest.SelectedConfig {
		return fmt.Sprintf("store %q of %s %s", s.Label, s.Config, what)
	}
	return fmt.Sprintf("%s=%s %s", s.Variable, s.Value, what)
}

// configDefaults gives the flags tz, cost and pricing that were not on the
// command line (changed is false for them: cmd.Flags().Changed) the
// configuration file's defaults (nil: a flag the command does not have).
func configDefaults(changed func(flag string) bool, ios *IO, tz, cost, pricing *string) {
	if ios.Config == nil {
		return
	}
	d := ios.Config.Defaults
	for _, f := range []struct {
		name string
		dst  *string
		val  string
	}{{"tz", tz, d.TZ}, {"cost", cost, d.Cost}, {"pricing", pricing, d.Pricing}} {
		if f.dst != nil && f.val != "" && !changed(f.name) {
			*f.dst = f.val
		}
	}
}

// validSource checks a --source value: a built-in label or the name of a
// store of the config file.
func validSource(ios *IO, source string) error {
	if source == "" {
		return nil
	}
	labels := slices.Clone(ingest.Labels)
	for _, s := range stores(ios) {
		if !slices.Contains(labels, s.Label) {
			labels = append(labels, s.Label)
		}
	}
	if !slices.Contains(labels, source) {
		return usagef("--source %q: want one of %s", source, strings.Join(labels, ", "))
	}
	return nil
}

// lookedIn names the places a command searched for session files, for the
// message saying none held any: the PATH arguments, or every store's root
// (with ~ for the home directory; pi's legacy flat files as
// ~/.pi/agent/*.jsonl), with the variable or config file that chose it,
// marked "(missing)" when it does not exist and "(unreadable)" when it
// could not be looked at (ingest.DefaultRootState); with --source, the
// stores of that label only.
func lookedIn(ios *IO, args []string, source string) string {
	if len(args) > 0 {
		return strings.Join(args, ", ")
	}
	var where []string
	for _, s := range stores(ios) {
		if source != "" && s.Label != source {
			continue
		}
		for _, r := range s.Roots() {
			p := userdirs.Display(userdirs.Env{GOOS: runtime.GOOS, Home: ios.Home}, r.Path)
			if !r.Recursive {
				p = filepath.Join(p, "*.jsonl")
			}
			var marks []string
			switch s.SelectedBy {
			case ingest.SelectedVariable:
				marks = append(marks, s.Variable)
			case ingest.SelectedConfig:
				marks = append(marks, "config store "+s.Label)
			}
			switch ingest.DefaultRootState(r.Path) {
			case ingest.RootMissing:
				marks = append(marks, "missing")
			case ingest.RootUnreadable:
				marks = append(marks, "unreadable") // e.g. a parent of mode 000: not a missing root
			}
			if len(marks) > 0 {
				p += " (" + strings.Join(marks, ", ") + ")"
			}
			where = append(where, p)
		}
	}
	return strings.Join(where, ", ")
}

// tildePath writes a path under the home directory as ~/….
func tildePath(ios *IO, p string) string {
	if rel, err := filepath.Rel(ios.Home, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join("~", rel)
	}
	return p
}
