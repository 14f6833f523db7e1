package migrate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/synth"
	"github.com/sessions-etl/sessions-etl/upgrade"
	"github.com/sessions-etl/sessions-etl/validate"
)

// TestGeneratedHomes is the property test of SPEC.md §2.2 over generated
// homes (three seeds): after migrate every needs_upgrade file validates as
// current and parses to its original values plus exactly the documented
// changes, with its permission bits and mtime; every other file is
// byte-identical; a second run writes nothing; undo restores every byte.
func TestGeneratedHomes(t *testing.T) {
	sessions, minUpgraded := 80, 40
	if testing.Short() {
		sessions, minUpgraded = 30, 15 // the inner loop: the same kinds of files, fewer of each
	}
	for _, seed := range []uint64{1, 2, 3} {
		home := filepath.Join(t.TempDir(), "home")
		m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: sessions, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, home)
		state := t.TempDir()
		withState := func(o *Options) {
			o.Roots = ingest.DefaultRoots(home)
			o.StateDir, o.RunsDir = state, filepath.Join(state, "runs")
		}
		out := runMigrate(t, home, withState)
		after := snapshot(t, home)
		upgraded := 0
		for _, f := range m.Files {
			r, ok := out.results[f.Path]
			if !ok {
				t.Errorf("seed %d: %s not processed", seed, f.Path)
				continue
			}
			b, a := before[f.Path], after[f.Path]
			if f.Status != string(validate.StatusNeedsUpgrade) {
				if !equalSnap(map[string]fileState{"x": b}, map[string]fileState{"x": a}) {
					t.Errorf("seed %d: %s (%s) was modified", seed, f.Path, f.Status)
				}
				continue
			}
			if r.Result != ResultUpgraded {
				if r.Result == ResultSkipped && (r.Reason == upgrade.ReasonUnresolvedParent || r.Reason == upgrade.ReasonConflict) {
					continue // reported, never dropped silently
				}
				t.Errorf("seed %d: %s: %s %s %s", seed, f.Path, r.Result, r.Reason, r.Detail)
				continue
			}
			upgraded++
			res, err := validate.File(context.Background(), &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), filepath.Join(home, f.Path))
			if err != nil || res.Status != validate.StatusCurrent || res.Entries != f.Entries {
				t.Errorf("seed %d: %s after migrate: %s with %d entries (want current, %d): %v", seed, f.Path, res.Status, res.Entries, f.Entries, res.Issues)
			}
			checkEquivalent(t, f.Path, b.data, a.data)
			if b.mode != a.mode || !b.mtime.Equal(a.mtime) {
				t.Errorf("seed %d: %s mode %v→%v mtime %v→%v", seed, f.Path, b.mode, a.mode, b.mtime, a.mtime)
			}
		}
		if upgraded < minUpgraded {
			t.Errorf("seed %d: only %d files upgraded", seed, upgraded)
		}
		again := runMigrate(t, home, withState)
		if n := again.sum.ByResult[ResultUpgraded]; n != 0 || !equalSnap(after, snapshot(t, home)) {
			t.Errorf("seed %d: second run upgraded %d files", seed, n)
		}
		if err := fstx.Undo(context.Background(), out.sum.RunDir, fstx.UndoOptions{StateDir: state}, func(r fstx.UndoResult) error {
			if r.Result != fstx.UndoRestored {
				t.Errorf("seed %d: undo %s: %s %s", seed, r.Path, r.Result, r.Detail)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !equalSnap(before, snapshot(t, home)) {
			t.Errorf("seed %d: undo did not restore the home", seed)
		}
	}
}
