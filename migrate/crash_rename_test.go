package migrate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/validate"
)

// TestSIGKILLAfterRenameKeepsMtime (issue 12 finding 3): a real `migrate`
// process, built with the faultseam tag, stops right after the rename that
// publishes a migrated file (before the directory fsync and anything
// else) and is killed there with SIGKILL. The file in place must already
// be the migrated one with the original's mtime — a crash in that window
// once left mtime = now for good — and the next run, which finds it
// current, must leave it so and finish the others with their mtimes.
func TestSIGKILLAfterRenameKeepsMtime(t *testing.T) {
	bin := testkit.BuildCLI(t, "faultseam")
	base := t.TempDir()
	home, state := filepath.Join(base, "home"), filepath.Join(base, "state")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// Two files that need upgrading (v2 and v1), each with an mtime of its
	// own, set here: what the agent's "most recent" list sorts by.
	mtimes := map[string]time.Time{
		"a.jsonl": time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
		"b.jsonl": time.Date(2024, 11, 12, 13, 14, 15, 987654321, time.UTC),
	}
	for name, src := range map[string]string{"a.jsonl": "c06-v2-hook-message", "b.jsonl": "c05-v1-linear-with-compaction-index"} {
		b, err := os.ReadFile(filepath.Join(casesDir, src, "session.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtimes[name], mtimes[name]); err != nil {
			t.Fatal(err)
		}
	}
	status := func(p string) validate.Status {
		t.Helper()
		res, err := validate.File(context.Background(), &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	checkMtime := func(when, name string) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(home, name))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(mtimes[name]) {
			t.Errorf("%s: %s has mtime %v, want %v (the original's)", when, name, fi.ModTime().UTC(), mtimes[name])
		}
	}
	migrateCmd := func(env ...string) *exec.Cmd {
		cmd := exec.Command(bin, "migrate", "--json", "--workers", "1", home)
		cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+state), env...)
		return cmd
	}

	marker := filepath.Join(base, "renamed")
	cmd := migrateCmd(fstx.PauseAfterRenameEnv+"="+marker, fstx.PauseTargetEnv+"=a.jsonl")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var renamed []byte
	for len(renamed) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("migrate never reached the rename of a.jsonl:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
		renamed, _ = os.ReadFile(marker)
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got, want := strings.TrimSpace(string(renamed)), filepath.Join(home, "a.jsonl"); got != want {
		t.Fatalf("the seam paused after renaming %q, want %q", got, want)
	}
	if s := status(filepath.Join(home, "a.jsonl")); s != validate.StatusCurrent {
		t.Fatalf("after the kill a.jsonl is %s: the rename had not published the migrated file", s)
	}
	checkMtime("after SIGKILL at the rename", "a.jsonl")

	// The next run: a.jsonl is current and keeps its time; b.jsonl is
	// migrated with its own. The killed run's lock directory is stale after
	// 10 s (proper-lockfile's rule): age it rather than wait.
	old := time.Now().Add(-11 * time.Second)
	_ = os.Chtimes(filepath.Join(home, "a.jsonl.lock"), old, old)
	if b, err := migrateCmd().CombinedOutput(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, b)
	}
	for name := range mtimes {
		if s := status(filepath.Join(home, name)); s != validate.StatusCurrent {
			t.Errorf("after the next run %s is %s, want current", name, s)
		}
		checkMtime("after the next run", name)
	}
	left, _ := filepath.Glob(filepath.Join(home, "*"))
	if len(left) != len(mtimes) {
		t.Errorf("after the next run the directory holds %q, want only the two sessions", left)
	}
}
