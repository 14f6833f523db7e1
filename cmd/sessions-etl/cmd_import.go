package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/importer"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

func init() { registerCommand(newImportCmd) }

type importOptions struct {
	*globalOptions
	Sources              []string // SOURCE arguments; none: the pi and Prime stores
	To                   string
	Flat                 bool
	DryRun               bool
	Undo                 string
	LockWait             time.Duration
	BackupDir            string
	Repair               bool
	KeepUnresolvedParent bool
	Verbose              bool
}

const importLong = `import copies sessions into an Atomic store, upgrading each copy to
format v4 on the way; the source files are only read, never modified or locked.

SOURCEs default to the pi and Prime roots (~/.pi/agent/sessions, ~/.pi/agent/*.jsonl,
~/.prime/agent/sessions); the store defaults to ~/.atomic/agent/sessions. Copies go to
--<encoded cwd>--/<ts>_<id>.jsonl under the store (one flat directory with --flat),
through a temporary file, fsync, rename and directory fsync, with the source's
permission bits and modification time. The session id is kept, and sessions already
in the store are found by id, whatever their file names.

A SOURCE may also be a home archive (.tar, .tar.gz/.tgz, .tar.zst, .zip; members are
shown as ARCHIVE!/inner/path) or hold compressed (.zst, .gz) and oh-my-pi session files:
their decompressed content is imported, nothing is extracted beside them, and an omp
title is kept as the session's name. OpenClaw's reset and deleted archives are skipped
(archived: the live session holds the id, or the user deleted it).

Results per source file:
  imported          copied into the store as a new v4 file
  already_imported  the store holds the session with the same entries (or more)
  updated           the store's copy was replaced: the source grew since it was imported,
                    or the store held the same entries in an older format (upgraded in place)
  conflict          the store, or another source, holds the id with different entries
  duplicate         the same session, imported from another source file
  skipped           not importable (torn, corrupt, future version, not a session, …)
  failed            an error stopped the copy; the store is unchanged for it

Every file created or replaced is journaled in a run directory (replaced files are
backed up there first); "import --undo RUN" removes the files the run created (if
unchanged since) and restores the ones it replaced.

Exit status: 0 when every session is in the store (empty files are fine); 1 when any
file is a conflict, failed, or skipped for an error; 2 on usage errors.`

func newImportCmd(ios *IO, g *globalOptions, runF runFunc[importOptions]) *cobra.Command {
	opts := &importOptions{globalOptions: g}
	run := orDefault(runF, runImport)
	cmd := &cobra.Command{
		Use:   "import [SOURCE...] [--to DIR]",
		Short: "Copy legacy pi and Prime sessions into an Atomic v4 store, upgrading the copies (sources untouched)",
		Long:  importLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sources = args
			return run(cmd.Context(), opts, ios)
		},
	}
	addSourceFlag(cmd, g)
	f := cmd.Flags()
	f.StringVar(&opts.To, "to", "", "the Atomic store to import into (default ~/.atomic/agent/sessions)")
	f.BoolVar(&opts.Flat, "flat", false, "write every session directly into the store directory, not into per-cwd directories")
	f.BoolVar(&opts.DryRun, "dry-run", false, "read, compare and plan, print what would happen, write nothing")
	f.StringVar(&opts.Undo, "undo", "", "take back the import run `RUN` (a run id or run directory)")
	f.DurationVar(&opts.LockWait, "lock-wait", 0, "how long to wait for the agent's lock on a store file being replaced (e.g. 30s)")
	f.StringVar(&opts.BackupDir, "backup-dir", "", "where run directories (journal, backups) go (default: the state directory's runs/)")
	f.BoolVar(&opts.Repair, "repair", false, "repair concatenated records, a torn final fragment and a leading BOM in the copy (never in the source)")
	f.BoolVar(&opts.KeepUnresolvedParent, "keep-unresolved-parent", false, "import forks whose parent cannot be found, keeping the parentSession path")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "list every file, not only problems and updates")
	return cmd
}

// runImport is import's run: the import, or with --undo its undo.
func runImport(ctx context.Context, opts *importOptions, ios *IO) error {
	if opts.Undo != "" {
		if len(opts.Sources) > 0 {
			return usagef("--undo takes no SOURCE arguments")
		}
		return runImportUndo(ctx, opts, ios)
	}
	opt, err := importerOptions(ios, opts)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(ios.Out)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	bar := newProgress(ios, opts.globalOptions, "importing").totalFrom(ctx, opt.Sources)
	opt.Progress = bar.Add
	sum, err := importer.Run(ctx, opt, func(r importer.Result) error {
		if opts.JSON {
			return enc.Encode(struct {
				importer.Result
				PathBytes string `json:"path_bytes,omitempty"`
			}{r, pathBytes(r.Path)})
		}
		if showImportResult(r, opts) {
			printImportResult(out, r, opts.Verbose || opts.DryRun)
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
	} else {
		if !opts.Quiet {
			printImportSummary(out, sum)
		}
	}
	if sum.Failed > 0 {
		return errFailed
	}
	return nil
}

// importerOptions checks the options and turns them into
// importer.Options: the SOURCE roots, or with none the pi and Prime stores.
func importerOptions(ios *IO, opts *importOptions) (opt importer.Options, err error) {
	args := opts.Sources
	if ios.Home == "" && (len(args) == 0 || opts.To == "") {
		return opt, usagef("no home directory: give SOURCE paths and --to DIR")
	}
	if err := validSource(ios, opts.Source); err != nil {
		return opt, err
	}
	// With no SOURCE, the pi and Prime stores (SPEC.md §2.5), wherever
	// variables moved them; not Atomic's: that is the store.
	rts, err := selectRoots(ios, rootSelection{args: args, skip: []string{opts.BackupDir}, source: opts.Source,
		kinds: []string{ingest.SourcePi, ingest.SourcePrime}})
	if err != nil {
		return opt, err
	}
	opt.Sources = rts
	opt.Target = opts.To
	if opt.Target == "" {
		opt.Target = importer.DefaultTarget(ios.Home)
	}
	opt.Flat, opt.Workers, opt.DryRun = opts.Flat, opts.Workers, opts.DryRun
	opt.RunsDir, opt.StateDir, opt.LockWait = runsDir(ios, opts.BackupDir), stateDir(ios), opts.LockWait
	opt.Repair, opt.KeepUnresolvedParent, opt.Now = opts.Repair, opts.KeepUnresolvedParent, ios.Now
	return opt, nil
}

// showImportResult: problems and replacements always, new copies when
// repaired (the copy differs from the source beyond the upgrade) or in a
// dry run; everything with --verbose.
func showImportResult(r importer.Result, opts *importOptions) bool {
	switch {
	case opts.Verbose:
		return true
	case r.Failed(), r.Result == importer.ResultUpdated:
		return true
	case r.Result == importer.ResultImported:
		return opts.DryRun || len(r.Repairs) > 0
	}
	return false
}

func printImportResult(w *bufio.Writer, r importer.Result, details bool) {
	line := fmt.Sprintf("%-16s %s", r.Result, showPath(r.Path))
	if r.Target != "" && (r.Result == importer.ResultImported || r.Result == importer.ResultUpdated || details) {
		line += " → " + showPath(r.Target)
	}
	reason := r.Reason
	if r.Detail != "" {
		if reason != "" {
			reason += ": "
		}
		reason += r.Detail
	}
	if reason != "" {
		line += " (" + reason + ")"
	}
	fmt.Fprintln(w, line)
	printChanges(w, r.Repairs, r.Changes, r.Notes, details)
}

var importResultOrder = []string{importer.ResultImported, importer.ResultUpdated, importer.ResultAlreadyImported,
	importer.ResultDuplicate, importer.ResultConflict, importer.ResultSkipped, importer.ResultFailed}

func printImportSummary(w *bufio.Writer, sum importer.Summary) {
	verb := "Checked"
	if sum.DryRun {
		verb = "Dry run, nothing written: checked"
	}
	fmt.Fprintf(w, "\n%s %s (%s) for %s in %s:\n", verb, plural(sum.Files, "source file", "source files"), humanBytes(sum.Bytes), sum.Target, humanDuration(sum.Elapsed))
	for _, src := range sum.Sources() {
		var parts []string
		for _, k := range importResultOrder {
			if n := sum.BySource[src][k]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, k))
			}
		}
		fmt.Fprintf(w, "  %-7s %s\n", src, strings.Join(parts, ", "))
	}
	if sum.RunDir != "" {
		fmt.Fprintf(w, "Journal: %s\nUndo with: sessions-etl import --undo %s\n", sum.RunDir, sum.RunID)
	}
	if sum.TempsRemoved > 0 {
		fmt.Fprintf(w, "Removed %d stale temporary files left by an interrupted run.\n", sum.TempsRemoved)
	}
	if sum.Failed > 0 {
		fmt.Fprintf(w, "%s could not be imported (see above).\n", plural(sum.Failed, "file", "files"))
	}
}

func runImportUndo(ctx context.Context, opts *importOptions, ios *IO) error {
	dir, err := fstx.ResolveRun(runsDir(ios, opts.BackupDir), opts.Undo)
	if err != nil {
		return usageError{err}
	}
	return printUndo(ios, opts.JSON, opts.Verbose, dir, func(emit func(fstx.UndoResult) error) error {
		return importer.Undo(ctx, dir, fstx.UndoOptions{StateDir: stateDir(ios), LockWait: opts.LockWait, DefaultRoots: undoDefaultRoots(ios)}, emit)
	})
}
