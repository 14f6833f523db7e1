package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// oneLine checks that out is exactly one line.
func oneLine(t *testing.T, what, out string) string {
	t.Helper()
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("%s: not exactly one line: %q", what, out)
	}
	return strings.TrimSuffix(out, "\n")
}

// TestStatuslineCLI: the line for c07 at a fixed clock, the session found
// from the hook's JSON on stdin; every error is one short marker line and
// exit 0.
func TestStatuslineCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(reportCases, "c07-early-v4-and-fork-counted-once")
	now := time.Date(2025, 5, 2, 9, 0, 0, 0, time.UTC)
	hook := `{"hook_event_name":"Status","session_id":"7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02","transcript_path":"/elsewhere/x.jsonl","cost":{"total_cost_usd":9.99}}`
	code, out, errOut := runAt(t, now, hook, "statusline", "--tz", "UTC", dir)
	line := oneLine(t, "c07", out)
	// The fork's own record ($0.004, 1500 tokens) is its session's; the
	// copied one is the parent's. Today (May 2) and the active block (from
	// 08:00, an hour ago) hold only the fork's record.
	if code != ExitOK || line != "session $0.0040 · today $0.0040 · block $0.0040, 4h00m left · $0.0040/h · 25 tok/min" || errOut != "" {
		t.Errorf("exit %d, line %q, stderr %q", code, line, errOut)
	}
	// Not JSON on stdin, no session: no session part.
	code, out, _ = runAt(t, now, "not json", "statusline", "--tz", "UTC", dir)
	if line := oneLine(t, "no hook", out); code != ExitOK || !strings.HasPrefix(line, "today ") {
		t.Errorf("exit %d, line %q", code, line)
	}
	// An unknown session: the hook's own cost.
	code, out, _ = runAt(t, now, `{"session_id":"nope","cost":{"total_cost_usd":1.5}}`, "statusline", "--tz", "UTC", dir)
	if line := oneLine(t, "unknown session", out); code != ExitOK || !strings.HasPrefix(line, "session $1.50 (agent) · today ") {
		t.Errorf("exit %d, line %q", code, line)
	}

	// Another run holds the database: the marker after --lock-wait.
	db := filepath.Join(t.TempDir(), "held.duckdb")
	held := flock.New(db + ".lock")
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAt(t, now, "", "statusline", "--db", db, "--lock-wait", "50ms", dir)
	if line := oneLine(t, "busy", out); code != ExitOK || !strings.HasPrefix(line, "sessions-etl: ⚠ busy") {
		t.Errorf("held database: exit %d, line %q", code, line)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}

	notDB := filepath.Join(t.TempDir(), "garbage.duckdb")
	if err := os.WriteFile(notDB, []byte("this is not a database\n\nat all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{
		{"--tz", "Nowhere/Nope", dir},
		{"--bogus-flag", dir},
		{"--cost", "cheap", dir},
		{filepath.Join(t.TempDir(), "missing")},
		{"--db", notDB, "--no-refresh", dir},
		{"--db", filepath.Join(t.TempDir(), "none.duckdb"), "--no-refresh", dir},
	} {
		code, out, _ := runAt(t, now, "", append([]string{"statusline"}, bad...)...)
		line := oneLine(t, strings.Join(bad, " "), out)
		if code != ExitOK || !strings.HasPrefix(line, "sessions-etl: ⚠ ") || len([]rune(line)) > 80 {
			t.Errorf("%v: exit %d, line %q; want the marker and exit 0", bad, code, line)
		}
	}
}

// TestStatuslineOwnTree: `statusline` runs in a root that holds only its
// command (a faster start); its help and its errors must be those of the
// full tree.
func TestStatuslineOwnTree(t *testing.T) {
	for _, args := range [][]string{{"statusline", "--help"}, {"statusline", "--workers", "0", "--no-stdin"}, {"statusline", "--bogus"}} {
		run := func(full bool) (int, string, string) {
			var out, errOut bytes.Buffer
			ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Now: time.Now, Home: t.TempDir()}
			if full {
				started := false
				root := newRootCmd(ios, &started)
				root.SetArgs(args)
				root.SetOut(&out)
				root.SetErr(&errOut)
				if err := root.Execute(); err != nil {
					return ExitUsage, out.String(), err.Error()
				}
				return ExitOK, out.String(), errOut.String()
			}
			code := runWith(context.Background(), ios, args)
			msg := errOut.String()
			if code == ExitUsage {
				// runWith prints the error; keep its message only.
				msg = strings.TrimPrefix(strings.SplitN(msg, "\n", 2)[0], "sessions-etl: ")
			}
			return code, out.String(), msg
		}
		fc, fout, ferr := run(true)
		oc, oout, oerr := run(false)
		if fc != oc || fout != oout || ferr != oerr {
			t.Errorf("%q: full tree exit %d %q %q; own tree exit %d %q %q", args, fc, fout, ferr, oc, oout, oerr)
		}
		if !strings.Contains(fout+ferr, "statusline") && !strings.Contains(fout+ferr, "workers") && !strings.Contains(fout+ferr, "⚠") {
			t.Errorf("%q: nothing printed", args)
		}
	}
}
