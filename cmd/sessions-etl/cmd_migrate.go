package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/userdirs"
	"github.com/sessions-etl/sessions-etl/migrate"
)

func init() { registerCommand(newMigrateCmd) }

type migrateOptions struct {
	*globalOptions
	Paths                []string // PATH arguments; none: the stores
	DryRun               bool
	Undo                 string
	LockWait             time.Duration
	BackupDir            string
	NoBackup             bool
	Repair               bool
	KeepUnresolvedParent bool
	Relayout             bool
	Verbose              bool
}

const migrateLong = `migrate upgrades session files to format v4 in place, under the agent's own
lock, atomically, byte-faithful, with a backup and an undo journal.

Only files that validate as needs_upgrade are rewritten; current, torn, corrupt,
future and unrecognized files are never modified (--repair is the one opt-in
exception for damage the agent itself drops). Each file is rewritten under the
agent's own proper-lockfile lock and an advisory lock between sessions-etl
processes, through a temporary file, fsync, rename and directory fsync, with its
permission bits and modification time kept. Originals are copied into a run
directory first; "migrate --undo RUN" restores them.

Results per file: upgraded, current, skipped (with a reason), locked, failed,
and moved with --relayout. A failed move is failed (move_failed); a file
--relayout leaves in place on purpose (target exists, no cwd) is listed as
"not moved" with its reason and is not a failure.
Exit status: 0 when every file is upgraded, current or empty; 1 otherwise.`

func newMigrateCmd(ios *IO, g *globalOptions, runF runFunc[migrateOptions]) *cobra.Command {
	opts := &migrateOptions{globalOptions: g}
	run := orDefault(runF, runMigrate)
	cmd := &cobra.Command{
		Use:   "migrate [PATH...]",
		Short: "Upgrade v1, v2, v3 and early-v4 session files to v4 in place (atomic, locked, undoable)",
		Long:  migrateLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return run(cmd.Context(), opts, ios)
		},
	}
	addSourceFlag(cmd, g)
	f := cmd.Flags()
	f.BoolVar(&opts.DryRun, "dry-run", false, "validate and plan, print what would change, write nothing")
	f.StringVar(&opts.Undo, "undo", "", "restore the files of run `RUN` (a run id or run directory)")
	f.DurationVar(&opts.LockWait, "lock-wait", 0, "how long to wait for a file locked by the agent (e.g. 30s)")
	f.StringVar(&opts.BackupDir, "backup-dir", "", "where run directories (journal, backups) go (default: the state directory's runs/)")
	f.BoolVar(&opts.NoBackup, "no-backup", false, "do not copy originals before replacing them (undo is then impossible)")
	f.BoolVar(&opts.Repair, "repair", false, "also repair concatenated records, a torn final fragment and a leading BOM")
	f.BoolVar(&opts.KeepUnresolvedParent, "keep-unresolved-parent", false, "upgrade forks whose parent cannot be found, keeping the parentSession path")
	f.BoolVar(&opts.Relayout, "relayout", false, "move legacy flat pi files and Prime per-project files into the current layout")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "list every file, not only problems")
	return cmd
}

// runsDir is where migrate and import create run directories: --backup-dir,
// else the state directory's runs/.
func runsDir(ios *IO, backupDir string) string {
	if backupDir != "" {
		return backupDir
	}
	return filepath.Join(stateDir(ios), "runs")
}

// stateDir is where sessions-etl keeps run directories and lock files:
// $XDG_STATE_HOME/sessions-etl, else the system's place (userdirs.StateDir:
// ~/.local/state/sessions-etl on Linux).
func stateDir(ios *IO) string {
	return userdirs.StateDir(userdirs.Env{GOOS: runtime.GOOS, Home: ios.Home, Getenv: os.Getenv})
}

// runMigrate is migrate's run: the upgrade, or with --undo the undo of a
// run.
func runMigrate(ctx context.Context, opts *migrateOptions, ios *IO) error {
	if opts.Undo != "" {
		if len(opts.Paths) > 0 {
			return usagef("--undo takes no PATH arguments")
		}
		return runUndo(ctx, opts, ios)
	}
	rts, err := migrateRoots(ios, opts)
	if err != nil {
		return err
	}
	upgradedBy := map[string]int{} // agent → files upgraded in place outside Atomic stores
	state, runs := stateDir(ios), runsDir(ios, opts.BackupDir)
	out := bufio.NewWriter(ios.Out)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	bar := newProgress(ios, opts.globalOptions, "migrating").totalFrom(ctx, rts)
	sum, err := migrate.Run(ctx, migrate.Options{
		Roots: rts, Workers: opts.Workers, DryRun: opts.DryRun, Backup: !opts.NoBackup, RunsDir: runs,
		StateDir: state, LockWait: opts.LockWait, Repair: opts.Repair, KeepUnresolvedParent: opts.KeepUnresolvedParent,
		Relayout: opts.Relayout, Now: ios.Now, Progress: bar.Add,
	}, func(r migrate.FileResult) error {
		if a := readerAgent(r.Source); a != "" && r.Result == migrate.ResultUpgraded {
			upgradedBy[a]++
		}
		if opts.JSON {
			return enc.Encode(struct {
				migrate.FileResult
				PathBytes string `json:"path_bytes,omitempty"`
			}{r, pathBytes(r.Path)})
		}
		if !showMigrateResult(r, opts) {
			return nil
		}
		printMigrateResult(out, r, opts.DryRun, opts.Verbose)
		return nil
	})
	bar.Done()
	if err != nil {
		return err
	}
	if !opts.Quiet {
		warnUpgradedInPlace(ios, upgradedBy, opts.DryRun)
	}
	if opts.JSON {
		if err := enc.Encode(map[string]any{"summary": sum}); err != nil {
			return err
		}
	} else if !opts.Quiet {
		printMigrateSummary(out, sum, opts.Relayout)
	}
	if sum.Failed > 0 {
		return errFailed
	}
	return nil
}

// migrateRoots are the roots migrate rewrites files under: the PATHs
// (never an archive), or with none the Atomic stores (saying on stderr
// which agents' stores it leaves alone).
func migrateRoots(ios *IO, opts *migrateOptions) ([]ingest.Root, error) {
	args := opts.Paths
	if err := validSource(ios, opts.Source); err != nil {
		return nil, err
	}
	for _, a := range args {
		if ingest.IsArchivePath(a) {
			// SPEC.md §7.2: an archive is read, never rewritten.
			return nil, usagef("%s is an archive: migrate (and --relayout) rewrite files in place and never change an archive; read it with validate, export or report, or extract it first", a)
		}
	}
	// With no PATH, the stores of the agents migrate has always covered
	// (pi, Atomic, Prime, wherever variables moved them); the derivatives'
	// stores are not upgraded in place (SPEC.md §2.3a).
	rts, err := selectRoots(ios, rootSelection{args: args, skip: []string{opts.BackupDir}, source: opts.Source,
		kinds: []string{ingest.SourcePi, ingest.SourceAtomic, ingest.SourcePrime}})
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		// SPEC.md §2.3a: with no PATH, in place means Atomic stores only.
		var others []string
		rts, others = atomicRoots(rts)
		if len(others) > 0 && !opts.Quiet {
			fmt.Fprintf(ios.ErrOut, "note: migrate without PATH upgrades Atomic stores only; %s read format 3 and would lose the creation time and fork link of a v4 session: bring their sessions into Atomic with 'sessions-etl import', or name a PATH to upgrade them in place\n", strings.Join(others, " and "))
		}
	}
	return rts, nil
}

// warnUpgradedInPlace warns, per agent, of the sessions upgraded in place
// outside Atomic stores (SPEC.md §2.3a): their agent reads format 3.
func warnUpgradedInPlace(ios *IO, upgradedBy map[string]int, dryRun bool) {
	for _, a := range slices.Sorted(maps.Keys(upgradedBy)) {
		verb := "upgraded"
		if dryRun {
			verb = "would upgrade"
		}
		fmt.Fprintf(ios.ErrOut, "warning: %s %s in place that %s reads: it reads format 3, and loses their creation time and fork link ('sessions-etl import' copies them into Atomic instead)\n",
			verb, plural(upgradedBy[a], a+" session", a+" sessions"), a)
	}
}

// printMigrateSummary writes the human summary of a migrate run.
func printMigrateSummary(out *bufio.Writer, sum migrate.Summary, relayout bool) {
	verb := "Checked"
	if sum.DryRun {
		verb = "Dry run, nothing written: checked"
	}
	var parts []string
	for _, k := range []string{migrate.ResultUpgraded, migrate.ResultMoved, migrate.ResultCurrent, migrate.ResultSkipped, migrate.ResultLocked, migrate.ResultFailed} {
		if n := sum.ByResult[k]; n > 0 {
			label := k
			if sum.DryRun && k == migrate.ResultUpgraded {
				label = "to upgrade"
			} else if sum.DryRun && k == migrate.ResultMoved {
				label = "to move"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	if sum.NotMoved > 0 {
		var why []string
		for _, k := range notMovedOrder {
			if n := sum.NotMovedByReason[k]; n > 0 {
				why = append(why, fmt.Sprintf("%d %s", n, notMovedLabel[k]))
			}
		}
		parts = append(parts, fmt.Sprintf("%d not moved (%s)", sum.NotMoved, strings.Join(why, ", ")))
	}
	fmt.Fprintf(out, "\n%s %s (%s) in %s", verb, plural(sum.Files, "file", "files"), humanBytes(sum.Bytes), humanDuration(sum.Elapsed))
	if len(parts) > 0 {
		fmt.Fprintf(out, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(out, ".")
	if sum.NotMoved > 0 {
		fmt.Fprintf(out, "%s not moved (see above) %s where %s, intact: not an error.\n",
			plural(sum.NotMoved, "file", "files"), pick(sum.NotMoved == 1, "stays", "stay"), pick(sum.NotMoved == 1, "it is", "they are"))
	}
	if sum.RunDir != "" {
		fmt.Fprintf(out, "Journal and backups: %s\nUndo with: sessions-etl migrate --undo %s\n", sum.RunDir, sum.RunID)
	}
	if sum.TempsRemoved > 0 {
		fmt.Fprintf(out, "Removed %d stale temporary files left by an interrupted run.\n", sum.TempsRemoved)
	}
	if sum.Failed > 0 {
		what := "upgraded"
		if relayout {
			what = "upgraded or moved"
		}
		fmt.Fprintf(out, "%s could not be %s (see above).\n", plural(sum.Failed, "file", "files"), what)
	}
}

// atomicRoots keeps the Atomic stores of the default roots (SPEC.md
// §2.3a) and names the agents of the others that hold anything.
func atomicRoots(rts []ingest.Root) (atomic []ingest.Root, others []string) {
	seen := map[string]bool{}
	for _, r := range rts {
		if r.Source == ingest.SourceAtomic {
			atomic = append(atomic, r)
			continue
		}
		if a := readerAgent(r.Source); a != "" && !seen[a] {
			seen[a] = true
			others = append(others, a)
		}
	}
	return atomic, others
}

// readerAgent names the agent that reads a store of source when it is not
// Atomic (the agents that read format 3, SPEC.md §2.3a); "" for Atomic and
// for files of no known store.
func readerAgent(source string) string {
	switch source {
	case ingest.SourceAtomic, ingest.SourceCustom, "":
		return ""
	case ingest.SourcePi:
		return "pi"
	case ingest.SourcePrime:
		return "Prime Agent"
	}
	return source // the other pi-family stores (SPEC.md §7.1) by their label
}

// Labels of the reasons --relayout leaves a file where it is, in summary
// order.
var (
	notMovedOrder = []string{migrate.NotMovedTargetExists, migrate.NotMovedNoCwd, migrate.NotMovedNoID, migrate.NotMovedSymlink}
	notMovedLabel = map[string]string{
		migrate.NotMovedTargetExists: "target exists",
		migrate.NotMovedNoCwd:        "no cwd",
		migrate.NotMovedNoID:         "no session id",
		migrate.NotMovedSymlink:      "symbolic link",
	}
)

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// showMigrateResult: problems, repairs (they change content beyond the
// upgrade: the user must see them), moves and files --relayout did not
// move always; planned upgrades in a dry run; everything with --verbose.
func showMigrateResult(r migrate.FileResult, opts *migrateOptions) bool {
	switch {
	case opts.Verbose, len(r.Repairs) > 0, r.NotMoved != "":
		return true
	case r.Result == migrate.ResultCurrent:
		return false
	case r.Result == migrate.ResultUpgraded:
		return opts.DryRun
	}
	return true
}

func printMigrateResult(w *bufio.Writer, r migrate.FileResult, dryRun, details bool) {
	switch r.Result {
	case migrate.ResultUpgraded:
		verb := "upgraded"
		if dryRun {
			verb = "would upgrade"
		}
		from := fmt.Sprintf("v%d", r.FromVersion)
		if r.EarlyV4 {
			from = "early v4"
		}
		fmt.Fprintf(w, "%s  %s (%s → v4, %s", verb, showPath(r.Path), from, plural(r.ChangeCount, "change", "changes"))
		if len(r.Repairs) > 0 {
			fmt.Fprintf(w, ", %s", plural(len(r.Repairs), "repair", "repairs"))
		}
		if r.MovedTo != "" {
			fmt.Fprintf(w, ", moved to %s", showPath(r.MovedTo))
		}
		if r.NotMoved != "" {
			fmt.Fprintf(w, ", not moved: %s", notMovedLabel[r.NotMoved])
		}
		fmt.Fprintln(w, ")")
	default:
		reason := r.Reason
		if r.Detail != "" {
			reason += ": " + r.Detail
		}
		if r.NotMoved != "" {
			reason = "not moved: " + notMovedLabel[r.NotMoved]
		}
		if r.MovedTo != "" {
			verb := "moved to "
			if dryRun {
				verb = "would move to "
			}
			reason = verb + showPath(r.MovedTo)
		}
		if reason != "" {
			fmt.Fprintf(w, "%-9s %s (%s)\n", r.Result, showPath(r.Path), reason)
		} else {
			fmt.Fprintf(w, "%-9s %s\n", r.Result, showPath(r.Path))
		}
	}
	printChanges(w, r.Repairs, r.Changes, r.Notes, details)
}

func runUndo(ctx context.Context, opts *migrateOptions, ios *IO) error {
	dir, err := fstx.ResolveRun(runsDir(ios, opts.BackupDir), opts.Undo)
	if err != nil {
		return usageError{err}
	}
	return printUndo(ios, opts.JSON, opts.Verbose, dir, func(emit func(fstx.UndoResult) error) error {
		return fstx.Undo(ctx, dir, fstx.UndoOptions{StateDir: stateDir(ios), LockWait: opts.LockWait,
			Ops: fstx.MigrateOps, DefaultRoots: undoDefaultRoots(ios)}, emit)
	})
}
