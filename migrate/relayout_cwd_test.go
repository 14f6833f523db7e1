package migrate

import (
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/validate"
)

// TestRelayoutTargetWindowsCwd: a legacy pi file whose header has a Windows
// cwd moves into one per-cwd directory, whatever system runs the move.
func TestRelayoutTargetWindowsCwd(t *testing.T) {
	agent := filepath.Join(t.TempDir(), ".pi", "agent")
	path := filepath.Join(agent, "2025-01-01T00-00-00-000Z_s.jsonl")
	got, err := RelayoutTarget(path, validate.Header{Cwd: `C:\Users\ann\proj`, ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(agent, "sessions", "--C--Users-ann-proj--", "2025-01-01T00-00-00-000Z_s.jsonl")
	if got != want {
		t.Errorf("target %q, want %q", got, want)
	}
}
