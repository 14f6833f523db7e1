package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/validate"
)

const testSessions = 60

var (
	homeOnce sync.Once
	homeDir  string
	homeMan  *Manifest
	homeErr  error
)

// testHome generates one shared home for the read-only tests.
func testHome(t *testing.T) (string, *Manifest) {
	t.Helper()
	if profileUnderTest != ProfileDefault {
		return profileHome(t, profileUnderTest) // profile_test.go
	}
	homeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "synth-test-")
		if err != nil {
			homeErr = err
			return
		}
		homeDir = filepath.Join(dir, "home")
		homeMan, homeErr = Generate(context.Background(), Options{Out: homeDir, Sessions: testSessions, Seed: 42})
	})
	if homeErr != nil {
		t.Fatal(homeErr)
	}
	return homeDir, homeMan
}

func TestMain(m *testing.M) {
	code := m.Run()
	if homeDir != "" {
		os.RemoveAll(filepath.Dir(homeDir))
	}
	os.Exit(code)
}

// hashTree returns sha256 and mtime of every file under dir, and the
// directories.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel] = "dir " + info.Mode().String()
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		out[rel] = hex.EncodeToString(sum[:]) + " " + info.ModTime().UTC().Format(time.RFC3339Nano) + " " + info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "home")
	opts := Options{Out: out, Sessions: 40, Seed: 7}
	m1, err := Generate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	first := hashTree(t, out)
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	opts.Workers = 1 // the result must not depend on scheduling
	m2, err := Generate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	second := hashTree(t, out)
	if len(first) < 40 {
		t.Fatalf("only %d paths generated", len(first))
	}
	for p, h := range first {
		if second[p] != h {
			t.Errorf("%s differs between runs: %s vs %s", p, h, second[p])
		}
	}
	for p := range second {
		if _, ok := first[p]; !ok {
			t.Errorf("%s only in the second run", p)
		}
	}
	j1, _ := json.Marshal(m1)
	j2, _ := json.Marshal(m2)
	if !bytes.Equal(j1, j2) {
		t.Error("manifests differ between runs")
	}
	// A different seed gives a different home.
	out3 := filepath.Join(t.TempDir(), "home")
	m3, err := Generate(context.Background(), Options{Out: out3, Sessions: 40, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if m3.Usage.Records == m1.Usage.Records && m3.Bytes == m1.Bytes {
		t.Error("seeds 7 and 8 gave the same home")
	}
}

func TestRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), Options{Out: dir, Sessions: 10, Seed: 1}); err == nil {
		t.Error("Generate wrote into a non-empty directory")
	}
	if _, err := Generate(context.Background(), Options{Out: filepath.Join(dir, "h"), Sessions: 0}); err == nil {
		t.Error("Generate accepted 0 sessions")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, Options{Out: filepath.Join(dir, "c"), Sessions: 10, Seed: 1}); err == nil {
		t.Error("Generate ignored a cancelled context")
	}
}

// TestValidatorAgrees cross-checks the generator and package validate: every
// file's status, format version, early-v4 flag, issue codes and entry count.
func TestValidatorAgrees(t *testing.T) {
	dir, m := testHome(t)
	checkValidator(t, dir, m)
}

func checkValidator(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	rd := &ingest.Reader{MaxDepth: 1}
	c := validate.NewChecker()
	for _, f := range m.Files {
		res, err := validate.File(context.Background(), rd, c, filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, is := range res.Issues {
			if !slices.Contains(codes, is.Code) {
				codes = append(codes, is.Code)
			}
		}
		sort.Strings(codes)
		want := slices.Clone(f.Codes)
		sort.Strings(want)
		fv := 0
		if f.FormatVersion != nil {
			fv = *f.FormatVersion
		}
		if string(res.Status) != f.Status || res.FormatVersion != fv || res.EarlyV4 != f.EarlyV4 ||
			!slices.Equal(codes, want) || res.Entries != f.Entries {
			t.Errorf("%s (%s): validator says status=%s v=%d early=%v codes=%v entries=%d; manifest says status=%s v=%d early=%v codes=%v entries=%d\n%v",
				f.Path, f.Kind, res.Status, res.FormatVersion, res.EarlyV4, codes, res.Entries,
				f.Status, fv, f.EarlyV4, want, f.Entries, res.Issues)
		}
		if f.SessionID != nil && res.Header.ID != *f.SessionID && f.Status != "not_session" {
			t.Errorf("%s: header id %q, manifest %q", f.Path, res.Header.ID, *f.SessionID)
		}
	}
}

// TestFilesMatchManifest checks sizes, hashes, mtimes and modes on disk,
// that the layout is complete, and the extras.
func TestFilesMatchManifest(t *testing.T) {
	dir, m := testHome(t)
	var total int64
	seen := map[string]bool{}
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		if int64(len(raw)) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: size/hash differ from the manifest", f.Path)
		}
		total += f.Bytes
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.ModTime().UTC().Format("2006-01-02T15:04:05.000Z"); got != f.Mtime {
			t.Errorf("%s: mtime %s, manifest %s", f.Path, got, f.Mtime)
		}
		if got := info.Mode().Perm(); got != fileMode(f.Path) {
			t.Errorf("%s: mode %v", f.Path, got)
		}
		if seen[f.Path] {
			t.Errorf("%s listed twice", f.Path)
		}
		seen[f.Path] = true
		if f.Source != sourceOf(f.Path) || !strings.HasSuffix(f.Path, ".jsonl") {
			t.Errorf("%s: source %s", f.Path, f.Source)
		}
	}
	if total != m.Bytes {
		t.Errorf("bytes %d, files sum to %d", m.Bytes, total)
	}
	// Every *.jsonl regular file under the home is in the manifest.
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.Type().IsRegular() && strings.HasSuffix(rel, ".jsonl") && !seen[rel] {
			t.Errorf("%s is not in the manifest", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lock := false
	for _, e := range m.Extras {
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == "lock_dir" {
			lock = true
			if !info.IsDir() || !strings.HasSuffix(e.Path, ".jsonl.lock") || !seen[strings.TrimSuffix(e.Path, ".lock")] {
				t.Errorf("lock dir %s", e.Path)
			}
		}
	}
	if !lock {
		t.Error("no lock directory")
	}
	for _, want := range []string{".pi/agent/sessions/", ".pi/agent/", ".atomic/agent/sessions/", ".prime/agent/sessions/"} {
		found := false
		for p := range seen {
			if strings.HasPrefix(p, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no file under %s", want)
		}
	}
	// Older per-project Prime directories and flat Prime files.
	var primeFlat, primeProject, piFlat bool
	for p := range seen {
		parts := strings.Split(p, "/")
		switch {
		case parts[0] == ".prime" && len(parts) == 4:
			primeFlat = true
		case parts[0] == ".prime" && len(parts) == 5:
			primeProject = true
		case parts[0] == ".pi" && len(parts) == 3:
			piFlat = true
		}
	}
	if !primeFlat || !primeProject || !piFlat {
		t.Errorf("layouts: prime flat %v, prime per-project %v, pi legacy flat %v", primeFlat, primeProject, piFlat)
	}
}

// TestManifestConsistent checks the manifest's sums and that it holds every
// case the brief asks for.
func TestManifestConsistent(t *testing.T) {
	_, m := testHome(t)
	u := m.Usage
	if u.Records == 0 || u.Copies == 0 || u.CostRecordedMicros == 0 {
		t.Fatalf("usage: %+v", u.Tokens)
	}
	if u.TotalTokens != u.Input+u.Output+u.CacheRead+u.CacheWrite {
		t.Error("total_tokens is not the sum of the token kinds")
	}
	var kinds Tokens
	var kindMicros int64
	for _, name := range recKindNames {
		k := u.ByKind[name]
		if k == nil {
			t.Fatalf("by_kind lacks %s", name)
		}
		if k.Records == 0 {
			t.Errorf("no %s records", name)
		}
		kinds.merge(k.Tokens)
		kindMicros += k.CostRecordedMicros
	}
	if kinds != u.Tokens || kindMicros != u.CostRecordedMicros {
		t.Errorf("by_kind sums %+v, totals %+v", kinds, u.Tokens)
	}
	var models, unc Tokens
	var modelMicros int64
	for key, mu := range u.ByModel {
		models.merge(mu.Tokens)
		unc.merge(mu.Uncosted)
		modelMicros += mu.CostRecordedMicros
		if mu.Uncosted.Records > 0 && mu.Uncosted.Input+mu.Uncosted.CacheRead+mu.Uncosted.CacheWrite >= 200000*mu.Uncosted.Records {
			t.Errorf("%s: uncosted prompts too large", key)
		}
	}
	if models != u.Tokens || modelMicros != u.CostRecordedMicros || unc != u.Uncosted {
		t.Errorf("by_model sums %+v, totals %+v", models, u.Tokens)
	}
	for _, key := range []string{"unknown/unknown", "local/llama-custom", "anthropic/claude-sonnet-4-5"} {
		if u.ByModel[key] == nil || u.ByModel[key].Uncosted.Records == 0 {
			t.Errorf("by_model[%s] has no uncosted records", key)
		}
	}
	for _, zone := range DailyZones {
		var days Tokens
		for _, d := range u.Daily[zone] {
			days.merge(*d)
		}
		if days != u.Tokens {
			t.Errorf("daily[%s] sums %+v, totals %+v", zone, days, u.Tokens)
		}
	}
	if len(u.Daily["UTC"]) < 10 || mapsEqual(u.Daily["UTC"], u.Daily["America/Los_Angeles"]) || mapsEqual(u.Daily["UTC"], u.Daily["Asia/Tokyo"]) {
		t.Error("daily grouping does not differ between zones")
	}
	var files FileUsage
	kinds2 := map[string]int{}
	specials := map[string]int{}
	versions := map[string]int{}
	statuses := map[string]int{}
	forks, copies := 0, 0
	ids := map[string]string{}
	for _, f := range m.Files {
		files.Records += f.Usage.Records
		files.Copies += f.Usage.Copies
		files.Input += f.Usage.Input
		files.CostRecordedMicros += f.Usage.CostRecordedMicros
		kinds2[f.Kind]++
		specials[f.Special]++
		versions[f.Source+"/"+f.Variant]++
		statuses[f.Status]++
		if f.ParentSessionID != nil {
			forks++
		}
		if f.CopyOf != nil {
			copies++
		}
		if f.SessionID != nil && f.CopyOf == nil {
			if other, dup := ids[*f.SessionID]; dup {
				t.Errorf("session id %s used by %s and %s", *f.SessionID, other, f.Path)
			}
			ids[*f.SessionID] = f.Path
		}
	}
	if files.Records != u.Records || files.Copies != u.Copies || files.Input != u.Input || files.CostRecordedMicros != u.CostRecordedMicros {
		t.Errorf("per-file usage sums %+v, totals %+v", files, u.Tokens)
	}
	for d := dTorn; d < numDamage; d++ {
		if kinds2[damageNames[d]] == 0 {
			t.Errorf("no %s file", damageNames[d])
		}
	}
	for _, s := range []string{"moved_parent", "late_header", "fork_chain", "two_roots", "prefix_snapshot", "v1_branch", "early_v4_fork"} {
		if specials[s] < 2 {
			t.Errorf("special case %s missing", s)
		}
	}
	for _, k := range []string{"fork", "branch_extract", "whole_copy", "prefix_snapshot"} {
		if kinds2[k] == 0 {
			t.Errorf("no %s file", k)
		}
	}
	for _, v := range []string{"pi/pi-v1", "pi/pi-v2", "pi/pi-v3", "atomic/atomic-v3", "atomic/atomic-early-v4", "atomic/atomic-v4", "prime/prime-v3", "pi/atomic-early-v4"} {
		if versions[v] == 0 {
			t.Errorf("no %s file", v)
		}
	}
	for _, s := range []string{"not_session", "future_version", "unrecognized_version", "torn", "corrupt", "empty", "needs_upgrade", "current"} {
		if statuses[s] == 0 {
			t.Errorf("no file with status %s", s)
		}
	}
	if forks < 8 || copies < 2 {
		t.Errorf("%d forks, %d copies", forks, copies)
	}
	if n := len(m.Files); n < testSessions*9/10 || n > testSessions*3/2 {
		t.Errorf("%d files for %d sessions", n, testSessions)
	}
}

func mapsEqual(a, b map[string]*Tokens) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || *w != *v {
			return false
		}
	}
	return true
}

// TestCopiesAreVerbatim checks that forks copy their parent's lines byte for
// byte, whole copies are identical and snapshots are byte prefixes.
func TestCopiesAreVerbatim(t *testing.T) {
	dir, m := testHome(t)
	read := func(rel string) []byte {
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	byID := map[string]File{}
	for _, f := range m.Files {
		if f.SessionID != nil && f.CopyOf == nil && f.Kind != "prefix_snapshot" {
			byID[*f.SessionID] = f
		}
	}
	lateHeader := false
	for _, f := range m.Files {
		switch {
		case f.CopyOf != nil && f.Kind == "whole_copy":
			if !bytes.Equal(read(f.Path), read(*f.CopyOf)) {
				t.Errorf("%s is not identical to %s", f.Path, *f.CopyOf)
			}
		case f.CopyOf != nil:
			if full := read(*f.CopyOf); !bytes.HasPrefix(full, read(f.Path)) || len(read(f.Path)) >= len(full) {
				t.Errorf("%s is not a strict prefix of %s", f.Path, *f.CopyOf)
			}
		case f.ParentSessionID != nil:
			parent, ok := byID[*f.ParentSessionID]
			if !ok {
				t.Errorf("%s: parent %s not generated", f.Path, *f.ParentSessionID)
				continue
			}
			plines := map[string]bool{}
			for _, ln := range bytes.Split(read(parent.Path), []byte("\n")) {
				plines[string(ln)] = true
			}
			lines := bytes.Split(bytes.TrimSuffix(read(f.Path), []byte("\n")), []byte("\n"))
			copied := 0
			for _, ln := range lines[1:] {
				if !plines[string(ln)] {
					break
				}
				copied++
			}
			if copied == 0 {
				t.Errorf("%s copies nothing from %s", f.Path, parent.Path)
			}
			var hdr map[string]any
			if err := json.Unmarshal(lines[0], &hdr); err != nil {
				t.Fatal(err)
			}
			if f.Kind == "branch_extract" {
				if copied != len(lines)-1 {
					t.Errorf("%s: branch extraction has new entries", f.Path)
				}
				hts, _ := time.Parse(time.RFC3339, hdr["timestamp"].(string))
				for _, ln := range lines[1:] {
					var e struct{ Timestamp time.Time }
					if err := json.Unmarshal(ln, &e); err != nil {
						t.Fatal(err)
					}
					if !e.Timestamp.Before(hts) {
						t.Errorf("%s: entry at %v not before header %v", f.Path, e.Timestamp, hts)
					}
				}
				lateHeader = true
			}
			switch {
			case hdr["parentSessionId"] != nil:
				if hdr["parentSessionId"] != *f.ParentSessionID {
					t.Errorf("%s: parentSessionId %v", f.Path, hdr["parentSessionId"])
				}
			default:
				p, _ := hdr["parentSession"].(string)
				if p == "" {
					p, _ = hdr["branchedFrom"].(string)
				}
				want := filepath.Join(dir, filepath.FromSlash(parent.Path))
				if f.Special == "moved_parent" {
					want = filepath.Join(dir, filepath.FromSlash(strings.Replace(parent.Path, ".atomic/", ".pi/", 1)))
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s: moved parent path %s exists", f.Path, p)
					}
				}
				if p != want {
					t.Errorf("%s: parent path %q, want %q", f.Path, p, want)
				}
			}
		}
	}
	if !lateHeader {
		t.Error("no branch extraction")
	}
}

func TestSize(t *testing.T) {
	const size = 20 << 20
	out := filepath.Join(t.TempDir(), "home")
	m, err := Generate(context.Background(), Options{Out: out, Sessions: 60, Seed: 3, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Bytes - size; d < -size/20 || d > size/20 {
		t.Errorf("total %d bytes, want %d ± 5%%", m.Bytes, size)
	}
	t.Logf("target %d, got %d (%+.2f%%)", size, m.Bytes, float64(m.Bytes-size)*100/size)
	checkValidator(t, out, m)
}

func BenchmarkGenerate(b *testing.B) {
	var bytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), "home")
		b.StartTimer()
		m, err := Generate(context.Background(), Options{Out: out, Sessions: 200, Seed: 1, Size: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		bytes = m.Bytes
	}
	b.SetBytes(bytes)
}

// TestEntryTypeCoverage checks that even a small home holds every entry
// type of SPEC.md §1.4 and every message role the writers produce, and the
// provider/model mix.
func TestEntryTypeCoverage(t *testing.T) {
	dir, m := testHome(t)
	types, roles, models := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, f := range m.Files {
		if f.Status != "needs_upgrade" && f.Status != "current" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			var e struct {
				Type    string
				Message *struct{ Role, Provider, Model string }
			}
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			types[e.Type] = true
			if e.Message != nil {
				roles[e.Message.Role] = true
				if e.Message.Role == "assistant" {
					models[e.Message.Provider+"/"+e.Message.Model] = true
				}
			}
		}
	}
	for typ := range validate.KnownEntryTypes {
		if !types[typ] {
			t.Errorf("no %s entry", typ)
		}
	}
	for _, role := range []string{"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "system"} {
		if !roles[role] {
			t.Errorf("no %s message", role)
		}
	}
	if len(models) < 6 || !models["local/llama-custom"] {
		t.Errorf("models: %v", models)
	}
}
