package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The "cold report vs validate vs ccusage" stages (issue 13) run, in turn
// and several rounds, `validate` over a root, `report daily` over it with
// an empty cache, and (over the pi sessions directory, when ccusage is on
// PATH) `ccusage pi daily --json --offline`: on a shared machine only
// ratios within one run mean anything, and interleaving the three exposes
// them to the same load. Each command's median wall time and median CPU
// time (user + system) are printed with the ratios report/validate and
// report/ccusage; the goal is report ≤ 1.5× validate (and so
// faster than ccusage).
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		base := filepath.Join(work, "report-vs")
		piDir := filepath.Join(home, ".pi", "agent", "sessions")
		cc := ccusageBinary()
		return []stage{
			{name: "report cold vs validate", argv: []string{"", "child:report-vs", bin, home, filepath.Join(base, "all"), "", "5"}},
			{name: "report cold vs validate vs ccusage (.pi sessions)", argv: []string{"", "child:report-vs", bin, piDir, filepath.Join(base, "pi"), cc, "5"}},
		}
	})
	childModes["report-vs"] = reportVs
}

// sample is one timed run: wall and CPU (user + system) time.
type sample struct{ wall, cpu time.Duration }

// runSample runs argv with env added; exit status 1 (damaged files)
// counts as success.
func runSample(env, argv []string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime()
		if ps.ExitCode() == 1 {
			err = nil
		}
	}
	if err != nil {
		return s, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return s, nil
}

// median of the wall and of the CPU times, each on its own.
func median(ss []sample) sample {
	w := make([]time.Duration, len(ss))
	c := make([]time.Duration, len(ss))
	for i, s := range ss {
		w[i], c[i] = s.wall, s.cpu
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return sample{wall: w[len(w)/2], cpu: c[len(c)/2]}
}

// reportVs: bin root work ccusage rounds — see the stages above.
func reportVs(args []string) error {
	bin, root, work, cc := args[0], args[1], args[2], args[3]
	rounds, err := strconv.Atoi(args[4])
	if err != nil {
		return err
	}
	cache := filepath.Join(work, "cache")
	cmds := []struct {
		name  string
		env   []string
		argv  []string
		setup func() error
	}{
		{name: "validate", argv: []string{bin, "validate", "--quiet", root}},
		{name: "report cold", env: []string{"XDG_CACHE_HOME=" + cache}, argv: []string{bin, "report", "daily", "--json", "--quiet", "--tz", "UTC", root},
			setup: func() error { return os.RemoveAll(cache) }},
	}
	if cc != "" {
		cmds = append(cmds, struct {
			name  string
			env   []string
			argv  []string
			setup func() error
		}{name: "ccusage", argv: []string{cc, "pi", "daily", "--json", "--offline", "--timezone", "UTC", "--pi-path", root}})
	}
	got := make([][]sample, len(cmds))
	for range rounds {
		for i, c := range cmds {
			if c.setup != nil {
				if err := c.setup(); err != nil {
					return err
				}
			}
			s, err := runSample(c.env, c.argv)
			if err != nil {
				return err
			}
			got[i] = append(got[i], s)
		}
	}
	med := make([]sample, len(cmds))
	var parts []string
	for i, c := range cmds {
		med[i] = median(got[i])
		parts = append(parts, fmt.Sprintf("%s %.2f/%.2f", c.name, med[i].wall.Seconds(), med[i].cpu.Seconds()))
	}
	line := fmt.Sprintf("report/validate %.2f×", ratio(med[1].wall, med[0].wall))
	if len(med) > 2 {
		line += fmt.Sprintf(", report/ccusage %.2f×", ratio(med[1].wall, med[2].wall))
	}
	line += fmt.Sprintf(" (cpu %.2f×", ratio(med[1].cpu, med[0].cpu))
	if len(med) > 2 {
		line += fmt.Sprintf(", %.2f×", ratio(med[1].cpu, med[2].cpu))
	}
	// Kept short: benchrun shows 160 characters of it.
	fmt.Printf("%s); median wall/cpu s of %d rounds: %s\n", line, rounds, strings.Join(parts, ", "))
	return nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
