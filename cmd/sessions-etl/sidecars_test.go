package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

func sha256File(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// TestC23Sidecars: case c23 as an OpenClaw home. validate exits 0 with
// the archives flagged (and the .zst's content as expected.json's
// sha256); migrate never rewrites the reset and deleted archives, the
// .bak and checkpoint copies or the trajectory file (bytes and mtime
// unchanged, skipped with a reason, exit 0) and does upgrade the live
// file; import skips the archives.
func TestC23Sidecars(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	src := filepath.Join(reportCases, "c23-openclaw-sidecars")
	var exp struct {
		Files map[string]struct {
			Compressed         string `json:"compressed"`
			UncompressedSHA256 string `json:"uncompressed_sha256"`
			UncompressedBytes  int64  `json:"uncompressed_bytes"`
			CompressedSHA256   string `json:"compressed_sha256"`
		} `json:"files"`
		ValidateExit int `json:"validate_exit"`
	}
	raw, err := os.ReadFile(filepath.Join(src, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".openclaw"), os.DirFS(filepath.Join(src, "openclaw"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".openclaw", "agents", "ops", "sessions")
	const live = "23a0c001-4e5f-4a6b-8c7d-23a000000001.jsonl"
	zst := "23a0c003-4e5f-4a6b-8c7d-23a000000003.jsonl.deleted.2025-10-04T12-00-00-000Z.zst"
	want := exp.Files["openclaw/agents/ops/sessions/"+zst]
	if want.Compressed != "zstd" || sha256File(t, filepath.Join(dir, zst)) != want.CompressedSHA256 {
		t.Fatalf("the .zst of the case is not the one expected.json describes")
	}
	rc, err := ingest.OpenContent(filepath.Join(dir, zst))
	if err != nil {
		t.Fatal(err)
	}
	content, err := io.ReadAll(rc)
	rc.Close()
	sum := sha256.Sum256(content)
	if err != nil || int64(len(content)) != want.UncompressedBytes || hex.EncodeToString(sum[:]) != want.UncompressedSHA256 {
		t.Errorf("decompressed .zst: %d bytes, sha256 %x (%v); want %d, %s", len(content), sum, err, want.UncompressedBytes, want.UncompressedSHA256)
	}

	code, out, errOut := runEnvCLI(t, home, nil, "validate", "--json", "--source", "openclaw")
	if code != exp.ValidateExit {
		t.Fatalf("validate: exit %d, want %d\n%s%s", code, exp.ValidateExit, out, errOut)
	}
	flags := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v jsonFileVerdict
		if json.Unmarshal([]byte(line), &v) == nil && v.Path != "" {
			flags[filepath.Base(v.Path)] = v.Status + " " + v.Source + " " + map[bool]string{true: "archived"}[v.Archived] + " " + v.Compression
		}
	}
	for name, w := range map[string]string{
		live: "needs_upgrade openclaw  ",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.jsonl.reset.2025-10-05T07-30-00-000Z": "needs_upgrade openclaw archived ",
		zst: "needs_upgrade openclaw archived zstd",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.trajectory.jsonl": "skipped openclaw  ",
	} {
		if flags[name] != w {
			t.Errorf("validate %s: %q, want %q", name, flags[name], w)
		}
	}

	before := map[string]string{}
	mtimes := map[string]int64{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		before[e.Name()] = sha256File(t, p)
		fi, _ := os.Stat(p)
		mtimes[e.Name()] = fi.ModTime().UnixNano()
	}
	// migrate with no PATH does not cover OpenClaw's store: name it.
	code, out, errOut = runEnvCLI(t, home, nil, "migrate", "--json", dir)
	if code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ Path, Result, Reason string }
		if json.Unmarshal([]byte(line), &r) == nil && r.Path != "" {
			results[filepath.Base(r.Path)] = r.Result + " " + r.Reason
		}
	}
	for name, w := range map[string]string{
		live: "upgraded ",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.jsonl.reset.2025-10-05T07-30-00-000Z": "skipped archived",
		zst: "skipped archived",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.jsonl.bak-1":                                           "skipped snapshot",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.checkpoint.23a0c0cc-4e5f-4a6b-8c7d-23a0000000cc.jsonl": "skipped snapshot",
		"23a0c001-4e5f-4a6b-8c7d-23a000000001.trajectory.jsonl":                                      "skipped not_a_session_file",
	} {
		if results[name] != w {
			t.Errorf("migrate %s: %q, want %q", name, results[name], w)
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if name != live && (sha256File(t, p) != before[name] || fi.ModTime().UnixNano() != mtimes[name]) {
			t.Errorf("migrate changed %s", name)
		}
	}
	if sha256File(t, filepath.Join(dir, live)) == before[live] {
		t.Errorf("migrate did not upgrade the live file")
	}

	code, out, errOut = runEnvCLI(t, home, nil, "import", "--json", "--dry-run", "--to", filepath.Join(home, "store"), dir)
	results = map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ Path, Result, Reason string }
		if json.Unmarshal([]byte(line), &r) == nil && r.Path != "" {
			results[filepath.Base(r.Path)] = r.Result + " " + r.Reason
		}
	}
	if results[zst] != "skipped archived" || results["23a0c001-4e5f-4a6b-8c7d-23a000000001.jsonl.reset.2025-10-05T07-30-00-000Z"] != "skipped archived" {
		t.Errorf("import: exit %d, results %v\n%s", code, results, errOut)
	}
}
