package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// TestLateAppendsKeepTheirOrder (finding 6): a writer that takes no lock
// (pi) appends line A during the rename — it lands on the old inode — and
// then line B, which lands on the new file. Both are kept, and in the
// order they were appended: A at the old end of the file, then B.
func TestLateAppendsKeepTheirOrder(t *testing.T) {
	root := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
	p := filepath.Join(root, "session.jsonl")
	lineA := `{"type":"custom","id":"late0001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","customType":"a"}` + "\n"
	lineB := `{"type":"custom","id":"late0002","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","customType":"b"}` + "\n"
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	saved := fstx.Faults.Rename
	defer func() { fstx.Faults.Rename = saved }()
	var old *os.File
	fstx.Faults.Rename = func(from, to string) error {
		if filepath.Base(to) != "session.jsonl" || old != nil {
			return saved(from, to)
		}
		// The writer opened the file just before the rename...
		var err error
		if old, err = os.OpenFile(to, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			return err
		}
		if err := saved(from, to); err != nil {
			return err
		}
		// ...writes A after it (to the old inode), then appends B by path.
		if _, err := old.WriteString(lineA); err != nil {
			return err
		}
		old.Close()
		appendTo(to, lineB)
		return nil
	}
	out := runMigrate(t, root, nil)
	if r := out.results["session.jsonl"]; r.Result != ResultUpgraded {
		t.Fatalf("%+v", r)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), lineA+lineB) {
		t.Errorf("the file does not end with A then B:\n%s", got)
	}
	if strings.Count(string(got), lineA) != 1 || strings.Count(string(got), lineB) != 1 {
		t.Errorf("a late line lost or doubled:\n%s", got)
	}
}
