package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOddFileNames (finding 8): file names with a newline or invalid UTF-8
// are quoted in text output (one line per file, readable back with
// strconv.Unquote) and kept reversible in JSON (path_bytes, base64 of the
// name's bytes, when the name is not UTF-8).
func TestOddFileNames(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	dir := filepath.Join(home, "s")
	orig, err := os.ReadFile("../../testdata/cases/c06-v2-hook-message/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"new\nline.jsonl", "caf\xe9.jsonl"}
	for _, n := range names {
		writeSession(t, filepath.Join(dir, n), string(orig))
	}

	code, out, errOut := runCLI(t, home, "migrate", "--dry-run", "--verbose", dir)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, n := range names {
		q := strconv.Quote(filepath.Join(dir, n))
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, q) {
				found = true
			}
		}
		if !found {
			t.Errorf("text output does not name %s on one line:\n%s", q, out)
		}
	}

	for _, args := range [][]string{{"migrate", "--dry-run", "--json", dir}, {"validate", "--json", dir}} {
		code, out, errOut = runCLI(t, home, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		got := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v struct {
				Path      string `json:"path"`
				PathBytes string `json:"path_bytes"`
			}
			if err := json.Unmarshal([]byte(line), &v); err != nil || v.Path == "" {
				continue
			}
			p := v.Path
			if v.PathBytes != "" {
				b, err := base64.StdEncoding.DecodeString(v.PathBytes)
				if err != nil {
					t.Fatal(err)
				}
				p = string(b)
			}
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("%v: %q names no file", args, p)
			}
			got[p] = true
		}
		for _, n := range names {
			if !got[filepath.Join(dir, n)] {
				t.Errorf("%v: %q not reversible from the JSON:\n%s", args, filepath.Join(dir, n), out)
			}
		}
	}
}
