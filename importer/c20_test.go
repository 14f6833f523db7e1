package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/validate"
)

// TestCaseC20Import (finding 5): sessions written with ", " / ": " and tab
// separators are imported (exit 0, all three), the copies are v4 with every
// separator byte kept — byte for byte the case's expected in-place result —
// found in the store by their header ids, and the sources are unchanged.
func TestCaseC20Import(t *testing.T) {
	src := filepath.Join("..", "testdata", "cases", "c20-whitespace-separators")
	raw, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Migrate map[string]json.RawMessage `json:"migrate"`
		Import  struct {
			Results map[string]string `json:"results"`
		} `json:"import"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	sources := filepath.Join(home, "sources")
	copyTree(t, src, sources)
	os.Remove(filepath.Join(sources, "expected.json"))
	before := snapshot(t, sources)
	target := filepath.Join(home, "store")
	e := newEnv(t)
	out := e.run(t, []string{sources}, target, nil)
	if len(out.results) != len(exp.Import.Results) {
		t.Fatalf("results %+v, want %d", out.results, len(exp.Import.Results))
	}
	for _, r := range out.results {
		name := filepath.Base(r.Path)
		if want := exp.Import.Results[name]; r.Result != want {
			t.Errorf("%s: %s (%s %s), want %s", name, r.Result, r.Reason, r.Detail, want)
		}
	}
	if d := diffSnapshots(before, snapshot(t, sources)); len(d) > 0 {
		t.Errorf("sources changed: %v", d)
	}
	store := storeFiles(t, target)
	for name, msg := range exp.Migrate {
		var want struct {
			Result     string   `json:"result"`
			AfterLines []string `json:"after_lines"`
		}
		if json.Unmarshal(msg, &want) != nil || want.Result == "" {
			continue
		}
		var hdr struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(want.AfterLines[0]), &hdr); err != nil {
			t.Fatal(err)
		}
		files := store[hdr.ID]
		if len(files) != 1 {
			t.Errorf("%s: store files for %s: %v", name, hdr.ID, files)
			continue
		}
		if res := validateFile(t, files[0]); res.Status != validate.StatusCurrent {
			t.Errorf("%s: store copy is %s", name, res.Status)
		}
		if got := string(mustRead(t, files[0])); got != strings.Join(want.AfterLines, "\n")+"\n" {
			t.Errorf("%s: store copy differs from the expected upgrade\n got: %q\nwant: %q", name, got, strings.Join(want.AfterLines, "\n")+"\n")
		}
	}
}
