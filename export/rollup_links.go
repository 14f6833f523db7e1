package export

import (
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// maxRecordDepth is the nesting depth export's readers record: the root
// (0), message (1), details or content (2), results[] or a content block
// (3), an item or arguments (4), its members (5) and a nested session's
// (6).
const maxRecordDepth = 6

// childRef is one child session a subagent roll-up names: its id, its
// file, or both; and, for an item of a results[] or children[] array, the
// item's own usage object (pi-subagents' details.results[].usage: that
// child's part of the roll-up), -1 when it has none.
type childRef struct {
	id, path optStr
	usage    int
}

func (c childRef) ok() bool { return c.id.ok || c.path.ok }

// childOf reads the child an object names (SPEC.md §7.3): the id in
// childSessionId, sessionId or session.id, the file in childSessionFile,
// sessionFile, sessionPath or session.path.
func childOf(t *ingest.Tape, obj int) childRef {
	nested := t.Get(obj, "session")
	if t.Kind(nested) != ingest.KindObject {
		nested = -1
	}
	first := func(nodes ...int) optStr {
		for _, n := range nodes {
			if s := nonEmpty(t, n); s.ok {
				return s
			}
		}
		return optStr{}
	}
	return childRef{
		usage: -1,
		id:    first(t.Get(obj, "childSessionId"), t.Get(obj, "sessionId"), t.Get(nested, "id")),
		path:  first(t.Get(obj, "childSessionFile"), t.Get(obj, "sessionFile"), t.Get(obj, "sessionPath"), t.Get(nested, "path")),
	}
}

// childrenOf reads the children an object names: itself (childOf), else
// each object of its "results" or "children" array that names one
// (pi-subagents' details.results[].sessionFile: one item per child of a
// single, parallel or chain run).
func childrenOf(t *ingest.Tape, obj int) []childRef {
	if t.Kind(obj) != ingest.KindObject {
		return nil
	}
	if c := childOf(t, obj); c.ok() {
		return []childRef{c}
	}
	for _, key := range [...]string{"results", "children"} {
		arr := t.Get(obj, key)
		if t.Kind(arr) != ingest.KindArray {
			continue
		}
		var out []childRef
		t.Children(arr, func(n int) bool {
			if t.Kind(n) == ingest.KindObject {
				if c := childOf(t, n); c.ok() {
					if u := t.Get(n, "usage"); t.Kind(u) == ingest.KindObject {
						c.usage = u
					}
					out = append(out, c)
				}
			}
			return true
		})
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// noteCallLinks keeps the children a toolCall block's arguments name, for
// the tool result that answers it (rollupLink).
func (x *extractor) noteCallLinks(t *ingest.Tape, args int, callID optStr) {
	if !callID.ok {
		return
	}
	if cs := childrenOf(t, args); len(cs) > 0 {
		for i := range cs {
			cs[i].usage = -1 // a node of this record's tape: not kept
		}
		x.callLinks[callID.v] = cs
	}
}

// rollupLink reads the child sessions a subagent tool result's usage rolls
// up (SPEC.md §7.3): those its details name (childrenOf), else those the
// tool call it answers names in its arguments (rollup_link tool_call: such
// a child is taken only when it points back at this session). Several
// children are kept one per line, the ids in childID and the files in
// childPath, aligned (an empty line where a child has no id or no file).
// Which scanned sessions they are, and so whether the roll-up counts, is
// decided across files (queries/export.sql derive_rollups). It returns the
// children named.
func (x *extractor) rollupLink(t *ingest.Tape, details int, callID optStr, row *usageRow) []childRef {
	cs, how := childrenOf(t, details), "details"
	if len(cs) == 0 && callID.ok {
		cs, how = x.callLinks[callID.v], "tool_call"
	}
	if len(cs) == 0 {
		return nil
	}
	row.rollupLink = someStr(how)
	join := func(get func(childRef) optStr) optStr {
		var b strings.Builder
		named := false
		for i, c := range cs {
			if i > 0 {
				b.WriteByte('\n')
			}
			if v := get(c); v.ok {
				b.WriteString(v.v)
				named = true
			}
		}
		if !named {
			return optStr{}
		}
		return someStr(b.String())
	}
	row.childID = join(func(c childRef) optStr { return c.id })
	row.childPath = join(func(c childRef) optStr { return c.path })
	return cs
}

// splitRollup returns the rows a roll-up naming several children is split
// into (SPEC.md §7.3), beside the roll-up's own row: one part per child
// whose results[] item carries its own usage (rollup_part k for the k-th
// child named, that usage, priced like the roll-up), and one rest row
// (rollup_part 0), made as a copy of the roll-up that queries/export.sql
// derive_rollup_rest reduces to what neither the parts nor the children
// read stand for. Which of these rows count is decided across files
// (derive_rollups, rollup_covered): the roll-up itself when no child was
// read, nothing when all were, else the parts of the children not read
// and the rest. A roll-up naming one child is not split.
func (x *extractor) splitRollup(t *ingest.Tape, cs []childRef, whole *usageRow, r *ingest.Record, e *entryRow,
	tsRaw, msgTSRaw []byte, m model) []usageRow {
	if len(cs) < 2 {
		return nil
	}
	var out []usageRow
	for k, c := range cs {
		if c.usage < 0 {
			continue
		}
		part := x.usage(t, c.usage, KindToolResult, r, e, tsRaw, msgTSRaw, m)
		part.rollupLink = whole.rollupLink
		part.childID, part.childPath = c.id, c.path
		part.rollupPart = someInt(int64(k + 1))
		out = append(out, part)
	}
	rest := *whole
	rest.rollupPart = someInt(0)
	return append(out, rest)
}
