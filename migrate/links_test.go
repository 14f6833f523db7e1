package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// TestMigrateNeverFollowsLinkOutOfRoots (finding 2): a directory link in a
// root to another user's sessions (or `/`) must not make migrate rewrite
// them: the link is reported (link_outside_root, or symlink_cycle for an
// ancestor) and nothing outside the root changes.
func TestMigrateNeverFollowsLinkOutOfRoots(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", "sessions")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	other := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
	before := snapshot(t, other)
	if err := os.Symlink(other, filepath.Join(root, "other")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	out := runMigrate(t, root, nil)
	if !equalSnap(before, snapshot(t, other)) {
		t.Fatalf("a session outside the root was rewritten")
	}
	if r := out.results["other"]; r.Result != ResultSkipped || r.Reason != ingest.CodeLinkOutsideRoot || r.Failed() {
		t.Errorf("other: %+v, want skipped link_outside_root (not a failure)", r)
	}
	if r := out.results["up"]; r.Result != ResultSkipped || r.Reason != ingest.CodeSymlinkCycle {
		t.Errorf("up: %+v, want skipped symlink_cycle", r)
	}
	if len(out.results) != 2 {
		t.Errorf("results %+v, want only the two links", out.results)
	}
}
