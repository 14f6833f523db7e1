package fstx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeJournal(t *testing.T, runDir string, entries ...JournalEntry) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(runDir, "backup"), 0o700); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(runDir, "journal.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func undoResults(t *testing.T, runDir string, opts UndoOptions) ([]UndoResult, error) {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	var out []UndoResult
	err := Undo(context.Background(), runDir, opts, func(r UndoResult) error { out = append(out, r); return nil })
	return out, err
}

// TestUndoRefusesCraftedJournal (finding 1): a run directory is not
// trusted. A journal whose backup lies outside the run directory, whose
// mode would widen a file, whose paths lie outside the run's roots, or
// whose move leads out of them, is refused entry by entry: nothing is
// written, every such entry is reported failed with "refused".
func TestUndoRefusesCraftedJournal(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	outside := filepath.Join(base, "elsewhere")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(base, "runs", "r1")
	payload := []byte("payload\n")
	if err := os.MkdirAll(filepath.Join(base, "runs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "runs", "payload"), payload, 0o600); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim.jsonl")
	victimBytes := []byte("{\"victim\":true}\n")
	inRoot := filepath.Join(root, "a.jsonl")
	inRootBytes := []byte("{\"type\":\"session\"}\n")
	mover := filepath.Join(root, "b.jsonl")
	moverBytes := []byte("{\"mover\":1}\n")
	for p, b := range map[string][]byte{victim: victimBytes, inRoot: inRootBytes, mover: moverBytes} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	writeJournal(t, runDir,
		JournalEntry{Op: OpRun, Roots: []string{root}, Time: now},
		// A path outside the roots, restored from a backup outside the run.
		JournalEntry{Op: OpRewrite, Path: victim, Mode: "0777", SHA256Before: sum(payload), SHA256After: sum(victimBytes), Backup: "../payload", Time: now},
		// In the roots, but the backup escapes the run directory.
		JournalEntry{Op: OpRewrite, Path: inRoot, Mode: "0600", SHA256Before: sum(payload), SHA256After: sum(inRootBytes), Backup: "backup/../../payload", Time: now},
		// A move out of the roots.
		JournalEntry{Op: OpMove, Path: mover, From: filepath.Join(outside, "moved.jsonl"), SHA256After: sum(moverBytes), Time: now},
	)
	// A legitimate backup with a mode that would widen the file.
	if err := os.WriteFile(filepath.Join(runDir, "backup", "000001-a.jsonl"), payload, 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(runDir, "journal.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	line, _ := json.Marshal(JournalEntry{Op: OpRewrite, Path: inRoot, Mode: "0777", SHA256Before: sum(payload), SHA256After: sum(inRootBytes), Backup: "backup/000001-a.jsonl", Time: now})
	f.Write(append(line, '\n'))
	f.Close()

	res, err := undoResults(t, runDir, UndoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("results %+v, want 4", res)
	}
	for _, r := range res {
		if r.Result != UndoFailed || !strings.Contains(r.Detail, "refused") {
			t.Errorf("%s %s: %s (%s), want failed: refused", r.Op, r.Path, r.Result, r.Detail)
		}
		if r.Backup != "" && !strings.HasPrefix(r.Backup, runDir+string(filepath.Separator)+"backup") {
			t.Errorf("%s: names backup %s outside the run", r.Path, r.Backup)
		}
	}
	for p, want := range map[string][]byte{victim: victimBytes, inRoot: inRootBytes, mover: moverBytes} {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s changed: %q %v", p, got, err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode changed: %v %v", p, fi.Mode(), err)
		}
	}
	if FileExists(filepath.Join(outside, "moved.jsonl")) {
		t.Errorf("a file was moved out of the roots")
	}
}

// TestUndoWithoutRootsUsesDefaults: a journal of an older version (no
// OpRun record) may only touch the default roots.
func TestUndoWithoutRootsUsesDefaults(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim.jsonl")
	orig := []byte("{\"a\":1}\n")
	cur := []byte("{\"a\":2}\n")
	if err := os.WriteFile(victim, cur, 0o600); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(base, "run")
	writeJournal(t, runDir, JournalEntry{Op: OpRewrite, Path: victim, Mode: "0600", SHA256Before: sum(orig), SHA256After: sum(cur), Backup: "backup/000001-victim.jsonl", Time: time.Now()})
	if err := os.WriteFile(filepath.Join(runDir, "backup", "000001-victim.jsonl"), orig, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := undoResults(t, runDir, UndoOptions{DefaultRoots: []string{filepath.Join(base, "home", ".atomic")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Result != UndoFailed {
		t.Fatalf("%+v, want one refused", res)
	}
	if got, _ := os.ReadFile(victim); string(got) != string(cur) {
		t.Errorf("victim restored: %q", got)
	}
	// The same run under the default roots is restored.
	res, err = undoResults(t, runDir, UndoOptions{DefaultRoots: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Result != UndoRestored {
		t.Fatalf("%+v, want restored", res)
	}
	if got, _ := os.ReadFile(victim); string(got) != string(orig) {
		t.Errorf("not restored: %q", got)
	}
}

// TestUndoRefusesForeignRunDir: a run directory (or journal) owned by
// another user is not trusted at all. Needs root (to give it away).
func TestUndoRefusesForeignRunDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("not root: cannot give a run directory away; checking ownership of our own only")
	}
	base := t.TempDir()
	runDir := filepath.Join(base, "run")
	writeJournal(t, runDir, JournalEntry{Op: OpRun, Roots: []string{base}, Time: time.Now()})
	if os.Getuid() == 0 {
		if err := os.Chown(filepath.Join(runDir, "journal.jsonl"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := undoResults(t, runDir, UndoOptions{})
		if err == nil || !strings.Contains(err.Error(), "not owned by you") {
			t.Fatalf("undo of a foreign journal: %v, want refused", err)
		}
		return
	}
	if _, err := undoResults(t, runDir, UndoOptions{}); err != nil {
		t.Fatalf("own run directory refused: %v", err)
	}
}

// TestModeStringRoundTrip: the journal keeps special bits.
func TestModeStringRoundTrip(t *testing.T) {
	for _, m := range []os.FileMode{0o600, 0o644, 0o755 | os.ModeSetuid, 0o2770&0o777 | os.ModeSetgid, 0o1777&0o777 | os.ModeSticky} {
		got, ok := ParseMode(ModeString(m))
		if !ok || got != m {
			t.Errorf("%v → %s → %v", m, ModeString(m), got)
		}
	}
}
