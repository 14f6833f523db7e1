package migrate

import (
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/validate"
)

// TestEncodeCwd: the per-cwd directory names pi gives Unix and Windows
// working directories (its rule: drop one leading '/' or '\', then each of
// '/', '\', ':' becomes '-'); the expected names are worked out by hand
// from that rule.
func TestEncodeCwd(t *testing.T) {
	for _, c := range []struct{ cwd, want string }{
		{"/home/ann/proj", "--home-ann-proj--"},
		{"/", "----"},
		{"//srv/x", "---srv-x--"},
		{`C:\Users\ann\proj`, "--C--Users-ann-proj--"},
		{"C:/Users/ann/proj", "--C--Users-ann-proj--"},
		{`c:\`, "--c----"},
		{`\\srv\share\proj`, "---srv-share-proj--"},
		{`\Users\ann`, "--Users-ann--"},
		{"relative/dir", "--relative-dir--"},
		{"/home/ann/a:b", "--home-ann-a-b--"},
		{"/home/ann/über proj", "--home-ann-über proj--"},
	} {
		if got := EncodeCwd(c.cwd); got != c.want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
}

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
