package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
	"github.com/sessions-etl/sessions-etl/internal/testkit"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/validate"
)

var testLock = fstx.LockConfig{Stale: 10 * time.Second, Update: 50 * time.Millisecond, Poll: 10 * time.Millisecond}

// copyTree copies src into dst (created), keeping permission bits and mtimes.
func copyTree(t *testing.T, src, dst string) { t.Helper(); testkit.CopyTree(t, src, dst) }

// entryState is one path of a tree snapshot.
type entryState struct {
	dir   bool
	sum   string
	mode  fs.FileMode
	mtime time.Time
}

// snapshot records every file (content hash, permission bits, mtime) and
// directory under root; a missing root is an empty snapshot.
func snapshot(t *testing.T, root string) map[string]entryState {
	t.Helper()
	m := map[string]entryState{}
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return m
	}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if fi.IsDir() {
			m[rel] = entryState{dir: true, mode: fi.Mode().Perm()}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		m[rel] = entryState{sum: hex.EncodeToString(s[:]), mode: fi.Mode().Perm(), mtime: fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffSnapshots(a, b map[string]entryState) []string {
	var out []string
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			out = append(out, "missing "+k)
		case va.dir != vb.dir || va.sum != vb.sum || va.mode != vb.mode || (!va.dir && !va.mtime.Equal(vb.mtime)):
			out = append(out, fmt.Sprintf("changed %s: %+v → %+v", k, va, vb))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	sort.Strings(out)
	return out
}

type runOut struct {
	sum     Summary
	results []Result
	byPath  map[string]Result
}

func (o runOut) counts() map[string]int {
	c := map[string]int{}
	for _, r := range o.results {
		c[r.Result]++
	}
	return c
}

// env is a test's state and runs directories.
type env struct {
	state string
}

func newEnv(t *testing.T) *env { return &env{state: t.TempDir()} }

func (e *env) runsDir() string { return filepath.Join(e.state, "runs") }

func (e *env) run(t *testing.T, sources []string, target string, mod func(*Options)) runOut {
	t.Helper()
	roots, err := ingest.PathRoots(sources)
	if err != nil {
		t.Fatal(err)
	}
	return e.runRoots(t, roots, target, mod)
}

func (e *env) runRoots(t *testing.T, roots []ingest.Root, target string, mod func(*Options)) runOut {
	t.Helper()
	opts := Options{Sources: roots, Target: target, Workers: 3, RunsDir: e.runsDir(), StateDir: e.state, Lock: testLock}
	if mod != nil {
		mod(&opts)
	}
	out := runOut{byPath: map[string]Result{}}
	sum, err := Run(context.Background(), opts, func(r Result) error {
		out.results = append(out.results, r)
		out.byPath[r.Path] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.sum = sum
	return out
}

func (e *env) undo(t *testing.T, runID string) []fstx.UndoResult {
	t.Helper()
	dir, err := fstx.ResolveRun(e.runsDir(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var rs []fstx.UndoResult
	if err := Undo(context.Background(), dir, fstx.UndoOptions{StateDir: e.state, Lock: testLock}, func(r fstx.UndoResult) error {
		rs = append(rs, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rs
}

// storeFiles maps session id → store files holding it (by header).
func storeFiles(t *testing.T, target string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(target, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), ingest.TempPrefix) {
			if id, ok := session.ReadHeaderID(p); ok {
				out[id] = append(out[id], p)
			}
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func validateFile(t *testing.T, path string) validate.Result {
	t.Helper()
	res, err := validate.File(context.Background(), &ingest.Reader{MaxDepth: 1}, validate.NewChecker(), path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, p string, b []byte, mode fs.FileMode, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// records decodes the complete records of a file's bytes (UseNumber).
func records(t *testing.T, name string, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	rd := ingest.Reader{MaxDepth: 0}
	_, err := rd.Read(context.Background(), bytes.NewReader(data), recFunc(func(r *ingest.Record) error {
		dec := json.NewDecoder(bytes.NewReader(r.Raw))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s line %d: %w", name, r.Line, err)
		}
		out = append(out, v)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type recFunc func(*ingest.Record) error

func (f recFunc) Record(r *ingest.Record) error { return f(r) }
func (recFunc) Issue(ingest.Issue)              {}

var hex8 = regexp.MustCompile(`^[0-9a-f]{8}$`)

// checkUpgradedCopy asserts that a store file parses to the source's
// values plus exactly the documented upgrades (SPEC.md §2.1): version 4,
// timestamp → createdAt, parentSession → parentSessionId (wantParent when
// not ""), v1 ids and parentIds added (8 hex, unique, chained), v1
// compaction firstKeptEntryIndex → firstKeptEntryId, v1/v2 hookMessage →
// custom. It is written independently of package upgrade.
func checkUpgradedCopy(t *testing.T, name string, src, dst []byte, wantParent string) {
	t.Helper()
	sv, dv := records(t, name+" (source)", src), records(t, name+" (copy)", dst)
	if len(sv) != len(dv) {
		t.Errorf("%s: %d records in the source, %d in the copy", name, len(sv), len(dv))
		return
	}
	if len(sv) == 0 {
		t.Errorf("%s: no records", name)
		return
	}
	hs, hd := clone(sv[0]), dv[0]
	version := 1
	if v, ok := hs["version"].(json.Number); ok {
		n, _ := v.Int64()
		version = int(n)
	}
	hs["version"] = json.Number("4")
	if ts, ok := hs["timestamp"]; ok {
		delete(hs, "timestamp")
		if _, has := hs["createdAt"]; !has {
			hs["createdAt"] = ts
		}
	}
	if _, ok := hs["parentSession"]; ok {
		delete(hs, "parentSession")
		got, _ := hd["parentSessionId"].(string)
		if got == "" || (wantParent != "" && got != wantParent) {
			t.Errorf("%s: parentSessionId %v, want %q", name, hd["parentSessionId"], wantParent)
		}
		hs["parentSessionId"] = hd["parentSessionId"]
	}
	if !reflect.DeepEqual(hs, hd) {
		t.Errorf("%s: header\n got %v\nwant %v", name, hd, hs)
	}
	ids := map[string]bool{}
	prev := ""
	for i := 1; i < len(sv); i++ {
		want, got := clone(sv[i]), dv[i]
		if version == 1 {
			id, _ := got["id"].(string)
			if orig, had := want["id"]; had {
				if orig != got["id"] {
					t.Errorf("%s: record %d id %v changed to %v", name, i, orig, got["id"])
				}
			} else if !hex8.MatchString(id) {
				t.Errorf("%s: record %d has id %q, want 8 lowercase hex", name, i, id)
			}
			if ids[id] {
				t.Errorf("%s: id %s used twice", name, id)
			}
			ids[id] = true
			if _, had := want["parentId"]; !had {
				if (i == 1 && got["parentId"] != nil) || (i > 1 && got["parentId"] != prev) {
					t.Errorf("%s: record %d parentId %v, want %q", name, i, got["parentId"], prev)
				}
			}
			want["id"], want["parentId"] = got["id"], got["parentId"]
			if idx, ok := want["firstKeptEntryIndex"].(json.Number); ok && want["type"] == "compaction" {
				if n, _ := idx.Int64(); n >= 1 && int(n) < len(dv) {
					delete(want, "firstKeptEntryIndex")
					want["firstKeptEntryId"] = dv[n]["id"]
				}
			}
			prev = id
		}
		if version <= 2 && want["type"] == "message" {
			if msg, ok := want["message"].(map[string]any); ok && msg["role"] == "hookMessage" {
				msg["role"] = "custom"
			}
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: record %d\n got %v\nwant %v", name, i, got, want)
		}
	}
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	_ = dec.Decode(&out)
	return out
}

// Session builders for hand-made cases.

const tsBase = "2025-06-01T10:00:00.000Z"

func header(id, version string, extra string) string {
	v := ""
	if version != "" {
		v = `,"version":` + version
	}
	return `{"type":"session"` + v + `,"id":"` + id + `","timestamp":"` + tsBase + `","cwd":"/home/dev/proj"` + extra + "}\n"
}

// entries returns n v3 message entries starting at index from (ids e0000001…).
func entries(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		parent := "null"
		if i > 1 {
			parent = fmt.Sprintf(`"e%07d"`, i-1)
		}
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"type":"message","id":"e%07d","parentId":%s,"timestamp":"2025-06-01T10:00:%02d.000Z","message":{"role":"%s","content":[{"type":"text","text":"message %d"}],"timestamp":%d}}`+"\n",
			i, parent, i%60, role, i, 1748772000000+int64(i)*1000)
	}
	return b.String()
}

func v3Session(id string, n int) []byte { return []byte(header(id, "3", "") + entries(1, n)) }
