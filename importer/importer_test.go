package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

const (
	sidA = "0a7b3c4d-1111-4e2f-8a9b-000000000001"
	sidB = "0a7b3c4d-2222-4e2f-8a9b-000000000002"
)

var mtime1 = time.Date(2025, 6, 1, 11, 0, 0, 0, time.UTC)

// piHome returns a home with one pi v3 session sidA of n entries, and its path.
func piHome(t *testing.T, n int) (home, src string) {
	home = t.TempDir()
	src = filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--", "2025-06-01T10-00-00-000Z_"+sidA+".jsonl")
	mustWrite(t, src, v3Session(sidA, n), 0o600, mtime1)
	return home, src
}

func TestImportNewThenAlreadyImported(t *testing.T) {
	home, src := piHome(t, 6)
	store := filepath.Join(t.TempDir(), "store")
	e := newEnv(t)
	srcBefore := snapshot(t, filepath.Join(home, ".pi"))

	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	r := out.byPath[src]
	want := filepath.Join(store, "--home-dev-proj--", filepath.Base(src))
	if r.Result != ResultImported || r.Target != want || r.SessionID != sidA || r.FromVersion != 3 {
		t.Fatalf("first run: %+v, want imported to %s", r, want)
	}
	if out.sum.RunID == "" || out.sum.Failed != 0 {
		t.Fatalf("summary %+v", out.sum)
	}
	got := mustRead(t, want)
	if res := validateFile(t, want); res.Status != validate.StatusCurrent || res.Entries != 6 {
		t.Fatalf("copy validates as %s with %d entries", res.Status, res.Entries)
	}
	checkUpgradedCopy(t, "copy", mustRead(t, src), got, "")
	fi, err := os.Stat(want)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(mtime1) {
		t.Errorf("copy mode %v mtime %v, want 0600 and the source's %v", fi.Mode().Perm(), fi.ModTime(), mtime1)
	}
	if d := diffSnapshots(srcBefore, snapshot(t, filepath.Join(home, ".pi"))); len(d) > 0 {
		t.Errorf("sources changed: %v", d)
	}
	journal, err := fstx.ReadJournal(out.sum.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(journal) != 1 || journal[0].Op != fstx.OpCreate || journal[0].Path != want {
		t.Fatalf("journal %+v", journal)
	}
	if h, _ := fstx.HashFile(want); h != journal[0].SHA256After {
		t.Errorf("journal sha256_after %s, file %s", journal[0].SHA256After, h)
	}

	storeBefore := snapshot(t, store)
	out2 := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	if r := out2.byPath[src]; r.Result != ResultAlreadyImported || r.Target != want || r.Reason != "" {
		t.Fatalf("second run: %+v", r)
	}
	if out2.sum.RunID != "" {
		t.Errorf("second run journaled something: %s", out2.sum.RunDir)
	}
	if d := diffSnapshots(storeBefore, snapshot(t, store)); len(d) > 0 {
		t.Errorf("second run changed the store: %v", d)
	}
}

func TestImportAlreadyImportedReserialized(t *testing.T) {
	// The agent re-serialized the store's copy (other key order, spacing,
	// number spelling, escapes): decoded-JSON equality still matches.
	home, src := piHome(t, 4)
	store := t.TempDir()
	e := newEnv(t)
	out := e.run(t, []string{src}, store, nil)
	dst := out.byPath[src].Target
	var lines []string
	for i, rec := range records(t, "copy", mustRead(t, dst)) {
		b, err := json.MarshalIndent(rec, "", "")
		if err != nil {
			t.Fatal(err)
		}
		line := strings.ReplaceAll(string(b), "\n", " ")
		if i > 0 {
			line = strings.Replace(line, "message ", `mess\u0061ge `, 1)
		}
		lines = append(lines, line)
	}
	mustWrite(t, dst, []byte(strings.Join(lines, "\r\n")+"\r\n"), 0o600, time.Time{})
	if res := validateFile(t, dst); res.Status != validate.StatusCurrent {
		t.Fatalf("re-serialized copy is %s", res.Status)
	}
	before := snapshot(t, store)
	out2 := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	if r := out2.byPath[src]; r.Result != ResultAlreadyImported {
		t.Fatalf("got %+v, want already_imported", r)
	}
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("store changed: %v", d)
	}
}

func TestImportConflict(t *testing.T) {
	home, src := piHome(t, 5)
	store := t.TempDir()
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	dst := out.byPath[src].Target

	// Same id, one entry different.
	b := bytes.Replace(mustRead(t, dst), []byte(`"message 3"`), []byte(`"message three"`), 1)
	mustWrite(t, dst, b, 0o600, mtime1)
	before := snapshot(t, store)
	out2 := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	r := out2.byPath[src]
	if r.Result != ResultConflict || r.Reason != ReasonEntriesDiffer || r.Target != dst || !strings.Contains(r.Detail, "entry 3 of 5") {
		t.Fatalf("got %+v, want conflict at entry 3", r)
	}
	if !r.Failed() || out2.sum.Failed != 1 {
		t.Errorf("a conflict must count as not imported: %+v", out2.sum)
	}
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("conflict overwrote the store: %v", d)
	}

	// Same id and entries, a different cwd in the header.
	mustWrite(t, dst, bytes.Replace(mustRead(t, src), []byte(`"cwd":"/home/dev/proj"`), []byte(`"cwd":"/elsewhere"`), 1), 0o600, mtime1)
	if r := e.run(t, []string{src}, store, nil).byPath[src]; r.Result != ResultConflict || r.Reason != ReasonHeaderDiffers {
		t.Fatalf("header difference: got %+v", r)
	}

	// A store file with the id that does not load.
	mustWrite(t, dst, append(v3Session(sidA, 5), `{"type":"message","id":"tor`...), 0o600, mtime1)
	if r := e.run(t, []string{src}, store, nil).byPath[src]; r.Result != ResultConflict || r.Reason != ReasonTargetInvalid {
		t.Fatalf("torn store copy: got %+v", r)
	}
}

func TestImportUpdatedWhenSourceGrew(t *testing.T) {
	home, src := piHome(t, 4)
	store := t.TempDir()
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	dst := out.byPath[src].Target
	before := snapshot(t, store)

	// pi kept appending after the first import.
	grown := append(v3Session(sidA, 4), entries(5, 3)...)
	mtime2 := mtime1.Add(time.Hour)
	mustWrite(t, src, grown, 0o600, mtime2)
	out2 := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	r := out2.byPath[src]
	if r.Result != ResultUpdated || r.Reason != ReasonSourceExtends || r.Target != dst {
		t.Fatalf("got %+v, want updated", r)
	}
	if r.Failed() {
		t.Error("updated counts as a failure")
	}
	checkUpgradedCopy(t, "updated copy", grown, mustRead(t, dst), "")
	if fi, _ := os.Stat(dst); !fi.ModTime().Equal(mtime2) {
		t.Errorf("updated copy mtime %v, want the source's %v", fi.ModTime(), mtime2)
	}
	journal, err := fstx.ReadJournal(out2.sum.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(journal) != 1 || journal[0].Op != fstx.OpUpdate || journal[0].SHA256Before != before[filepath.ToSlash(mustRel(t, store, dst))].sum || journal[0].Backup == "" {
		t.Fatalf("journal %+v", journal)
	}
	// A third run writes nothing; undo of the update restores the first copy.
	if r := e.run(t, []string{src}, store, nil).byPath[src]; r.Result != ResultAlreadyImported {
		t.Fatalf("third run: %+v", r)
	}
	for _, u := range e.undo(t, out2.sum.RunID) {
		if u.Result != fstx.UndoRestored {
			t.Errorf("undo: %+v", u)
		}
	}
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("undo of the update: %v", d)
	}
}

func mustRel(t *testing.T, base, p string) string {
	t.Helper()
	rel, err := filepath.Rel(base, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestImportTargetContinuesSource(t *testing.T) {
	// The user went on in Atomic: the store's copy has more entries.
	home, src := piHome(t, 4)
	store := t.TempDir()
	e := newEnv(t)
	dst := e.run(t, []string{src}, store, nil).byPath[src].Target
	mustWrite(t, dst, append(mustRead(t, dst), entries(5, 2)...), 0o600, mtime1.Add(time.Hour))
	before := snapshot(t, store)
	r := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil).byPath[src]
	if r.Result != ResultAlreadyImported || r.Reason != ReasonTargetExtends {
		t.Fatalf("got %+v", r)
	}
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("store changed: %v", d)
	}
}

func TestImportUpgradesOldStoreCopyInPlace(t *testing.T) {
	// The store already holds the session as v3 (copied by hand): same
	// entries, so it is upgraded in place, keeping its own mode and mtime.
	home, src := piHome(t, 3)
	store := t.TempDir()
	old := filepath.Join(store, "--home-dev-proj--", "custom-name.jsonl")
	mtime0 := mtime1.Add(-time.Hour)
	mustWrite(t, old, v3Session(sidA, 3), 0o640, mtime0)
	before := snapshot(t, store)
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	r := out.byPath[src]
	if r.Result != ResultUpdated || r.Reason != ReasonTargetUpgraded || r.Target != old {
		t.Fatalf("got %+v", r)
	}
	if res := validateFile(t, old); res.Status != validate.StatusCurrent {
		t.Errorf("store copy is %s", res.Status)
	}
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mtime0) {
		t.Errorf("store copy mode %v mtime %v, want its own 0640 %v", fi.Mode().Perm(), fi.ModTime(), mtime0)
	}
	if n := len(storeFiles(t, store)[sidA]); n != 1 {
		t.Errorf("%d store files hold the session", n)
	}
	e.undo(t, out.sum.RunID)
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("undo: %v", d)
	}
}

func TestImportForkLinkAcrossTheMove(t *testing.T) {
	// c07: an early-v4 fork names its parent by a path (/home/dev/.pi/…)
	// that does not exist here; the parent is found among the sources by
	// file name, and the copy links it by id.
	const parentID = "5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01"
	const forkID = "7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02"
	home := t.TempDir()
	copyTree(t, filepath.Join("..", "testdata", "cases", "c07-early-v4-and-fork-counted-once", "home"), home)
	dir := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--")
	parentSrc := filepath.Join(dir, "2025-05-01T12-00-00-000Z_"+parentID+".jsonl")
	forkSrc := filepath.Join(dir, "2025-05-02T08-00-00-000Z_"+forkID+".jsonl")
	var hdr map[string]any
	if err := json.Unmarshal(bytes.SplitN(mustRead(t, forkSrc), []byte("\n"), 2)[0], &hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hdr["parentSession"].(string)); !os.IsNotExist(err) {
		t.Fatalf("the fork's parentSession path %v must not exist for this test", hdr["parentSession"])
	}

	store := t.TempDir()
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	for _, p := range []string{parentSrc, forkSrc} {
		if r := out.byPath[p]; r.Result != ResultImported {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	forkDst := out.byPath[forkSrc].Target
	checkUpgradedCopy(t, "fork", mustRead(t, forkSrc), mustRead(t, forkDst), parentID)
	var got map[string]any
	if err := json.Unmarshal(bytes.SplitN(mustRead(t, forkDst), []byte("\n"), 2)[0], &got); err != nil {
		t.Fatal(err)
	}
	if got["parentSessionId"] != parentID || got["createdAt"] != "2025-05-02T08:00:00.000Z" || got["version"] != 4.0 {
		t.Errorf("fork header %v", got)
	}
	if _, ok := got["parentSession"]; ok {
		t.Error("parentSession kept")
	}

	// Second case: the parent was imported earlier and its pi file is gone;
	// only the fork is imported now. The parent is found in the store.
	store2 := t.TempDir()
	e2 := newEnv(t)
	if r := e2.run(t, []string{parentSrc}, store2, nil).byPath[parentSrc]; r.Result != ResultImported {
		t.Fatalf("parent: %+v", r)
	}
	if err := os.Remove(parentSrc); err != nil {
		t.Fatal(err)
	}
	r := e2.run(t, []string{filepath.Join(home, ".pi")}, store2, nil).byPath[forkSrc]
	if r.Result != ResultImported {
		t.Fatalf("fork alone: %+v", r)
	}
	checkUpgradedCopy(t, "fork alone", mustRead(t, forkSrc), mustRead(t, r.Target), parentID)

	// Without the parent anywhere, the fork is not imported (the link is
	// never dropped silently) unless --keep-unresolved-parent.
	// (A parentSession path without an id in its file name.)
	orphan := filepath.Join(t.TempDir(), "orphan.jsonl")
	mustWrite(t, orphan, bytes.Replace(mustRead(t, forkSrc), []byte(hdr["parentSession"].(string)), []byte("/gone/parent.jsonl"), 1), 0o600, mtime1)
	store3 := t.TempDir()
	e3 := newEnv(t)
	r = e3.run(t, []string{orphan}, store3, nil).byPath[orphan]
	if r.Result != ResultSkipped || r.Reason != upgrade.ReasonUnresolvedParent || !r.Failed() {
		t.Fatalf("unresolved: %+v", r)
	}
	r = e3.run(t, []string{orphan}, store3, func(o *Options) { o.KeepUnresolvedParent = true }).byPath[orphan]
	if r.Result != ResultImported {
		t.Fatalf("--keep-unresolved-parent: %+v", r)
	}
	if res := validateFile(t, r.Target); res.Header.ParentSession != "/gone/parent.jsonl" {
		t.Errorf("kept parentSession %q", res.Header.ParentSession)
	}
}

func TestImportDuplicatesAcrossSources(t *testing.T) {
	type tc struct {
		name      string
		pi, prime []byte
		want      map[string]string // "pi"/"prime" → result
		entries   int               // entries of the store's copy (0: none)
	}
	long := v3Session(sidB, 6)
	short := v3Session(sidB, 4)
	other := bytes.Replace(v3Session(sidB, 6), []byte(`"message 5"`), []byte(`"message V"`), 1)
	for _, c := range []tc{
		{"identical", long, long, map[string]string{"pi": ResultImported, "prime": ResultDuplicate}, 6},
		{"prime is a prefix", long, short, map[string]string{"pi": ResultImported, "prime": ResultDuplicate}, 6},
		{"pi is a prefix", short, long, map[string]string{"pi": ResultDuplicate, "prime": ResultImported}, 6},
		{"different", long, other, map[string]string{"pi": ResultConflict, "prime": ResultConflict}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			paths := map[string]string{
				"pi":    filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--", "2025-06-01T10-00-00-000Z_"+sidB+".jsonl"),
				"prime": filepath.Join(home, ".prime", "agent", "sessions", sidB+".jsonl"),
			}
			mustWrite(t, paths["pi"], c.pi, 0o600, mtime1)
			mustWrite(t, paths["prime"], c.prime, 0o644, mtime1.Add(time.Minute))
			store := filepath.Join(home, ".atomic", "agent", "sessions")
			e := newEnv(t)
			out := e.runRoots(t, DefaultSources(home), store, nil)
			for src, want := range c.want {
				r := out.byPath[paths[src]]
				if r.Result != want {
					t.Errorf("%s: %+v, want %s", src, r, want)
				}
				if want == ResultDuplicate && (r.DuplicateOf == "" || r.Failed()) {
					t.Errorf("%s: duplicate without duplicate_of, or counted as a failure: %+v", src, r)
				}
			}
			files := storeFiles(t, store)[sidB]
			if c.entries == 0 {
				if len(files) != 0 || out.sum.Failed != 2 {
					t.Fatalf("conflicting duplicates: store files %v, failed %d", files, out.sum.Failed)
				}
				return
			}
			if len(files) != 1 {
				t.Fatalf("store files %v, want one", files)
			}
			if res := validateFile(t, files[0]); res.Status != validate.StatusCurrent || res.Entries != c.entries {
				t.Errorf("store copy: %s, %d entries", res.Status, res.Entries)
			}
			// Again: both already there.
			for p, r := range e.runRoots(t, DefaultSources(home), store, nil).byPath {
				if r.Result != ResultAlreadyImported && r.Result != ResultDuplicate {
					t.Errorf("second run %s: %+v", p, r)
				}
			}
		})
	}
}

func TestImportLayoutAndNames(t *testing.T) {
	home := t.TempDir()
	prime := filepath.Join(home, ".prime", "agent", "sessions", sidA+".jsonl")
	mustWrite(t, prime, v3Session(sidA, 2), 0o644, mtime1)
	noCwd := filepath.Join(home, ".prime", "agent", "sessions", "proj", sidB+".jsonl")
	mustWrite(t, noCwd, []byte(`{"type":"session","version":3,"id":"`+sidB+`","timestamp":"2025-07-04T05:06:07.089Z"}`+"\n"+entries(1, 2)), 0o600, mtime1)

	store := t.TempDir()
	out := newEnv(t).run(t, []string{filepath.Join(home, ".prime")}, store, nil)
	if got, want := out.byPath[prime].Target, filepath.Join(store, "--home-dev-proj--", "2025-06-01T10-00-00-000Z_"+sidA+".jsonl"); got != want {
		t.Errorf("prime copy at %s, want %s", got, want)
	}
	r := out.byPath[noCwd]
	if want := filepath.Join(store, "2025-07-04T05-06-07-089Z_"+sidB+".jsonl"); r.Target != want || len(r.Notes) == 0 {
		t.Errorf("no-cwd copy: %+v, want %s with a note", r, want)
	}

	flat := t.TempDir()
	out = newEnv(t).run(t, []string{filepath.Join(home, ".prime")}, flat, func(o *Options) { o.Flat = true })
	if got, want := out.byPath[prime].Target, filepath.Join(flat, "2025-06-01T10-00-00-000Z_"+sidA+".jsonl"); got != want {
		t.Errorf("--flat: %s, want %s", got, want)
	}
}

func TestImportDryRunWritesNothing(t *testing.T) {
	home, src := piHome(t, 3)
	store := filepath.Join(t.TempDir(), "store")
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, func(o *Options) { o.DryRun = true })
	if r := out.byPath[src]; r.Result != ResultImported || r.Target == "" || len(r.Changes) == 0 {
		t.Fatalf("dry run: %+v", r)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("dry run created the store: %v", err)
	}
	if _, err := os.Stat(e.runsDir()); !os.IsNotExist(err) {
		t.Errorf("dry run created a run directory: %v", err)
	}
}

func TestImportSkipsInvalidAndStoreFiles(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".pi", "agent", "sessions", "--x--")
	torn := filepath.Join(dir, "torn.jsonl")
	mustWrite(t, torn, append(v3Session(sidA, 2), `{"type":"mess`...), 0o600, mtime1)
	empty := filepath.Join(dir, "empty.jsonl")
	mustWrite(t, empty, nil, 0o600, mtime1)
	future := filepath.Join(dir, "future.jsonl")
	mustWrite(t, future, []byte(header(sidB, "5", "")), 0o600, mtime1)
	// The store lies inside the source tree: its files are not sources.
	store := filepath.Join(home, ".pi", "agent", "sessions", "imported")
	inStore := filepath.Join(store, "x.jsonl")
	mustWrite(t, inStore, v3Session("cccccccc-0000-4000-8000-000000000003", 1), 0o600, mtime1)

	out := newEnv(t).run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	for p, want := range map[string]string{torn: "torn", empty: "empty", future: "future_version", inStore: ReasonInTarget} {
		if r := out.byPath[p]; r.Result != ResultSkipped || r.Reason != want {
			t.Errorf("%s: %+v, want skipped %s", filepath.Base(p), r, want)
		}
	}
	if out.sum.Failed != 2 {
		t.Errorf("failed %d, want 2 (torn, future; not empty, not the store's own file)", out.sum.Failed)
	}

	// --repair repairs the copy and never the source.
	before := mustRead(t, torn)
	out = newEnv(t).run(t, []string{torn}, t.TempDir(), func(o *Options) { o.Repair = true })
	r := out.byPath[torn]
	if r.Result != ResultImported || len(r.Repairs) == 0 {
		t.Fatalf("--repair: %+v", r)
	}
	if !bytes.Equal(before, mustRead(t, torn)) {
		t.Error("--repair changed the source")
	}
	if res := validateFile(t, r.Target); res.Status != validate.StatusCurrent || res.Entries != 2 {
		t.Errorf("repaired copy: %s, %d entries", res.Status, res.Entries)
	}
}

func TestImportUndoRemovesCreatedDirectories(t *testing.T) {
	home, _ := piHome(t, 2)
	base := t.TempDir()
	store := filepath.Join(base, "new", "store")
	e := newEnv(t)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	if out.counts()[ResultImported] != 1 {
		t.Fatalf("results %v", out.results)
	}
	// A file the user added after the import keeps its directory.
	keep := filepath.Join(store, "--other--", "mine.jsonl")
	mustWrite(t, keep, v3Session(sidB, 1), 0o600, mtime1)
	e.undo(t, out.sum.RunID)
	got := snapshot(t, base)
	want := map[string]bool{".": true, "new": true, "new/store": true, "new/store/--other--": true, "new/store/--other--/mine.jsonl": true}
	for k := range got {
		if !want[k] {
			t.Errorf("left after undo: %s", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("after undo: %v", got)
	}
}

func TestTargetName(t *testing.T) {
	mt := time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	for _, c := range []struct {
		src  string
		hdr  map[string]any
		want string
	}{
		{"/x/2025-05-01T12-00-00-000Z_abc.jsonl", nil, "2025-05-01T12-00-00-000Z_abc.jsonl"},
		{"/x/abc.jsonl", map[string]any{"createdAt": "2025-05-01T12:00:00.5Z"}, "2025-05-01T12-00-00-500Z_abc.jsonl"},
		{"/x/abc.jsonl", map[string]any{"timestamp": "2025-05-01T14:00:00+02:00"}, "2025-05-01T12-00-00-000Z_abc.jsonl"},
		{"/x/2025-05-01T12-00-00-000Z_other.jsonl", map[string]any{"createdAt": "bad"}, "2024-01-02T03-04-05-006Z_abc.jsonl"},
	} {
		if got := targetName(c.src, "abc", c.hdr, mt); got != c.want {
			t.Errorf("targetName(%s, %v) = %s, want %s", c.src, c.hdr, got, c.want)
		}
	}
	for id, ok := range map[string]bool{"abc": true, "": false, "..": false, "a/b": false, `a\b`: false, strings.Repeat("x", 201): false} {
		if usableID(id) != ok {
			t.Errorf("usableID(%q) = %v", id, !ok)
		}
	}
}

func TestImportConcurrentRuns(t *testing.T) {
	// Two imports of the same sources into one store at the same time:
	// every session is created once, by exactly one run's journal, and the
	// other run reports it already imported.
	home := t.TempDir()
	var srcs []string
	for i := 0; i < 30; i++ {
		id := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", i)
		p := filepath.Join(home, ".prime", "agent", "sessions", id+".jsonl")
		mustWrite(t, p, v3Session(id, 3+i%5), 0o600, mtime1)
		srcs = append(srcs, p)
	}
	store := t.TempDir()
	e := newEnv(t)
	outs := make([]runOut, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			roots, _ := ingest.PathRoots([]string{filepath.Join(home, ".prime")})
			opts := Options{Sources: roots, Target: store, Workers: 3, RunsDir: e.runsDir(), StateDir: e.state, Lock: testLock, LockWait: 5 * time.Second}
			o := runOut{byPath: map[string]Result{}}
			sum, err := Run(context.Background(), opts, func(r Result) error {
				o.results = append(o.results, r)
				o.byPath[r.Path] = r
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			o.sum = sum
			outs[i] = o
		}()
	}
	wg.Wait()
	created := map[string]int{}
	for _, o := range outs {
		if o.sum.RunDir == "" {
			continue
		}
		journal, err := fstx.ReadJournal(o.sum.RunDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, je := range journal {
			created[je.Path]++
		}
	}
	for _, p := range srcs {
		a, b := outs[0].byPath[p].Result, outs[1].byPath[p].Result
		if !(a == ResultImported && b == ResultAlreadyImported) && !(a == ResultAlreadyImported && b == ResultImported) {
			t.Errorf("%s: %s and %s", filepath.Base(p), a, b)
		}
	}
	files := storeFiles(t, store)
	if len(files) != len(srcs) {
		t.Errorf("%d sessions in the store, want %d", len(files), len(srcs))
	}
	for id, ps := range files {
		if len(ps) != 1 || created[ps[0]] != 1 {
			t.Errorf("session %s: files %v, journaled %d times", id, ps, created[ps[0]])
		}
	}
}

func TestImportRereadsAChangingSource(t *testing.T) {
	// pi appends while the session is being imported: the copy is not
	// renamed into place, the source is read again and the copy holds the
	// appended entries. A source that never stops changing fails after
	// three reads, leaving nothing behind.
	home, src := piHome(t, 3)
	store := t.TempDir()
	appends := 0
	grow := func(max int) func([]string) {
		return func(paths []string) {
			if appends < max {
				appends++
				b := append(mustRead(t, src), entries(4+appends-1, 1)...)
				mustWrite(t, src, b, 0o600, mtime1.Add(time.Duration(appends)*time.Second))
			}
		}
	}
	defer func(f func([]string)) { afterRead = f }(afterRead)

	afterRead = grow(1)
	out := newEnv(t).run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	r := out.byPath[src]
	if r.Result != ResultImported || appends != 1 {
		t.Fatalf("got %+v after %d appends", r, appends)
	}
	checkUpgradedCopy(t, "copy", mustRead(t, src), mustRead(t, r.Target), "")
	if journal, _ := fstx.ReadJournal(out.sum.RunDir); len(journal) != 1 {
		t.Errorf("journal %+v", journal)
	}

	store2 := t.TempDir()
	appends = 0
	afterRead = grow(100)
	out = newEnv(t).run(t, []string{src}, store2, nil)
	if r := out.byPath[src]; r.Result != ResultFailed || r.Reason != ReasonChanged || appends != maxAttempts {
		t.Fatalf("got %+v after %d appends", r, appends)
	}
	if got := snapshot(t, store2); len(got) != 1 { // the store itself, empty
		t.Errorf("store after a failed import: %v", got)
	}
}

func TestImportUpdateWaitsForTheAgentLock(t *testing.T) {
	// The agent holds its lock on the store's copy: the update fails as
	// locked and the copy is left alone.
	home, src := piHome(t, 2)
	store := t.TempDir()
	e := newEnv(t)
	dst := e.run(t, []string{src}, store, nil).byPath[src].Target
	mustWrite(t, src, append(mustRead(t, src), entries(3, 2)...), 0o600, mtime1.Add(time.Hour))
	lockDir, err := fstx.LockPath(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, store)
	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	if r := out.byPath[src]; r.Result != ResultFailed || r.Reason != ReasonLocked || !r.Failed() {
		t.Fatalf("got %+v, want failed/locked", r)
	}
	if d := diffSnapshots(before, snapshot(t, store)); len(d) > 0 {
		t.Errorf("store changed under the agent's lock: %v", d)
	}
	if err := os.Remove(lockDir); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, []string{src}, store, nil).byPath[src]; r.Result != ResultUpdated {
		t.Fatalf("after the agent released its lock: %+v", r)
	}
}

func TestImportRerunImportsOnlyNewSessions(t *testing.T) {
	home, src := piHome(t, 3)
	store := t.TempDir()
	e := newEnv(t)
	e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	before := snapshot(t, store)
	newer := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-other--", "2025-06-02T10-00-00-000Z_"+sidB+".jsonl")
	mustWrite(t, newer, []byte(strings.Replace(string(v3Session(sidB, 2)), "/home/dev/proj", "/home/dev/other", 1)), 0o600, mtime1)

	out := e.run(t, []string{filepath.Join(home, ".pi")}, store, nil)
	if r := out.byPath[src]; r.Result != ResultAlreadyImported {
		t.Errorf("old session: %+v", r)
	}
	r := out.byPath[newer]
	if want := filepath.Join(store, "--home-dev-other--", filepath.Base(newer)); r.Result != ResultImported || r.Target != want {
		t.Fatalf("new session: %+v", r)
	}
	journal, err := fstx.ReadJournal(out.sum.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(journal) != 1 || journal[0].Path != r.Target {
		t.Errorf("journal %+v, want only the new session", journal)
	}
	after := snapshot(t, store)
	for k, st := range before {
		if !same(st, after[k]) {
			t.Errorf("%s changed", k)
		}
	}
}

// TestImportRepairSaysSourceKeepsFragment: an import never modifies its
// source and backs up only store files it replaces, so a repair that leaves
// bytes out of the copy says the source keeps them (not "the backup"), in
// the result and in the journal.
func TestImportRepairSaysSourceKeepsFragment(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "torn.jsonl")
	mustWrite(t, src, []byte(header("dddddddd-0000-4000-8000-000000000004", "3", "")+entries(1, 2)+`{"type":"message","id":"e9`), 0o600, time.Now())
	e := newEnv(t)
	out := e.run(t, []string{src}, t.TempDir(), func(o *Options) { o.Repair = true })
	r := out.byPath[src]
	if r.Result != ResultImported || len(r.Repairs) != 1 {
		t.Fatalf("%+v", r)
	}
	if what := r.Repairs[0].What; !strings.Contains(what, "the source file keeps it") || strings.Contains(what, "backup") {
		t.Errorf("repair message %q", what)
	}
	entries, err := fstx.ReadJournal(out.sum.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || len(entries[0].Repairs) != 1 || strings.Contains(entries[0].Repairs[0], "backup") {
		t.Errorf("journal: %+v", entries)
	}
}
