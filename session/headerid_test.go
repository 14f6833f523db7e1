package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderID: the id of a header line, with spaces after the colons
// (Python's json.dumps) as without; the id after an oh-my-pi title slot;
// none for a first record that is not a header, an empty file, or a header
// beyond MaxHeaderBytes; ReadHeaderID opens regular files only.
func TestHeaderID(t *testing.T) {
	title := slot(t, `{"type":"title","v":1,"title":"Fix the build","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, `"}`) + "\n"
	for _, c := range []struct {
		name, in, id string
		slotted, ok  bool
	}{
		{"header", `{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}` + "\n", "s1", false, true},
		{"spaces", `{"type": "session", "id": "s2", "cwd": "/w"}` + "\n", "s2", false, true},
		{"no newline", `{"type":"session","id":"s3"}`, "s3", false, true},
		{"title slot", title + `{"type":"session","id":"s4"}` + "\n", "s4", true, true},
		{"entry first", `{"type":"message","id":"m1"}` + "\n" + `{"type":"session","id":"s5"}` + "\n", "", false, false},
		{"no id", `{"type":"session","cwd":"/w"}` + "\n", "", false, false},
		{"empty", "", "", false, false},
		{"too long", `{"type":"session","pad":"` + strings.Repeat("x", MaxHeaderBytes) + `","id":"s6"}` + "\n", "", false, false},
	} {
		id, slotted, ok := HeaderID(strings.NewReader(c.in))
		if id != c.id || slotted != c.slotted || ok != c.ok {
			t.Errorf("%s: HeaderID = %q %v %v, want %q %v %v", c.name, id, slotted, ok, c.id, c.slotted, c.ok)
		}
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(title+`{"type":"session","id":"s7"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, ok := ReadHeaderID(p); id != "s7" || !ok {
		t.Errorf("ReadHeaderID(file) = %q %v", id, ok)
	}
	if id, ok := ReadHeaderID(filepath.Dir(p)); ok {
		t.Errorf("ReadHeaderID(directory) = %q, want none", id)
	}
}
