package migrate

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// relayoutHome writes legacy flat pi files (name → cwd; "" = no cwd) under
// a new home and returns it.
func relayoutHome(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".pi", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, cwd := range files {
		hdr := `{"type":"session","version":4,"id":"s-` + name + `","createdAt":"2025-06-01T10:00:00.000Z"`
		if cwd != "" {
			hdr += `,"cwd":"` + strings.ReplaceAll(cwd, `\`, `\\`) + `"`
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(hdr+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func relayoutRun(t *testing.T, home, state string) runOut {
	t.Helper()
	return runMigrate(t, home, func(o *Options) {
		o.Roots = ingest.DefaultRoots(home)
		o.Relayout = true
		o.StateDir, o.RunsDir = state, filepath.Join(state, "runs")
	})
}

func undoAll(t *testing.T, runDir, state string) []fstx.UndoResult {
	t.Helper()
	var out []fstx.UndoResult
	if err := fstx.Undo(context.Background(), runDir, fstx.UndoOptions{StateDir: state, Ops: fstx.MigrateOps}, func(r fstx.UndoResult) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRelayoutMoveFailsIsReported: a move that fails (a cwd whose encoded
// directory name is too long) is a failed result (move_failed, exit 1), the
// file stays where it is, and no directory is left behind.
func TestRelayoutMoveFailsIsReported(t *testing.T) {
	home := relayoutHome(t, map[string]string{"long": "/" + strings.Repeat("x", 300)})
	state := t.TempDir()
	out := relayoutRun(t, home, state)
	r := out.results[".pi/agent/long.jsonl"]
	if r.Result != ResultFailed || r.Reason != ReasonMoveFailed || !r.Failed() {
		t.Fatalf("long cwd: %+v, want failed move_failed", r)
	}
	if out.sum.Failed != 1 {
		t.Errorf("summary failed %d, want 1", out.sum.Failed)
	}
	if !fstx.FileExists(filepath.Join(home, ".pi", "agent", "long.jsonl")) {
		t.Error("the file left its place")
	}
	if fstx.FileExists(filepath.Join(home, ".pi", "agent", "sessions")) {
		t.Error("the run left the directory it created for the failed move")
	}
	if out.sum.RunDir != "" {
		for _, u := range undoAll(t, out.sum.RunDir, state) {
			if u.Result == fstx.UndoFailed || u.Result == fstx.UndoChanged {
				t.Errorf("undo: %+v", u)
			}
		}
	}
}

// TestRelayoutRenameFailsUndo: a journaled move whose rename then fails is
// undone as already_original, with or without its move_failed record (a
// crash between the two).
func TestRelayoutRenameFailsUndo(t *testing.T) {
	home := relayoutHome(t, map[string]string{"a": "/home/u/p"})
	state := t.TempDir()
	saved := fstx.Faults.RenameNoReplace
	fstx.Faults.RenameNoReplace = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("injected failure")}
	}
	out := relayoutRun(t, home, state)
	fstx.Faults.RenameNoReplace = saved
	r := out.results[".pi/agent/a.jsonl"]
	if r.Result != ResultFailed || r.Reason != ReasonMoveFailed || !strings.Contains(r.Detail, "injected failure") {
		t.Fatalf("%+v, want failed move_failed", r)
	}
	entries, err := fstx.ReadJournal(out.sum.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, e := range entries {
		ops = append(ops, e.Op)
	}
	if strings.Join(ops, ",") != "mkdir,mkdir,move,move_failed" {
		t.Errorf("journal ops %v", ops)
	}
	check := func(what string) {
		t.Helper()
		var moves int
		for _, u := range undoAll(t, out.sum.RunDir, state) {
			switch u.Op {
			case fstx.OpMove:
				moves++
				if u.Result != fstx.UndoAlready {
					t.Errorf("%s: undo of the move: %+v, want already_original", what, u)
				}
			case fstx.OpMkdir:
			default:
				t.Errorf("%s: unexpected undo result %+v", what, u)
			}
		}
		if moves != 1 {
			t.Errorf("%s: %d move results, want 1", what, moves)
		}
	}
	check("with the move_failed record")
	// Drop the move_failed record: undo must still see that the file never moved.
	j := filepath.Join(out.sum.RunDir, "journal.jsonl")
	b, _ := os.ReadFile(j)
	var kept []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"op":"move_failed"`) {
			kept = append(kept, sc.Text())
		}
	}
	if err := os.WriteFile(j, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("without it")
}

// TestUndoMoveToUnnameableTarget: a journaled move whose target cannot even
// be named (a directory name over NAME_MAX) and whose file is at its old
// path is already_original, not failed.
func TestUndoMoveToUnnameableTarget(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(from, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum, _ := fstx.HashFile(from)
	run, err := fstx.StartRun(filepath.Join(dir, "runs"), "r1", true)
	if err != nil {
		t.Fatal(err)
	}
	// sessions/ exists: the lookup reaches the long name (ENAMETOOLONG).
	if err := os.Mkdir(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "sessions", "--"+strings.Repeat("x", 300)+"--", "a.jsonl")
	if err := run.RecordRoots([]string{dir}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := run.Record(fstx.JournalEntry{Op: fstx.OpMove, Path: to, From: from, SHA256After: sum, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	run.Close()
	res := undoAll(t, run.Dir, t.TempDir())
	if len(res) != 1 || res[0].Result != fstx.UndoAlready {
		t.Errorf("undo: %+v, want one already_original", res)
	}
}

// TestRelayoutUndoRemovesCreatedDirectories: undo removes the directories
// the run created once they are empty, and keeps any that hold something
// else (and their parents).
func TestRelayoutUndoRemovesCreatedDirectories(t *testing.T) {
	home := relayoutHome(t, map[string]string{"a": "/home/u/p", "b": "/home/u/p", "c": "/home/u/q"})
	state := t.TempDir()
	out := relayoutRun(t, home, state)
	if out.sum.Failed != 0 || out.sum.ByResult[ResultMoved] != 3 {
		t.Fatalf("run: %+v", out.sum)
	}
	sessions := filepath.Join(home, ".pi", "agent", "sessions")
	// The agent starts a new session in one of the new directories.
	stranger := filepath.Join(sessions, "--home-u-q--", "new.jsonl")
	if err := os.WriteFile(stranger, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, u := range undoAll(t, out.sum.RunDir, state) {
		if u.Result == fstx.UndoFailed || u.Result == fstx.UndoChanged {
			t.Errorf("undo: %+v", u)
		}
		if u.Op == fstx.OpMkdir {
			if u.Result != fstx.UndoRemoved {
				t.Errorf("mkdir result %+v", u)
			}
			removed[u.Path] = true
		}
	}
	if fstx.FileExists(filepath.Join(sessions, "--home-u-p--")) || !removed[filepath.Join(sessions, "--home-u-p--")] {
		t.Errorf("the emptied directory the run created is still there (removed: %v)", removed)
	}
	if !fstx.FileExists(stranger) || len(removed) != 1 {
		t.Errorf("undo removed a directory holding another file (removed: %v)", removed)
	}
	for _, n := range []string{"a", "b", "c"} {
		if !fstx.FileExists(filepath.Join(home, ".pi", "agent", n+".jsonl")) {
			t.Errorf("%s not moved back", n)
		}
	}
	// fstx.Undo again: nothing left to do, nothing reported as a problem.
	for _, u := range undoAll(t, out.sum.RunDir, state) {
		if u.Result != fstx.UndoAlready {
			t.Errorf("second undo: %+v", u)
		}
	}
}

// TestRelayoutNotMovedCounted: files --relayout leaves where they are carry
// a reason and are counted in the summary; they are not failures.
func TestRelayoutNotMovedCounted(t *testing.T) {
	home := relayoutHome(t, map[string]string{"ok": "/home/u/ok", "nocwd": ""})
	taken := filepath.Join(home, ".pi", "agent", "sessions", "--home-u-ok--", "ok.jsonl")
	if err := os.MkdirAll(filepath.Dir(taken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(taken, []byte(`{"type":"session","version":4,"id":"other","createdAt":"2025-06-01T10:00:00.000Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := relayoutRun(t, home, t.TempDir())
	for name, want := range map[string]string{".pi/agent/ok.jsonl": NotMovedTargetExists, ".pi/agent/nocwd.jsonl": NotMovedNoCwd} {
		if r := out.results[name]; r.NotMoved != want || r.Result != ResultCurrent || r.Failed() {
			t.Errorf("%s: %+v, want current, not moved %s", name, r, want)
		}
	}
	if out.sum.NotMoved != 2 || out.sum.NotMovedByReason[NotMovedTargetExists] != 1 || out.sum.NotMovedByReason[NotMovedNoCwd] != 1 || out.sum.Failed != 0 {
		t.Errorf("summary %+v", out.sum)
	}
}

// TestRelayoutTargetTakenDuringMove: when the target appears between the
// check and the rename (the rename fails with EEXIST), the file is not moved
// (target_exists) and undo leaves the other file at the target alone:
// already_original, not changed_since.
func TestRelayoutTargetTakenDuringMove(t *testing.T) {
	home := relayoutHome(t, map[string]string{"a": "/home/u/p"})
	state := t.TempDir()
	saved := fstx.Faults.RenameNoReplace
	fstx.Faults.RenameNoReplace = func(from, to string) error {
		if err := os.WriteFile(to, []byte("{}\n"), 0o600); err != nil {
			return err
		}
		return saved(from, to)
	}
	out := relayoutRun(t, home, state)
	fstx.Faults.RenameNoReplace = saved
	r := out.results[".pi/agent/a.jsonl"]
	if r.Result != ResultCurrent || r.NotMoved != NotMovedTargetExists || r.Failed() {
		t.Fatalf("%+v, want current, not moved: target_exists", r)
	}
	for _, u := range undoAll(t, out.sum.RunDir, state) {
		if u.Op == fstx.OpMove && u.Result != fstx.UndoAlready {
			t.Errorf("undo: %+v, want already_original", u)
		}
	}
	target := filepath.Join(home, ".pi", "agent", "sessions", "--home-u-p--", "a.jsonl")
	if b, err := os.ReadFile(target); err != nil || string(b) != "{}\n" {
		t.Errorf("the other file at the target: %q %v", b, err)
	}
}
