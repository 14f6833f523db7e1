package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden (then read them before committing)")

// goldenInputs are the sessions behind the golden files: a v1 session
// priced from the table (c05), an early-v4 fork (c07), Prime child usage
// (c13), Atomic's billed kinds with an unpriced session summary (c14), and
// the tools fixture (a fork that copies tool calls, an error, a call
// without result, a model without a price).
func goldenInputs() []string {
	return []string{
		filepath.Join(casesDir, "c05-v1-linear-with-compaction-index"),
		filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home"),
		filepath.Join(casesDir, "c13-prime-child-usage"),
		filepath.Join(casesDir, "c14-atomic-v4-billed-usage-kinds"),
		filepath.Join("testdata", "tools"),
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run Golden -update, then check the file by hand)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// TestGolden pins every output format byte for byte. The files were
// checked by hand: the numbers are the cases' expected totals (c07's fork
// copy counted once, c13's child usage, c14's unpriced session summary,
// c05 priced from the table), days in America/Los_Angeles.
func TestGolden(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.duckdb")
	la := mustLoc(t, "America/Los_Angeles")
	run := func(k Kind) *Report {
		r := runOnDB(t, k, db, goldenInputs(), func(o *Options) { o.Location = la })
		r.Zone = "America/Los_Angeles"
		return r
	}
	type form struct {
		ext       string
		format    Format
		breakdown bool
	}
	table := form{".txt", Table, false}
	extra := map[Kind][]form{
		Daily:    {{"-breakdown.txt", Table, true}, {".md", Markdown, false}, {".csv", CSV, false}, {"-breakdown.csv", CSV, true}},
		Session:  {{".csv", CSV, false}},
		Provider: {{"-breakdown.txt", Table, true}},
		Tools:    {{"-breakdown.txt", Table, true}, {"-breakdown.csv", CSV, true}},
	}
	for _, k := range Kinds {
		r := run(k)
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, string(k)+".json", b.Bytes())
		for _, f := range append([]form{table}, extra[k]...) {
			b.Reset()
			if err := r.WriteText(&b, f.format, f.breakdown); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, string(k)+f.ext, b.Bytes())
		}
	}
}

// jsonShape lists the paths of a JSON document with the type found there
// ("daily[].modelBreakdowns[].cost number"); array items share one path.
func jsonShape(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			out[path] = "object"
			for k, c := range x {
				walk(strings.TrimPrefix(path+"."+k, "."), c)
			}
		case []any:
			out[path] = "array"
			for _, c := range x {
				walk(path+"[]", c)
			}
		case string:
			out[path] = "string"
		case float64:
			out[path] = "number"
		case bool:
			out[path] = "boolean"
		case nil:
			out[path] = "null"
		}
	}
	walk("", v)
	return out
}

// TestCcusageShape: every key of ccusage's own JSON (testdata/ccusage,
// written by `ccusage pi daily|monthly|session --json` 20.0.24 over c07)
// is in ours, at the same place, with the same type, so scripts written
// for ccusage keep working.
func TestCcusageShape(t *testing.T) {
	r := map[Kind]*Report{}
	db := filepath.Join(t.TempDir(), "r.duckdb")
	dir := filepath.Join(casesDir, "c07-early-v4-and-fork-counted-once", "home")
	for _, k := range []Kind{Daily, Monthly, Session} {
		r[k] = runOnDB(t, k, db, []string{dir}, nil)
	}
	for file, k := range map[string]Kind{"pi-daily.json": Daily, "pi-monthly.json": Monthly, "pi-session.json": Session} {
		raw, err := os.ReadFile(filepath.Join("testdata", "ccusage", file))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r[k].WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		theirs, ours := jsonShape(t, raw), jsonShape(t, b.Bytes())
		var missing []string
		for path, typ := range theirs {
			if ours[path] != typ {
				missing = append(missing, path+" "+typ+" (ours: "+ours[path]+")")
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: ccusage keys missing or of another type in ours:\n%s", file, strings.Join(missing, "\n"))
		}
		if len(theirs) < 10 {
			t.Errorf("%s: only %d paths: not ccusage's output?", file, len(theirs))
		}
	}
}
