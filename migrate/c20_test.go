package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// c20Expected is the "migrate" part of testdata/cases/c20-whitespace-separators/expected.json.
type c20Expected struct {
	Migrate map[string]json.RawMessage `json:"migrate"`
}

type c20File struct {
	Result       string   `json:"result"`
	SHA256Before string   `json:"sha256_before"`
	SHA256After  string   `json:"sha256_after"`
	ChangedLines []int    `json:"changed_lines"`
	HeaderAfter  string   `json:"header_after"`
	AfterLines   []string `json:"after_lines"`
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCaseC20WhitespaceSeparators (finding 5): headers and entries written
// with ", " and ": " (Python json.dumps style), and with a tab after each
// colon, are upgraded with every separator byte kept: renamed keys keep
// their position and the bytes around them; the result is exactly the
// case's expected file; a second run writes nothing.
func TestCaseC20WhitespaceSeparators(t *testing.T) {
	src := filepath.Join(casesDir, "c20-whitespace-separators")
	raw, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp c20Expected
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	root := copyTree(t, src)
	os.Remove(filepath.Join(root, "expected.json"))
	before := snapshot(t, root)
	out := runMigrate(t, root, nil)
	n := 0
	for name, msg := range exp.Migrate {
		var want c20File
		if json.Unmarshal(msg, &want) != nil || want.Result == "" {
			continue // "second_run"
		}
		n++
		if got := sha(before[name].data); got != want.SHA256Before {
			t.Errorf("%s: input sha256 %s, want %s", name, got, want.SHA256Before)
		}
		r := out.results[name]
		if r.Result != want.Result {
			t.Errorf("%s: result %s (%s %s), want %s", name, r.Result, r.Reason, r.Detail, want.Result)
			continue
		}
		got, _ := os.ReadFile(filepath.Join(root, name))
		wantBytes := []byte(strings.Join(want.AfterLines, "\n") + "\n")
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: migrated bytes differ\n got: %q\nwant: %q", name, got, wantBytes)
		}
		if sha(got) != want.SHA256After {
			t.Errorf("%s: sha256 after %s, want %s", name, sha(got), want.SHA256After)
		}
		gotLines := strings.Split(string(got), "\n")
		if gotLines[0] != want.HeaderAfter {
			t.Errorf("%s: header %q, want %q", name, gotLines[0], want.HeaderAfter)
		}
		origLines := strings.Split(string(before[name].data), "\n")
		var changed []int
		for i := range gotLines {
			if i >= len(origLines) || gotLines[i] != origLines[i] {
				changed = append(changed, i+1)
			}
		}
		if !slicesEqual(changed, want.ChangedLines) {
			t.Errorf("%s: changed lines %v, want %v", name, changed, want.ChangedLines)
		}
	}
	if n != 3 {
		t.Fatalf("%d files in expected.json, want 3", n)
	}
	mid := snapshot(t, root)
	again := runMigrate(t, root, nil)
	for name, r := range again.results {
		if r.Result != ResultCurrent {
			t.Errorf("second run: %s %s, want current", name, r.Result)
		}
	}
	if !equalSnap(mid, snapshot(t, root)) {
		t.Errorf("second run wrote")
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
