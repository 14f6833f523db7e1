package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/synth"
)

func init() { registerCommand(newSynthCmd) }

type synthOptions struct {
	*globalOptions
	Out      string
	Sessions int
	Seed     uint64
	Size     string
	// Subagents adds pi sessions running subagents (roll-ups and child files).
	Subagents bool
	Profile   string
	Machines  int
}

const synthLong = `synth writes a sample home (DIR/.pi, DIR/.atomic, DIR/.prime) of session files in
every format version, with forks, branches, compactions, large tool results, a few
damaged files, and DIR/manifest.json giving each file's expected verdict and the
expected usage totals. The same --seed and options give byte-identical output.

--size accepts plain bytes or a unit: 200MB, 1GB, 1GiB.

--subagents adds pi sessions that run subagents: the parent's tool result rolls up
its children's spend (usage; its details, or the tool call, name the children in
each link style sessions-etl recognises, parallel runs of several children
included) and each child's own session file points back at the parent; about a
third of the runs' child files are left out, as when one was deleted or not
synced, and about half of the parallel runs have only some of their children
written. The manifest counts that spend once (the child's records when its
file is there, else the roll-up, or for a parallel run read in part the
missing children's parts of it) and lists every run under "subagent_runs".
Without it the home is byte-identical to one generated before the option existed.

--profile changes the home's shape (the default is the shape above):
  usage-dense    about 3x the billed records per byte, 3x the forks, many
                 branched sessions, some 5 MB image lines
  content-heavy  6x the bytes per session in few turns: huge tool outputs
  many-tiny      sessions of 1-8 KB, no images
  fork-heavy     forks are 40% of the files, many forks of forks`

func newSynthCmd(ios *IO, g *globalOptions, runF runFunc[synthOptions]) *cobra.Command {
	opts := &synthOptions{globalOptions: g}
	run := orDefault(runF, runSynth)
	cmd := &cobra.Command{
		Use:   "synth --out DIR [--sessions N] [--seed S] [--size BYTES] [--profile NAME] [--subagents]",
		Short: "Generate a realistic, deterministic sample home of pi / Atomic / Prime sessions",
		Long:  synthLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "directory to create (must not exist or be empty)")
	f.IntVar(&opts.Sessions, "sessions", 200, "number of session files to plan (approximate: the manifest lists those written)")
	f.Uint64Var(&opts.Seed, "seed", 1, "random seed")
	f.StringVar(&opts.Size, "size", "0", "target total size of the session files (0 = natural size)")
	f.BoolVar(&opts.Subagents, "subagents", false, "add pi sessions that run subagents: each parent's tool result rolls up its child's spend, the child's own file points back, about a third of the child files left out, some parallel runs' children written in part (the manifest counts that spend once)")
	f.IntVar(&opts.Machines, "machines", 0, "write N machine homes (OUT/machine-01, …) that overlap as a team's do: one home's files dealt to the machines, about one in four also synced to a second (forks and, with --subagents, subagent children land apart from their parents); OUT/team.json gives the union's counted usage")
	f.StringVar(&opts.Profile, "profile", "default", "shape of the home: default, usage-dense, content-heavy, many-tiny or fork-heavy")
	return cmd
}

// runSynth is synth's run: a home (or with --machines a team of them)
// written to opts.Out, unless it already holds the same home.
func runSynth(ctx context.Context, opts *synthOptions, ios *IO) error {
	if opts.Out == "" {
		return usagef("--out DIR is required")
	}
	size, err := parseSize(opts.Size)
	if err != nil {
		return usageError{err}
	}
	profile, err := synth.ParseProfile(opts.Profile)
	if err != nil {
		return usageError{err}
	}
	so := synth.Options{Out: opts.Out, Sessions: opts.Sessions, Seed: opts.Seed, Size: size, Workers: opts.Workers,
		Subagents: opts.Subagents, Profile: profile}
	if opts.Machines > 0 {
		return runSynthTeam(ctx, opts, so, ios)
	}
	// The same home asked for again: keep it (generation is deterministic).
	if m, err := synth.LoadManifest(filepath.Join(opts.Out, "manifest.json")); err == nil &&
		m.Seed == opts.Seed && m.Sessions == opts.Sessions && m.Size == size && m.Subagents == opts.Subagents && m.Profile == profile {
		if !opts.Quiet {
			fmt.Fprintf(ios.Out, "%s already holds this home (%s, %s); nothing to do\n", opts.Out, plural(len(m.Files), "JSONL file", "JSONL files"), humanBytes(m.Bytes))
		}
		return nil
	}
	if opts.Sessions < 1 {
		return usagef("--sessions must be at least 1")
	}
	if ents, err := os.ReadDir(opts.Out); err == nil && len(ents) > 0 {
		return usagef("--out %s is not empty and holds no home generated with these options: choose a new or empty directory", opts.Out)
	}
	m, err := synth.Generate(ctx, so)
	if err != nil {
		return err
	}
	if !opts.Quiet {
		// --sessions is a target (a fork planned on a v1 session is
		// dropped): say what was written.
		fmt.Fprintf(ios.Out, "Wrote %s (%s) to %s (--sessions %d is a target: forks, copies, damaged files and one non-session JSONL file count toward it, and forks of v1 sessions are dropped); expected verdicts and usage: %s\n",
			plural(len(m.Files), "JSONL file", "JSONL files"), humanBytes(m.Bytes), opts.Out, opts.Sessions, filepath.Join(opts.Out, "manifest.json"))
	}
	return nil
}

// runSynthTeam writes opts.Machines machine homes into an empty opts.Out.
func runSynthTeam(ctx context.Context, opts *synthOptions, so synth.Options, ios *IO) error {
	if opts.Sessions < 1 {
		return usagef("--sessions must be at least 1")
	}
	if ents, err := os.ReadDir(opts.Out); err == nil && len(ents) > 0 {
		return usagef("--out %s is not empty: choose a new or empty directory", opts.Out)
	}
	tm, err := synth.GenerateTeam(ctx, so, opts.Machines)
	if err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(ios.Out, "Wrote %d machine homes (%s, %s in one home, spread with synced copies) to %s; the union's counted usage: %s\n",
			len(tm.Machines), plural(len(tm.Home.Files), "JSONL file", "JSONL files"), humanBytes(tm.Home.Bytes), opts.Out,
			filepath.Join(opts.Out, synth.TeamManifestFile))
	}
	return nil
}

// parseSize reads "1073741824", "200MB", "1GB", "1GiB" (decimal and binary units).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	for _, u := range units {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			var v float64
			if _, err := fmt.Sscanf(s[:len(s)-len(u.suffix)], "%g", &v); err != nil || v < 0 {
				return 0, fmt.Errorf("--size %q: not a size", s)
			}
			return int64(v * float64(u.mult)), nil
		}
	}
	var v int64
	if _, err := fmt.Sscanf(s, "%d", &v); err != nil || v < 0 {
		return 0, fmt.Errorf("--size %q: not a size", s)
	}
	return v, nil
}
