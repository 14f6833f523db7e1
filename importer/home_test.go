package importer

import (
	"context"
	"fmt"
	"github.com/sessions-etl/sessions-etl/ingest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/synth"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// TestImportGeneratedHome is the "done when" on generated homes
// with pi, Prime and Atomic roots, imported into the home's own Atomic
// store with the default sources and target:
//   - every valid pi and Prime session exists once in the store as a
//     current v4 file that parses to the source's values plus the
//     documented upgrades (parent links resolved as the manifest says);
//   - the sources' bytes, modes and mtimes are unchanged;
//   - a second run writes nothing;
//   - undo leaves the store exactly as it was before.
func TestImportGeneratedHome(t *testing.T) {
	for _, seed := range []uint64{1, 7} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 90, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			checkGeneratedHome(t, home, m)
		})
	}
}

func checkGeneratedHome(t *testing.T, home string, m *synth.Manifest) {
	store := DefaultTarget(home)
	sourcesBefore := map[string]map[string]entryState{}
	for _, d := range []string{".pi", ".prime"} {
		sourcesBefore[d] = snapshot(t, filepath.Join(home, d))
	}
	storeBefore := snapshot(t, store)
	e := newEnv(t)

	out := e.runRoots(t, DefaultSources(home), store, nil)
	if out.sum.RunID == "" {
		t.Fatal("nothing journaled")
	}

	// Every valid pi/Prime session is in the store once, upgraded.
	ids := storeFiles(t, store)
	valid := 0
	for _, f := range m.Files {
		if (f.Source != "pi" && f.Source != "prime") || (f.Status != "needs_upgrade" && f.Status != "current") {
			continue
		}
		valid++
		src := filepath.Join(home, filepath.FromSlash(f.Path))
		r, ok := out.byPath[src]
		if !ok {
			t.Errorf("%s: no result", f.Path)
			continue
		}
		switch r.Result {
		case ResultImported, ResultUpdated, ResultAlreadyImported, ResultDuplicate:
		default:
			t.Errorf("%s (%s %s): %+v", f.Path, f.Kind, f.Variant, r)
			continue
		}
		got := ids[*f.SessionID]
		if len(got) != 1 {
			t.Errorf("%s: session %s is in %d store files: %v", f.Path, *f.SessionID, len(got), got)
			continue
		}
		if r.Target != got[0] {
			t.Errorf("%s: result names %s, the session is in %s", f.Path, r.Target, got[0])
		}
		if res := validateFile(t, got[0]); res.Status != validate.StatusCurrent {
			t.Errorf("%s: store copy %s is %s", f.Path, got[0], res.Status)
		}
		parent := ""
		if f.ParentSessionID != nil {
			parent = *f.ParentSessionID
		}
		checkUpgradedCopy(t, f.Path, mustRead(t, src), mustRead(t, got[0]), parent)
		if r.Result == ResultImported || r.Reason == ReasonSourceExtends {
			fi, err := os.Stat(got[0])
			if err != nil {
				t.Fatal(err)
			}
			want, _ := time.Parse(time.RFC3339Nano, f.Mtime)
			// A created copy takes the source's mode; an updated one keeps
			// the store file's own (SPEC.md §2.3: the original's bits).
			if !fi.ModTime().Equal(want) || r.Result == ResultImported && fmt.Sprintf("0%o", fi.Mode().Perm()) != f.Mode {
				t.Errorf("%s: copy mtime %v mode %v, want the source's %v %s", f.Path, fi.ModTime(), fi.Mode().Perm(), want, f.Mode)
			}
		}
	}
	c := out.counts()
	t.Logf("results: %v reasons: %v", c, out.sum.ByReason)
	if got := c[ResultImported] + c[ResultUpdated] + c[ResultAlreadyImported] + c[ResultDuplicate]; got != valid || valid == 0 {
		t.Errorf("%d sessions accounted for, %d valid sources: %v", got, valid, c)
	}
	for _, f := range m.Files {
		// The generator puts a prefix snapshot and a whole copy of pi
		// sessions under .atomic: the store already holds them.
		if f.Source == "atomic" && f.Special == "prefix_snapshot" && out.sum.ByReason[ReasonSourceExtends] == 0 {
			t.Errorf("%s is a prefix of a pi session: want it updated", f.Path)
		}
		if f.Source == "atomic" && f.Special == "two_roots" && f.Status == "needs_upgrade" && out.sum.ByReason[ReasonTargetUpgraded] == 0 {
			t.Errorf("%s is an old-format copy of a pi session: want it upgraded in place", f.Path)
		}
	}
	if c[ResultImported] == 0 || c[ResultFailed] != 0 || c[ResultConflict] != 0 {
		t.Errorf("results %v", c)
	}
	for _, r := range out.results {
		if r.Result == ResultSkipped && r.Reason != "empty" && r.Reason != ingest.CodeNotASessionFile && !r.Failed() {
			t.Errorf("skipped without counting as a failure: %+v", r)
		}
	}
	for d, before := range sourcesBefore {
		if diff := diffSnapshots(before, snapshot(t, filepath.Join(home, d))); len(diff) > 0 {
			t.Errorf("sources under %s changed: %v", d, diff)
		}
	}
	// Atomic's own files that no source shares are untouched.
	after := snapshot(t, store)
	for rel, st := range storeBefore {
		if st.dir {
			continue
		}
		if id, ok := upgrade.ReadHeaderID(filepath.Join(store, rel)); ok && !sourceHas(out, id) && after[rel] != st {
			t.Errorf("store file %s changed though no source holds its session", rel)
		}
	}

	// A second run writes nothing.
	out2 := e.runRoots(t, DefaultSources(home), store, nil)
	for _, r := range out2.results {
		switch r.Result {
		case ResultAlreadyImported, ResultDuplicate, ResultSkipped:
		default:
			t.Errorf("second run: %+v", r)
		}
	}
	if out2.sum.RunID != "" {
		t.Errorf("second run journaled: %s", out2.sum.RunDir)
	}
	if d := diffSnapshots(after, snapshot(t, store)); len(d) > 0 {
		t.Errorf("second run changed the store: %v", d)
	}

	// Undo restores the store exactly.
	for _, u := range e.undo(t, out.sum.RunID) {
		if u.Result != "removed" && u.Result != "restored" {
			t.Errorf("undo: %+v", u)
		}
	}
	if d := diffSnapshots(storeBefore, snapshot(t, store)); len(d) > 0 {
		t.Errorf("store after undo differs from before the import:\n%s", strings.Join(d, "\n"))
	}
}

func sourceHas(out runOut, id string) bool {
	for _, r := range out.results {
		if r.SessionID == id {
			return true
		}
	}
	return false
}
