package synth

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubagentsOnlyAdd: Options.Subagents adds files and nothing else —
// every file of the home generated without it is there, byte for byte, and
// the manifest's totals grow by exactly the subagent files' counted usage.
func TestSubagentsOnlyAdd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "home")
	off, err := Generate(context.Background(), Options{Out: out, Sessions: 50, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, out)
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	on, err := Generate(context.Background(), Options{Out: out, Sessions: 50, Seed: 9, Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	after := hashTree(t, out)
	for p, h := range before {
		if p != "manifest.json" && after[p] != h {
			t.Errorf("%s differs with Subagents: %s vs %s", p, h, after[p])
		}
	}
	if off.Subagents || len(off.SubagentRuns) != 0 || off.Usage.Rollups != 0 {
		t.Errorf("without Subagents the manifest says subagents %v, %d runs, %d roll-ups", off.Subagents, len(off.SubagentRuns), off.Usage.Rollups)
	}
	var added Tokens
	var addedMicros int64
	for _, f := range on.Files {
		if f.Special != "subagent_run" {
			continue
		}
		if _, ok := before[filepath.FromSlash(f.Path)]; ok {
			t.Errorf("%s: a subagent file at a path the home without Subagents has", f.Path)
		}
		added.Records += f.Usage.Records
		added.Input += f.Usage.Input
		added.Output += f.Usage.Output
		added.CacheRead += f.Usage.CacheRead
		added.CacheWrite += f.Usage.CacheWrite
		added.TotalTokens += f.Usage.TotalTokens
		addedMicros += f.Usage.CostRecordedMicros
	}
	want := off.Usage.Tokens
	want.merge(added)
	if on.Usage.Tokens != want || on.Usage.CostRecordedMicros != off.Usage.CostRecordedMicros+addedMicros {
		t.Errorf("with Subagents: %+v $%d µ; without %+v $%d µ plus the subagent files' %+v $%d µ",
			on.Usage.Tokens, on.Usage.CostRecordedMicros, off.Usage.Tokens, off.Usage.CostRecordedMicros, added, addedMicros)
	}
}

// TestSubagentRuns checks a home with subagent runs against its files: each
// roll-up's usage (read back from the parent's line) is the sum of its
// children's records; details name the child in the run's link style; a
// written child's header points at the parent's file; a child left out is
// not on disk; a roll-up counts when no child was written, and a parallel
// run written in part (Split) has its results[] items carry each child's
// usage; every link style, both a written and a missing child, and a run
// written in part occur.
func TestSubagentRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "home")
	m, err := Generate(context.Background(), Options{Out: out, Sessions: 200, Seed: 4, Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*File{}
	for i := range m.Files {
		files[m.Files[i].Path] = &m.Files[i]
	}
	styles := map[string]bool{}
	var present, absent, notCounted, several, split int64
	for _, r := range m.SubagentRuns {
		styles[r.Link] = true
		parent := files[r.Parent]
		if parent == nil || parent.SessionID == nil || *parent.SessionID != r.ParentSessionID {
			t.Fatalf("run %s: parent %s not in the manifest", r.EntryID, r.Parent)
		}
		line := findLine(t, filepath.Join(out, filepath.FromSlash(r.Parent)), r.EntryID)
		var e struct {
			Message struct {
				Role, ToolCallID, ToolName string
				Details                    map[string]any
				Usage                      struct {
					Input, Output, CacheRead, CacheWrite int64
					Cost                                 json.RawMessage
				}
			}
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		msg := e.Message
		if msg.Role != "toolResult" || msg.ToolCallID != r.ToolCallID || msg.ToolName != "subagent" {
			t.Errorf("run %s: %s %s %s", r.EntryID, msg.Role, msg.ToolCallID, msg.ToolName)
		}
		var sum KindUsage
		written := 0
		var items []struct {
			SessionFile string
			Usage       struct {
				Input, Output, CacheRead, CacheWrite int64
				Cost                                 json.Number
			}
		}
		if r.Link == linkNames[linkResults] {
			raw, _ := json.Marshal(msg.Details["results"])
			if err := json.Unmarshal(raw, &items); err != nil || len(items) != len(r.Children) {
				t.Fatalf("run %s: results %s (%v)", r.EntryID, raw, err)
			}
		}
		for i, c := range r.Children {
			if items != nil {
				u := items[i].Usage
				if u.Input != c.Usage.Input || u.Output != c.Usage.Output || u.CacheRead != c.Usage.CacheRead || u.CacheWrite != c.Usage.CacheWrite ||
					micros(u.Cost) != c.Usage.CostRecordedMicros || !strings.HasSuffix(items[i].SessionFile, c.Path) {
					t.Errorf("run %s: results[%d] %+v, child %+v", r.EntryID, i, items[i], c)
				}
			}
			sum.Tokens.merge(c.Usage.Tokens)
			sum.CostRecordedMicros += c.Usage.CostRecordedMicros
			details, _ := json.Marshal(msg.Details)
			if r.Link == linkNames[linkToolCall] {
				// the tool call names the child; details do not
				call := findLine(t, filepath.Join(out, filepath.FromSlash(r.Parent)), r.ToolCallID)
				if !strings.Contains(string(call), `"sessionId":"`+c.SessionID+`"`) || strings.Contains(string(details), c.SessionID) {
					t.Errorf("run %s (%s): tool call %.300s, details %s: want the child %s named by the call alone", r.EntryID, r.Link, call, details, c.SessionID)
				}
			} else if !strings.Contains(string(details), c.SessionID) {
				t.Errorf("run %s (%s): details %s do not name child %s", r.EntryID, r.Link, details, c.SessionID)
			}
			p := filepath.Join(out, filepath.FromSlash(c.Path))
			if !c.Present {
				absent++
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("child %s was left out but %s exists (%v)", c.SessionID, c.Path, err)
				}
				continue
			}
			present++
			written++
			f := files[c.Path]
			if f == nil || f.Kind != "subagent" || f.ParentSessionID == nil || *f.ParentSessionID != r.ParentSessionID {
				t.Errorf("child %s: manifest file %+v", c.SessionID, f)
				continue
			}
			if f.Usage.Records != c.Usage.Records || f.Usage.Input != c.Usage.Input || f.Usage.CostRecordedMicros != c.Usage.CostRecordedMicros {
				t.Errorf("child %s: file usage %+v, run says %+v", c.SessionID, f.Usage, c.Usage)
			}
			var hdr struct{ ID, ParentSession string }
			if err := json.Unmarshal(firstLine(t, p), &hdr); err != nil {
				t.Fatal(err)
			}
			if hdr.ID != c.SessionID || hdr.ParentSession != filepath.Join(out, filepath.FromSlash(r.Parent)) {
				t.Errorf("child %s: header id %s parentSession %s", c.SessionID, hdr.ID, hdr.ParentSession)
			}
		}
		if len(r.Children) > 1 {
			several++
		}
		inPart := written > 0 && written < len(r.Children)
		if inPart {
			split++
			if r.Link != linkNames[linkResults] {
				t.Errorf("run %s (%s): children %+v written in part", r.EntryID, r.Link, r.Children)
			}
		}
		if r.Counted != (written == 0) || r.Split != inPart {
			t.Errorf("run %s: counted %v split %v with children %+v", r.EntryID, r.Counted, r.Split, r.Children)
		}
		if written > 0 {
			notCounted++
		}
		u := msg.Usage
		if u.Input != sum.Input || u.Output != sum.Output || u.CacheRead != sum.CacheRead || u.CacheWrite != sum.CacheWrite ||
			r.Usage.Records != 1 || r.Usage.TotalTokens != sum.TotalTokens || r.Usage.CostRecordedMicros != sum.CostRecordedMicros {
			t.Errorf("run %s: roll-up %+v (manifest %+v), children's sum %+v", r.EntryID, u, r.Usage, sum)
		}
		// pi-subagents writes the cost as a plain number, the others {…,total}.
		piSubagents := r.Link == linkNames[linkPiSubagents] || r.Link == linkNames[linkResults]
		plain := len(u.Cost) > 0 && u.Cost[0] != '{'
		if plain != piSubagents {
			t.Errorf("run %s (%s): cost %s", r.EntryID, r.Link, u.Cost)
		}
		if piSubagents && micros(json.Number(u.Cost)) != sum.CostRecordedMicros {
			t.Errorf("run %s: cost %s, children's %d µ$", r.EntryID, u.Cost, sum.CostRecordedMicros)
		}
	}
	for _, name := range linkNames {
		if !styles[name] {
			t.Errorf("no run links its child with %s", name)
		}
	}
	if several == 0 || split == 0 {
		t.Errorf("%d runs name several children, %d were written in part: both must occur", several, split)
	}
	if present == 0 || absent == 0 {
		t.Errorf("%d written and %d missing child files: both cases must occur", present, absent)
	}
	if m.Usage.Rollups != notCounted || m.Usage.ByKind["tool_result"] == nil {
		t.Errorf("manifest counts %d roll-ups not counted, the runs say %d", m.Usage.Rollups, notCounted)
	}
	if !m.Subagents {
		t.Error("manifest does not record Subagents")
	}
}

func firstLine(t *testing.T, p string) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		t.Fatalf("%s: no first line", p)
	}
	return append([]byte(nil), sc.Bytes()...)
}

// findLine returns the line of the entry with id in the file at p.
func findLine(t *testing.T, p, id string) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	needle := `"id":"` + id + `"`
	for sc.Scan() {
		if strings.Contains(sc.Text(), needle) {
			return append([]byte(nil), sc.Bytes()...)
		}
	}
	t.Fatalf("%s: no entry %s", path.Base(p), id)
	return nil
}
