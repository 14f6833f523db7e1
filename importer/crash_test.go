package importer

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/synth"
	"github.com/sessions-etl/sessions-etl/validate"
)

// storeState is a store snapshot for the crash test: session files only
// (this tool's temporary files and lock directories are left out).
func storeState(t *testing.T, store string) (files map[string]entryState, temps []string) {
	t.Helper()
	files = map[string]entryState{}
	for rel, st := range snapshot(t, store) {
		base := filepath.Base(rel)
		switch {
		case st.dir || strings.Contains(rel, ".lock/") || strings.HasSuffix(rel, ".lock"):
		case strings.HasPrefix(base, ingest.TempPrefix):
			temps = append(temps, rel)
		default:
			files[rel] = st
		}
	}
	return files, temps
}

// TestImportCrash kills `sessions-etl import` (a real process) with SIGKILL
// at random moments, over and over, on a home of a few hundred files whose
// store already holds some of the sessions (so that new files are created
// and existing ones replaced). After every kill each session file in the
// store is either exactly as before the import or exactly what a complete
// import produces (bytes, mode, mtime): never partial. A final run then
// completes the job and leaves no temporary file behind.
func TestImportCrash(t *testing.T) {
	work := t.TempDir()
	bin := testkit.BuildCLI(t)
	home := filepath.Join(work, "home")
	if _, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 300, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	store := DefaultTarget(home)
	before, _ := storeState(t, store)

	// What a complete import produces, on a copy of the home.
	refHome := filepath.Join(work, "ref")
	copyTree(t, home, refHome)
	refStore := DefaultTarget(refHome)
	ref := newEnv(t).runRoots(t, DefaultSources(refHome), refStore, nil)
	if ref.counts()[ResultImported] < 100 || ref.sum.ByReason[ReasonSourceExtends]+ref.sum.ByReason[ReasonTargetUpgraded] == 0 {
		t.Fatalf("reference import: %v %v", ref.counts(), ref.sum.ByReason)
	}
	want, _ := storeState(t, refStore)
	for rel, st := range want {
		if b, ok := before[rel]; ok && same(b, st) {
			continue // a store file the import leaves alone
		}
		if res := validateFile(t, filepath.Join(refStore, rel)); res.Status != validate.StatusCurrent {
			t.Fatalf("reference copy %s is %s", rel, res.Status)
		}
	}

	state := filepath.Join(work, "state")
	command := func(extra ...string) *exec.Cmd {
		args := append([]string{"import", "--quiet", "--json", "--workers", "4"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+state)
		return cmd
	}
	// How long a complete run takes, on a scratch copy of the store.
	scratch := filepath.Join(work, "scratch")
	copyTree(t, store, scratch)
	start := time.Now()
	_ = command("--to", scratch).Run()
	full := time.Since(start)
	if err := os.RemoveAll(scratch); err != nil {
		t.Fatal(err)
	}

	pristine := filepath.Join(work, "pristine")
	copyTree(t, store, pristine)
	changes := 0
	for rel, st := range want {
		if b, ok := before[rel]; !ok || !same(b, st) {
			changes++
		}
	}

	rng := rand.New(rand.NewPCG(42, testkit.Seed(t))) // the kill times; -seed replays them
	killed, partial := 0, 0
	// At least 40 kills, and more (up to 150) until 20 of them interrupted
	// a run with work left: on a loaded machine the timing shifts. With
	// -short (the inner loop), a tenth: 4 kills, up to 15 until 2 did.
	minKills, maxKills, minPartial := 40, 150, 20
	if testing.Short() {
		minKills, maxKills, minPartial = 4, 15, 2
	}
	for i := 0; i < maxKills && (i < minKills || partial < minPartial); i++ {
		cmd := command()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full) + 1)))
		if testkit.Kill(t, cmd) {
			killed++
		}
		got, temps := storeState(t, store)
		done := 0
		for rel, st := range want {
			if g, ok := got[rel]; ok && same(g, st) {
				if b, ok := before[rel]; !ok || !same(b, st) {
					done++
				}
			}
		}
		t.Logf("kill %2d: %d of %d store files as a complete import makes them, %d temporary files", i, done, changes, len(temps))
		for rel, st := range got {
			if !same(st, want[rel]) && !same(st, before[rel]) {
				t.Fatalf("after kill %d: %s is neither as before nor as a complete import makes it: %+v (want %+v or %+v)", i, rel, st, want[rel], before[rel])
			}
		}
		for rel, st := range before {
			if _, ok := got[rel]; !ok {
				t.Fatalf("after kill %d: %s (%+v) is gone", i, rel, st)
			}
		}
		if done < changes {
			partial++
		} else {
			// That run got to the end: start the next one from the original
			// store, so that every kill lands in a run with work left.
			if err := os.RemoveAll(store); err != nil {
				t.Fatal(err)
			}
			copyTree(t, pristine, store)
		}
	}
	if partial < minPartial {
		t.Errorf("only %d kills interrupted an import with work left", partial)
	}
	t.Logf("a complete run takes %v; %d runs killed", full, killed)
	if killed < minKills*3/4 {
		t.Fatalf("only %d of %d runs were killed while running (a run takes %v)", killed, minKills, full)
	}

	// A final run completes the job. A killed run may have left the agent's
	// lock on a store file being replaced: it goes stale after 10 s.
	final := command("--lock-wait", "15s")
	if err := final.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 { // 1: the home holds damaged files
			t.Fatalf("final run: %v", err)
		}
	}
	got, temps := storeState(t, store)
	if len(temps) > 0 {
		t.Errorf("temporary files left after the final run: %v", temps)
	}
	if d := diffSnapshots(want, got); len(d) > 0 {
		t.Errorf("store after the final run differs from a complete import:\n%s", strings.Join(d, "\n"))
	}
}

func same(a, b entryState) bool {
	return a.dir == b.dir && a.sum == b.sum && a.mode == b.mode && a.mtime.Equal(b.mtime)
}
