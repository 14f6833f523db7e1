package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestC25OmpTitleSlot is case c25: an oh-my-pi session opening with its
// title slot. validate: needs_upgrade with the note omp_title_slot on line
// 1, 4 entries, exit 0; report session: the slot's title is the name, the
// header's cwd and the recorded usage; migrate (twice): skipped,
// foreign_dialect, bytes and mtime unchanged; import: imported, the
// copy named by the slot's title.
func TestC25OmpTitleSlot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	src := filepath.Join(reportCases, "c25-omp-title-slot")
	var exp struct {
		Validate map[string]struct {
			Status        string   `json:"status"`
			FormatVersion int      `json:"format_version"`
			Codes         []string `json:"codes"`
			Line          int      `json:"line"`
			Severity      string   `json:"severity"`
			Entries       int      `json:"entries"`
		} `json:"validate"`
		ValidateExit int `json:"validate_exit"`
		Sessions     map[string]struct {
			Name    string `json:"name"`
			Cwd     string `json:"cwd"`
			Records int64  `json:"records"`
		} `json:"sessions"`
		Migrate map[string]struct {
			Result string `json:"result"`
			Reason string `json:"reason"`
			SHA256 string `json:"sha256"`
			Bytes  int64  `json:"bytes"`
		} `json:"migrate"`
	}
	raw, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".omp"), os.DirFS(filepath.Join(src, "omp"))); err != nil {
		t.Fatal(err)
	}
	if len(exp.Validate) != 1 || len(exp.Migrate) != 1 {
		t.Fatal("expected.json: one file expected")
	}
	for rel, want := range exp.Validate {
		path := filepath.Join(home, "."+rel)
		code, out, errOut := runEnvCLI(t, home, nil, "validate", "--json")
		if code != exp.ValidateExit {
			t.Fatalf("validate: exit %d, want %d\n%s%s", code, exp.ValidateExit, out, errOut)
		}
		var v jsonFileVerdict
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &v); err != nil {
			t.Fatal(err)
		}
		if v.Path != path || v.Status != want.Status || v.FormatVersion == nil || *v.FormatVersion != want.FormatVersion ||
			v.Entries != want.Entries || v.Source != "omp" || len(v.Issues) != 1 || v.Issues[0].Code != want.Codes[0] ||
			v.Issues[0].Line != want.Line || string(v.Issues[0].Severity) != want.Severity {
			t.Errorf("validate: %+v, want %+v", v, want)
		}
	}

	code, out, errOut := runEnvCLI(t, home, nil, "report", "session", "--json", "--tz", "UTC")
	if code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	var rep struct {
		Sessions []struct {
			SessionID   string `json:"sessionId"`
			Name        string `json:"name"`
			ProjectPath string `json:"projectPath"`
			Records     int64  `json:"records"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for id, want := range exp.Sessions {
		if len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != id || rep.Sessions[0].Name != want.Name ||
			rep.Sessions[0].ProjectPath != want.Cwd || rep.Sessions[0].Records != want.Records {
			t.Errorf("report session: %+v, want %s %+v", rep.Sessions, id, want)
		}
	}

	for rel, want := range exp.Migrate {
		path := filepath.Join(home, "."+rel)
		before, _ := os.Stat(path)
		for run := 1; run <= 2; run++ {
			// The omp store is not migrated with no PATH: name it.
			code, out, errOut := runEnvCLI(t, home, nil, "migrate", "--json", filepath.Join(home, ".omp"))
			var r struct{ Path, Result, Reason string }
			_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &r)
			if code != ExitOK || r.Path != path || r.Result != want.Result || r.Reason != want.Reason {
				t.Errorf("migrate run %d: exit %d, %+v; want %s %s\n%s", run, code, r, want.Result, want.Reason, errOut)
			}
			after, err := os.Stat(path)
			if err != nil || sha256File(t, path) != want.SHA256 || after.Size() != want.Bytes || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("migrate run %d changed the file", run)
			}
		}
		// import copies it without the slot, keeping the title as the
		// session's name (the name report gives the copy).
		store := filepath.Join(home, "store")
		code, out, errOut := runEnvCLI(t, home, nil, "import", "--json", "--to", store, filepath.Join(home, ".omp"))
		if code != ExitOK || !strings.Contains(out, `"result":"imported"`) {
			t.Errorf("import: exit %d, want 0 and imported:\n%s%s", code, out, errOut)
		}
		for id, ws := range exp.Sessions {
			code, out, errOut = runEnvCLI(t, home, nil, "report", "session", "--json", store)
			if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, `"name": "`+ws.Name+`"`) {
				t.Errorf("report session over the imported copy: exit %d, want the name %q:\n%s%s", code, ws.Name, out, errOut)
			}
		}
	}
}
