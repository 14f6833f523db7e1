package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// copyTree copies src into a new temporary directory, keeping mtimes, and
// returns the copy's path.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, b, 0o640); err != nil {
			return err
		}
		return os.Chtimes(out, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

type runOut struct {
	sum     Summary
	results map[string]FileResult // by path relative to the root
}

func runMigrate(t *testing.T, root string, mod func(*Options)) runOut {
	t.Helper()
	state := t.TempDir()
	opts := Options{Roots: []ingest.Root{{Path: root, Recursive: true}}, Workers: 2, Backup: true,
		RunsDir: filepath.Join(state, "runs"), StateDir: state, Lock: fstx.LockConfig{Stale: 10 * time.Second, Update: 50 * time.Millisecond, Poll: 10 * time.Millisecond}}
	if mod != nil {
		mod(&opts)
	}
	out := runOut{results: map[string]FileResult{}}
	sum, err := Run(context.Background(), opts, func(r FileResult) error {
		rel, _ := filepath.Rel(root, r.Path)
		out.results[filepath.ToSlash(rel)] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.sum = sum
	return out
}

type fileState struct {
	data  []byte
	mtime time.Time
	mode  os.FileMode
}

func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = fileState{data: b, mtime: fi.ModTime(), mode: fi.Mode()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// records returns the complete JSON records of a file's bytes, decoded
// with UseNumber, with their raw bytes.
func records(t *testing.T, data []byte) (vals []map[string]any, raws [][]byte) {
	t.Helper()
	var rd ingest.Reader
	rd.MaxDepth = 0
	_, err := rd.Read(context.Background(), bytes.NewReader(data), recFunc(func(r *ingest.Record) error {
		dec := json.NewDecoder(bytes.NewReader(r.Raw))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", r.Line, err)
		}
		vals = append(vals, v)
		raws = append(raws, bytes.Clone(r.Raw))
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return vals, raws
}

type recFunc func(*ingest.Record) error

func (f recFunc) Record(r *ingest.Record) error { return f(r) }
func (recFunc) Issue(ingest.Issue)              {}

var hex8 = regexp.MustCompile(`^[0-9a-f]{8}$`)

// checkEquivalent asserts SPEC.md §2.2: the migrated records parse to the
// original values plus exactly the documented changes, and every record
// the upgrade does not need to change keeps its exact bytes.
func checkEquivalent(t *testing.T, name string, before, after []byte) {
	t.Helper()
	bv, braw := records(t, before)
	av, araw := records(t, after)
	if len(bv) != len(av) {
		t.Fatalf("%s: %d records before, %d after", name, len(bv), len(av))
	}
	if len(bv) == 0 {
		return
	}
	// header
	hb, ha := clone(bv[0]), av[0]
	version := 1
	if v, ok := hb["version"].(json.Number); ok {
		n, _ := v.Int64()
		version = int(n)
	}
	hb["version"] = json.Number("4")
	if ts, ok := hb["timestamp"]; ok {
		delete(hb, "timestamp")
		if _, has := hb["createdAt"]; !has {
			hb["createdAt"] = ts
		}
	}
	if _, ok := hb["parentSession"]; ok {
		if _, kept := ha["parentSession"]; !kept {
			delete(hb, "parentSession")
			if _, ok := ha["parentSessionId"].(string); !ok {
				t.Errorf("%s: parentSession replaced without a string parentSessionId", name)
			}
			hb["parentSessionId"] = ha["parentSessionId"]
		}
	}
	if !reflect.DeepEqual(hb, ha) {
		t.Errorf("%s: header\n got %v\nwant %v", name, ha, hb)
	}
	ids := map[string]bool{}
	prevID := ""
	for i := 1; i < len(bv); i++ {
		want, got := clone(bv[i]), av[i]
		if version == 1 {
			id, _ := got["id"].(string)
			if _, had := want["id"]; !had {
				if !hex8.MatchString(id) {
					t.Errorf("%s: record %d has id %q, want 8 lowercase hex", name, i, id)
				}
			}
			if ids[id] {
				t.Errorf("%s: id %s used twice", name, id)
			}
			ids[id] = true
			_, hadID := want["id"]
			if p, had := want["parentId"]; !had || (p == nil && !hadID && i > 1) {
				if i == 1 && got["parentId"] != nil || i > 1 && got["parentId"] != prevID {
					t.Errorf("%s: record %d parentId %v, want %q", name, i, got["parentId"], prevID)
				}
			}
			want["id"], want["parentId"] = got["id"], got["parentId"]
			if idx, ok := want["firstKeptEntryIndex"].(json.Number); ok && want["type"] == "compaction" {
				n, _ := idx.Int64()
				if n >= 1 && int(n) < len(av) {
					delete(want, "firstKeptEntryIndex")
					want["firstKeptEntryId"] = av[n]["id"]
				}
			}
			prevID = id
		}
		if version <= 2 && want["type"] == "message" {
			if msg, ok := want["message"].(map[string]any); ok && msg["role"] == "hookMessage" {
				msg["role"] = "custom"
			}
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: record %d\n got %v\nwant %v", name, i, got, want)
		}
		if reflect.DeepEqual(bv[i], got) && !bytes.Equal(braw[i], araw[i]) {
			t.Errorf("%s: record %d is unchanged in value but not byte-identical", name, i)
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

var _ = io.EOF
