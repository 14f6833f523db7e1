package migrate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

const casesDir = "../testdata/cases"

// TestCasesMigrate runs migrate over a copy of every shared case and checks
// each file's expected outcome (testdata/cases/*/expected.json "migrate").
func TestCasesMigrate(t *testing.T) {
	root := copyTree(t, casesDir)
	before := snapshot(t, root)
	out := runMigrate(t, root, nil)
	after := snapshot(t, root)

	untouched := []string{
		"c01-torn-final-record/session.jsonl",
		"c03-future-version/session.jsonl",
		"c04-unrecognized-versions/fraction.jsonl", "c04-unrecognized-versions/null.jsonl",
		"c04-unrecognized-versions/string.jsonl", "c04-unrecognized-versions/zero.jsonl",
		"c10-bom-before-header/session.jsonl",
		"c11-structural-errors/cycle.jsonl", "c11-structural-errors/dangling-parent.jsonl",
		"c11-structural-errors/duplicate-header.jsonl", "c11-structural-errors/duplicate-id.jsonl",
		"c12-corrupt-middle-line/session.jsonl",
		"c14-atomic-v4-billed-usage-kinds/session.jsonl",
		"c15-empty-and-header-only/empty.jsonl",
		"c16-concatenated-records/session.jsonl",
		"c19-unresolved-parent/session.jsonl",
	}
	for _, f := range untouched {
		b, a := before[f], after[f]
		if !bytes.Equal(b.data, a.data) || !b.mtime.Equal(a.mtime) {
			t.Errorf("%s: modified (bytes equal %v, mtime %v → %v), want byte-identical with the same mtime", f, bytes.Equal(b.data, a.data), b.mtime, a.mtime)
		}
	}
	wantResult := map[string]string{
		"c01-torn-final-record/session.jsonl":               "skipped:torn",
		"c03-future-version/session.jsonl":                  "skipped:future_version",
		"c04-unrecognized-versions/string.jsonl":            "skipped:unrecognized_version",
		"c10-bom-before-header/session.jsonl":               "skipped:not_session",
		"c11-structural-errors/cycle.jsonl":                 "skipped:corrupt",
		"c12-corrupt-middle-line/session.jsonl":             "skipped:corrupt",
		"c14-atomic-v4-billed-usage-kinds/session.jsonl":    "current:",
		"c15-empty-and-header-only/empty.jsonl":             "skipped:empty",
		"c15-empty-and-header-only/header-only.jsonl":       "upgraded:",
		"c16-concatenated-records/session.jsonl":            "skipped:corrupt",
		"c19-unresolved-parent/session.jsonl":               "skipped:unresolved_parent",
		"c05-v1-linear-with-compaction-index/session.jsonl": "upgraded:",
		"c06-v2-hook-message/session.jsonl":                 "upgraded:",
		"c09-crlf-line-endings/session.jsonl":               "upgraded:",
		"c17-unknown-entry-type/session.jsonl":              "upgraded:",
		"c18-mixed-v1/session.jsonl":                        "upgraded:",
	}
	for f, want := range wantResult {
		r := out.results[f]
		if got := r.Result + ":" + r.Reason; got != want {
			t.Errorf("%s: result %s, want %s (%s)", f, got, want, r.Detail)
		}
	}
	// Every upgraded file: same values plus the documented changes, mode and mtime kept.
	for f, r := range out.results {
		if r.Result != ResultUpgraded {
			continue
		}
		b, a := before[f], after[f]
		checkEquivalent(t, f, b.data, a.data)
		if !b.mtime.Equal(a.mtime) {
			t.Errorf("%s: mtime %v → %v, want kept", f, b.mtime, a.mtime)
		}
		if b.mode != a.mode {
			t.Errorf("%s: mode %v → %v, want kept", f, b.mode, a.mode)
		}
	}

	t.Run("c02 final newline added, last record intact", func(t *testing.T) {
		f := "c02-final-record-without-newline/session.jsonl"
		a := after[f].data
		if !bytes.HasSuffix(a, []byte("}}\n")) || bytes.Count(a, []byte("\n")) != 3 {
			t.Errorf("migrated c02 ends %q", a[len(a)-20:])
		}
	})
	t.Run("c05 ids and firstKeptEntryId", func(t *testing.T) {
		vals, _ := records(t, after["c05-v1-linear-with-compaction-index/session.jsonl"].data)
		if vals[0]["version"] != json.Number("4") || vals[0]["createdAt"] != "2025-06-01T10:00:00.000Z" {
			t.Errorf("header %v", vals[0])
		}
		if _, ok := vals[0]["timestamp"]; ok {
			t.Errorf("header still has timestamp")
		}
		if len(vals) != 7 {
			t.Fatalf("%d records", len(vals))
		}
		comp := vals[5]
		if comp["firstKeptEntryId"] != vals[4]["id"] {
			t.Errorf("firstKeptEntryId %v, want the id of line 5 (%v)", comp["firstKeptEntryId"], vals[4]["id"])
		}
		if _, ok := comp["firstKeptEntryIndex"]; ok {
			t.Errorf("firstKeptEntryIndex still present")
		}
		// deterministic across runs and copies
		again := copyTree(t, filepath.Join(casesDir, "c05-v1-linear-with-compaction-index"))
		runMigrate(t, again, nil)
		b2, _ := os.ReadFile(filepath.Join(again, "session.jsonl"))
		if !bytes.Equal(b2, after["c05-v1-linear-with-compaction-index/session.jsonl"].data) {
			t.Errorf("a second migration of a copy produced different bytes")
		}
	})
	t.Run("c06 hookMessage renamed, lines 2 and 4 byte-identical", func(t *testing.T) {
		f := "c06-v2-hook-message/session.jsonl"
		bl := strings.Split(string(before[f].data), "\n")
		al := strings.Split(string(after[f].data), "\n")
		if bl[1] != al[1] || bl[3] != al[3] {
			t.Errorf("lines 2 and 4 changed")
		}
		if !strings.Contains(al[2], `"role":"custom"`) || strings.Contains(al[2], "hookMessage") {
			t.Errorf("line 3 = %s", al[2])
		}
		if strings.Replace(bl[2], `"role":"hookMessage"`, `"role":"custom"`, 1) != al[2] {
			t.Errorf("line 3 changed beyond the role")
		}
	})
	t.Run("c07 early v4 fork", func(t *testing.T) {
		f := "c07-early-v4-and-fork-counted-once/home/.pi/agent/sessions/--home-dev-proj--/2025-05-02T08-00-00-000Z_7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02.jsonl"
		vals, _ := records(t, after[f].data)
		h := vals[0]
		if h["createdAt"] != "2025-05-02T08:00:00.000Z" || h["parentSessionId"] != "5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01" {
			t.Errorf("fork header %v", h)
		}
		for _, k := range []string{"timestamp", "parentSession"} {
			if _, ok := h[k]; ok {
				t.Errorf("fork header still has %s", k)
			}
		}
	})
	t.Run("c09 CRLF kept on every line", func(t *testing.T) {
		a := after["c09-crlf-line-endings/session.jsonl"].data
		if bytes.Count(a, []byte("\r\n")) != 3 || bytes.Count(a, []byte("\n")) != 3 {
			t.Errorf("line endings changed: %q", a)
		}
	})
	t.Run("c17 unknown entry line byte-identical", func(t *testing.T) {
		f := "c17-unknown-entry-type/session.jsonl"
		if strings.Split(string(before[f].data), "\n")[2] != strings.Split(string(after[f].data), "\n")[2] {
			t.Errorf("line 3 changed")
		}
	})
	t.Run("c18 mixed v1 keeps ids", func(t *testing.T) {
		vals, _ := records(t, after["c18-mixed-v1/session.jsonl"].data)
		if vals[1]["id"] != "j0000001" || vals[2]["id"] != "j0000002" || vals[3]["parentId"] != "j0000002" {
			t.Errorf("ids %v %v %v", vals[1]["id"], vals[2]["id"], vals[3])
		}
		if !hex8.MatchString(vals[3]["id"].(string)) {
			t.Errorf("new id %v", vals[3]["id"])
		}
	})

	// Idempotence: a second run writes nothing.
	second := runMigrate(t, root, nil)
	if n := second.sum.ByResult[ResultUpgraded]; n != 0 {
		t.Errorf("second run upgraded %d files", n)
	}
	if second.sum.RunDir != "" {
		t.Errorf("second run left a run directory %s", second.sum.RunDir)
	}
	if !equalSnap(after, snapshot(t, root)) {
		t.Errorf("second run changed files")
	}
}

func equalSnap(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v.data, w.data) || !v.mtime.Equal(w.mtime) || v.mode != w.mode {
			return false
		}
	}
	return true
}

func TestKeepUnresolvedParent(t *testing.T) {
	root := copyTree(t, filepath.Join(casesDir, "c19-unresolved-parent"))
	out := runMigrate(t, root, func(o *Options) { o.KeepUnresolvedParent = true })
	if r := out.results["session.jsonl"]; r.Result != ResultUpgraded {
		t.Fatalf("result %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(root, "session.jsonl"))
	vals, _ := records(t, b)
	h := vals[0]
	if h["parentSession"] != "/home/dev/old-machine/sessions/parent-session-export.jsonl" || h["createdAt"] != "2025-06-01T10:00:00.000Z" || h["version"] != json.Number("4") {
		t.Errorf("header %v", h)
	}
	if _, ok := h["parentSessionId"]; ok {
		t.Errorf("parentSessionId invented")
	}
}

func TestRepair(t *testing.T) {
	root := copyTree(t, casesDir)
	before := snapshot(t, root)
	out := runMigrate(t, root, func(o *Options) { o.Repair = true })
	after := snapshot(t, root)
	for f, want := range map[string]int{ // expected records after (header included)
		"c16-concatenated-records/session.jsonl": 5,
		"c01-torn-final-record/session.jsonl":    3,
		"c10-bom-before-header/session.jsonl":    3,
	} {
		r := out.results[f]
		if r.Result != ResultUpgraded || len(r.Repairs) == 0 {
			t.Errorf("%s: %+v, want upgraded with repairs", f, r)
			continue
		}
		vals, _ := records(t, after[f].data)
		if len(vals) != want {
			t.Errorf("%s: %d records after repair, want %d", f, len(vals), want)
		}
		if !bytes.HasSuffix(after[f].data, []byte("\n")) {
			t.Errorf("%s: repaired file does not end with a newline", f)
		}
	}
	// c16: line 3 split into two lines, nothing lost, then upgraded.
	bv, _ := records(t, before["c16-concatenated-records/session.jsonl"].data)
	av, _ := records(t, after["c16-concatenated-records/session.jsonl"].data)
	for i := 1; i < len(bv); i++ {
		if bv[i]["id"] != av[i]["id"] || bv[i]["type"] != av[i]["type"] {
			t.Errorf("record %d: %v vs %v", i, bv[i], av[i])
		}
	}
	if lines := strings.Count(string(after["c16-concatenated-records/session.jsonl"].data), "\n"); lines != 5 {
		t.Errorf("c16 has %d lines after repair, want 5", lines)
	}
	// Damage that is not the agent's to drop stays untouched.
	for _, f := range []string{"c12-corrupt-middle-line/session.jsonl", "c11-structural-errors/duplicate-id.jsonl", "c03-future-version/session.jsonl"} {
		if !bytes.Equal(before[f].data, after[f].data) {
			t.Errorf("%s modified by --repair", f)
		}
	}
}

func TestUndoRestoresEverything(t *testing.T) {
	root := copyTree(t, casesDir)
	before := snapshot(t, root)
	state := t.TempDir()
	out := runMigrate(t, root, func(o *Options) { o.RunsDir = filepath.Join(state, "runs"); o.StateDir = state })
	if out.sum.RunDir == "" {
		t.Fatal("no run directory")
	}
	var results []fstx.UndoResult
	err := fstx.Undo(t.Context(), out.sum.RunDir, fstx.UndoOptions{StateDir: state}, func(r fstx.UndoResult) error {
		results = append(results, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != out.sum.ByResult[ResultUpgraded] {
		t.Errorf("%d undo results for %d upgraded files", len(results), out.sum.ByResult[ResultUpgraded])
	}
	for _, r := range results {
		if r.Result != fstx.UndoRestored {
			t.Errorf("%s: %s %s", r.Path, r.Result, r.Detail)
		}
	}
	if !equalSnap(before, snapshot(t, root)) {
		t.Errorf("undo did not restore the original bytes, modes and mtimes")
	}
	// A file changed after the run is reported, not overwritten.
	out2 := runMigrate(t, root, func(o *Options) { o.RunsDir = filepath.Join(state, "runs"); o.StateDir = state })
	f := filepath.Join(root, "c06-v2-hook-message/session.jsonl")
	fh, _ := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"type":"label","id":"zz","parentId":"b0000003","timestamp":"2025-03-01T08:00:09.000Z","targetId":"b0000003","label":"x"}` + "\n")
	fh.Close()
	changed := ""
	_ = fstx.Undo(t.Context(), out2.sum.RunDir, fstx.UndoOptions{StateDir: state}, func(r fstx.UndoResult) error {
		if r.Path == f {
			changed = r.Result
		}
		return nil
	})
	if changed != fstx.UndoChanged {
		t.Errorf("undo of a file appended after the run: %q, want %s", changed, fstx.UndoChanged)
	}
	if b, _ := os.ReadFile(f); !bytes.Contains(b, []byte(`"label":"x"`)) {
		t.Errorf("the append was lost")
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	root := copyTree(t, casesDir)
	before := snapshot(t, root)
	out := runMigrate(t, root, func(o *Options) { o.DryRun = true })
	if out.sum.ByResult[ResultUpgraded] == 0 {
		t.Fatal("dry run planned no upgrade")
	}
	if !equalSnap(before, snapshot(t, root)) {
		t.Errorf("dry run modified files")
	}
	ents, _ := os.ReadDir(filepath.Dir(root))
	_ = ents
}

func TestRelayout(t *testing.T) {
	home := t.TempDir()
	legacy := filepath.Join(home, ".pi", "agent", "2025-01-02T09-00-00-000Z_7a3e1d90.jsonl")
	src, _ := os.ReadFile(filepath.Join(casesDir, "c05-v1-linear-with-compaction-index/session.jsonl"))
	os.MkdirAll(filepath.Dir(legacy), 0o755)
	os.WriteFile(legacy, src, 0o600)
	prime := filepath.Join(home, ".prime", "agent", "sessions", "svc", "old.jsonl")
	src2, _ := os.ReadFile(filepath.Join(casesDir, "c13-prime-child-usage/prime/agent/sessions/0b9d7c11-5e6f-4a8b-9c0d-1e2f3a4b5c03.jsonl"))
	os.MkdirAll(filepath.Dir(prime), 0o755)
	os.WriteFile(prime, src2, 0o600)
	state := t.TempDir()
	opts := func(o *Options) {
		o.Roots = ingest.DefaultRoots(home)
		o.Relayout = true
		o.StateDir, o.RunsDir = state, filepath.Join(state, "runs")
	}
	out := runMigrate(t, home, opts)
	wantLegacy := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--", filepath.Base(legacy))
	wantPrime := filepath.Join(home, ".prime", "agent", "sessions", "0b9d7c11-5e6f-4a8b-9c0d-1e2f3a4b5c03.jsonl")
	for _, p := range []string{wantLegacy, wantPrime} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not moved to %s: %v (%v)", p, err, out.results)
		}
	}
	for _, p := range []string{legacy, prime} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still exists", p)
		}
	}
	var undone []fstx.UndoResult
	if err := fstx.Undo(t.Context(), out.sum.RunDir, fstx.UndoOptions{StateDir: state}, func(r fstx.UndoResult) error { undone = append(undone, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(legacy); err != nil || !bytes.Equal(b, src) {
		t.Errorf("undo did not bring back the legacy file: %v %v", err, undone)
	}
	if b, err := os.ReadFile(prime); err != nil || !bytes.Equal(b, src2) {
		t.Errorf("undo did not bring back the prime file: %v", err)
	}
}

// TestLinks: a session reached through a symbolic link is rewritten at its
// target and the link stays a link; a hard-linked session is not rewritten
// (a rename would give only one of its names the new bytes).
func TestLinks(t *testing.T) {
	root := t.TempDir()
	src, _ := os.ReadFile(filepath.Join(casesDir, "c06-v2-hook-message/session.jsonl"))
	real := filepath.Join(root, "real", "a.jsonl")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, src, 0o600)
	link := filepath.Join(root, "links", "link_a.jsonl")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink("../real/a.jsonl", link); err != nil {
		t.Fatal(err)
	}
	hard1 := filepath.Join(root, "hard", "h1.jsonl")
	os.MkdirAll(filepath.Dir(hard1), 0o755)
	os.WriteFile(hard1, src, 0o600)
	hard2 := filepath.Join(root, "hard", "h2.jsonl")
	if err := os.Link(hard1, hard2); err != nil {
		t.Fatal(err)
	}
	out := runMigrate(t, filepath.Join(root, "links"), nil)
	if r := out.results["link_a.jsonl"]; r.Result != ResultUpgraded {
		t.Fatalf("link: %+v", r)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is not a link any more: %v %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(real)
	if !bytes.Contains(b, []byte(`"version":4`)) {
		t.Errorf("the link's target was not migrated")
	}
	out = runMigrate(t, filepath.Join(root, "hard"), nil)
	for _, name := range []string{"h1.jsonl", "h2.jsonl"} {
		if r, ok := out.results[name]; ok && (r.Result != ResultSkipped || r.Reason != ReasonHardLinked) {
			t.Errorf("%s: %+v, want skipped hard_linked", name, r)
		}
	}
	for _, p := range []string{hard1, hard2} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, src) {
			t.Errorf("%s changed", p)
		}
	}
}

// TestRepairThenUpgrade: repairs and upgrade edits may touch the same line
// (a v1 entry on a concatenated line gets an id; a header sharing its line
// with an entry is split and upgraded).
func TestRepairThenUpgrade(t *testing.T) {
	root := t.TempDir()
	v1 := `{"type":"session","id":"s1","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"a"}}{"type":"message","timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"user","content":"b"}}` + "\n" +
		`{"type":"message","timestamp":"2025-06-01T10:00:03.000Z","message":{"role":"user","content":"c"}}` + "\n"
	crOnly := strings.ReplaceAll(`{"type":"session","version":3,"id":"s2","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/p"}
{"type":"message","id":"m1","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"a"}}
`, "\n", "\r")
	os.WriteFile(filepath.Join(root, "v1.jsonl"), []byte(v1), 0o600)
	os.WriteFile(filepath.Join(root, "cr.jsonl"), []byte(crOnly), 0o600)
	plain := runMigrate(t, root, nil)
	if r := plain.results["cr.jsonl"]; r.Result != ResultSkipped || r.Reason != "not_session" {
		t.Errorf("CR-only file without --repair: %+v, want skipped not_session", r)
	}
	out := runMigrate(t, root, func(o *Options) { o.Repair = true })
	for _, name := range []string{"v1.jsonl", "cr.jsonl"} {
		r := out.results[name]
		if r.Result != ResultUpgraded || len(r.Repairs) == 0 {
			t.Errorf("%s: %+v, want upgraded with repairs", name, r)
		}
	}
	b, _ := os.ReadFile(filepath.Join(root, "v1.jsonl"))
	vals, _ := records(t, b)
	if len(vals) != 4 {
		t.Fatalf("v1 after repair: %d records", len(vals))
	}
	for i := 2; i < 4; i++ {
		if vals[i]["parentId"] != vals[i-1]["id"] {
			t.Errorf("record %d parentId %v, want %v", i, vals[i]["parentId"], vals[i-1]["id"])
		}
	}
}
