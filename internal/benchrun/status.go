package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// The status line and dashboard stages (issue 14), both warm: the report
// database of the home is filled first (a cold `report daily`, not timed),
// then `statusline` runs 21 times — the summary gives the median and the
// 90th percentile of its wall time (goal: median under 100 ms) — and
// `dashboard` once more after a warm-up run (goal: under 2 s). Both use the
// same cache directory as `report daily` over the whole home would.
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		cache := filepath.Join(work, "status", "cache")
		fill := func() error {
			if _, err := os.Stat(cache); err == nil {
				return nil
			}
			_, _, err := timed([]string{"XDG_CACHE_HOME=" + cache}, []string{bin, "report", "daily", "--quiet", "--tz", "UTC", home})
			return err
		}
		out := filepath.Join(work, "status", "dashboard.html")
		return []stage{
			{name: "statusline warm (median of 21)", argv: []string{"", "child:statusline-median", cache, bin, home}, setup: fill},
			{name: "dashboard warm", argv: []string{"", "child:dashboard-warm", cache, bin, home, out}, setup: fill},
		}
	})
	childModes["statusline-median"] = statuslineMedian
	childModes["dashboard-warm"] = dashboardWarm
}

// statuslineMedian: cache bin home — runs the status line 21 times and
// prints the median and 90th percentile wall times and the line.
func statuslineMedian(args []string) error {
	cache, bin, home := args[0], args[1], args[2]
	env := []string{"XDG_CACHE_HOME=" + cache}
	var walls, cpus []time.Duration
	var line []byte
	for range 21 {
		cmd := exec.Command(bin, "statusline", "--no-stdin", "--tz", "UTC", home)
		cmd.Env = append(os.Environ(), env...)
		start := time.Now()
		out, err := cmd.Output()
		wall := time.Since(start)
		if err != nil {
			return fmt.Errorf("statusline: %v", err)
		}
		walls, line = append(walls, wall), out
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	for _, d := range [][]time.Duration{walls, cpus} {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	}
	// CPU time (user + system) is what a shared machine's load does not
	// inflate: the wall time of an idle machine is close to it.
	fmt.Printf("wall median %.0f ms, p90 %.0f ms; CPU median %.0f ms: %s", ms(walls[10]), ms(walls[18]), ms(cpus[10]), line)
	return nil
}

// dashboardWarm: cache bin home out — writes the dashboard twice (the
// first warms the operating system's caches) and prints the second's wall
// time and the page's size.
func dashboardWarm(args []string) error {
	cache, bin, home, out := args[0], args[1], args[2], args[3]
	env := []string{"XDG_CACHE_HOME=" + cache}
	argv := []string{bin, "dashboard", "--quiet", "--tz", "UTC", "--out", out, home}
	if _, _, err := timed(env, argv); err != nil {
		return err
	}
	_, wall, err := timed(env, argv)
	if err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("alone %.2fs, page %d KB\n", wall.Seconds(), fi.Size()/1024)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
