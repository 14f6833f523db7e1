package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/synth"
)

func hashTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for rel, st := range snapshot(t, root) {
		s := sha256.Sum256(st.data)
		out[rel] = hex.EncodeToString(s[:])
	}
	return out
}

func copyHome(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestCrashSIGKILL starts `sessions-etl migrate` as a real process on a
// generated home and kills it with SIGKILL at random moments, 100 times.
// After every kill each session file must be exactly its original or
// exactly its migrated form (compared by SHA-256); a re-run must complete
// the job and leave no temporary file behind.
func TestCrashSIGKILL(t *testing.T) {
	bin := testkit.BuildCLI(t)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if _, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 60, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(home, "manifest.json"))
	orig := hashTree(t, home)

	migrateRun := func(dir, state string) *exec.Cmd {
		cmd := exec.Command(bin, "migrate", "--json", "--workers", "2", dir)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+state)
		return cmd
	}
	// The reference: a complete run on a copy gives each file's migrated form.
	ref := filepath.Join(base, "ref")
	copyHome(t, home, ref)
	start := time.Now()
	if err := migrateRun(ref, filepath.Join(base, "state-ref")).Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 { // damaged files make migrate exit 1
			t.Fatal(err)
		}
	}
	full := time.Since(start)
	migrated := hashTree(t, ref)
	changedFiles := 0
	for rel := range orig {
		if orig[rel] != migrated[rel] {
			changedFiles++
		}
	}
	if changedFiles < 20 {
		t.Fatalf("only %d files change in a migration; the test needs more", changedFiles)
	}

	rng := rand.New(rand.NewPCG(42, 7))
	// At least 100 kills, and more (up to 400) until 10 of them landed in
	// the middle of the run: on a loaded machine the timing shifts.
	// With -short (the inner loop), a tenth of the storm: 10 kills, more
	// (up to 40) until 2 landed mid-run.
	minKills, maxKills, minMixed := 100, 400, 10
	if testing.Short() {
		minKills, maxKills, minMixed = 10, 40, 2
	}
	kills := 0
	mixed := 0
	for i := 0; i < maxKills && (i < minKills || mixed < minMixed); i++ {
		kills++
		dir := filepath.Join(base, "run")
		os.RemoveAll(dir)
		copyHome(t, home, dir)
		state := filepath.Join(base, "state")
		cmd := migrateRun(dir, state)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full) + int64(5*time.Millisecond))))
		_ = cmd.Process.Signal(os.Kill)
		_ = cmd.Wait()

		now := hashTree(t, dir)
		done := 0
		for rel, h := range now {
			o, ok := orig[rel]
			if !ok {
				t.Fatalf("kill %d: unexpected file %s", i, rel)
			}
			switch h {
			case o:
			case migrated[rel]:
				done++
			default:
				t.Fatalf("kill %d: %s is neither original nor migrated", i, rel)
			}
		}
		if len(now) != len(orig) {
			t.Fatalf("kill %d: %d files, want %d", i, len(now), len(orig))
		}
		if done > 0 && done < changedFiles {
			mixed++
		}
		// Every tenth kill: a re-run completes the job and cleans up. A lock
		// directory the killed process left behind is stale after 10 s
		// (proper-lockfile's rule); age it instead of waiting.
		if i%10 == 9 {
			_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.IsDir() && strings.HasSuffix(p, ".lock") {
					old := time.Now().Add(-11 * time.Second)
					_ = os.Chtimes(p, old, old)
				}
				return err
			})
			_ = migrateRun(dir, state).Run()
			final := hashTree(t, dir)
			for rel, h := range final {
				if h != migrated[rel] {
					t.Fatalf("kill %d: after the re-run %s is not in its migrated form", i, rel)
				}
			}
			err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && strings.HasSuffix(p, ".tmp") {
					t.Errorf("kill %d: temporary file left after the re-run: %s", i, p)
				}
				if err == nil && fi.IsDir() && strings.HasSuffix(p, ".lock") {
					t.Errorf("kill %d: lock directory left after the re-run: %s", i, p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if mixed < minMixed {
		t.Errorf("only %d of %d kills landed mid-run; the timing needs adjusting", mixed, kills)
	}
	t.Logf("%d kills, %d mid-run (full run %v, %d files change)", kills, mixed, full, changedFiles)
}
