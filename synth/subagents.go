package synth

import (
	"errors"
	"sort"
	"strings"
)

// Subagent runs (Options.Subagents, SPEC.md §7.3).
//
// A subagent extension records a child's spend twice: as the usage of the
// parent's toolResult (a roll-up: the sum of the child's billed records,
// tokens and cost) and as the child's own assistant messages in a child
// session file whose header points back at the parent (parentSession, the
// parent's absolute path, as kimchi's prepareChildSessionFile writes it).
// The generator writes pi v3 parents that run one or two subagents after
// some ordinary work; each run's toolResult names its child in one of the
// link styles sessions-etl recognises (linkStyle), and about a third of the
// child files are left out, as when a child file was deleted or not synced.
//
// Counting (the manifest's usage): a child's own records count like any
// session's; its roll-up does not when the child file is in the home
// (Usage.Rollups, FileUsage.Rollups) and counts when it is not — it is then
// the only record of that spend. A parallel run's roll-up whose children
// were written only in part (SubagentRun.Split) does not count either; the
// part of each child not written (its details.results[] item's usage)
// counts, one record each. Either way each spend counts once.
// Manifest.SubagentRuns lists every run: the roll-up, its link style,
// whether it counts, and each child with its own usage and whether its file
// was written, so a test can remove a child file and know what must move
// onto the roll-up.

// linkStyle is how a roll-up's toolResult names its child.
type linkStyle uint8

const (
	// pi-subagents (SubagentResult): details.sessionFile, the child's file
	// on this machine; the usage's cost is a plain number.
	linkPiSubagents linkStyle = iota
	// kimchi (src/extensions/subagent.ts): details {durationMs, tokenUsage,
	// sessionId, sessionFile}.
	linkKimchi
	linkChildSessionID   // details.childSessionId
	linkChildSessionFile // details.childSessionFile, a path on another machine (same file name)
	linkSessionPath      // details.sessionPath, a Windows path (same file name)
	linkNestedSession    // details.session {id, path}
	linkSessionID        // details.sessionId alone
	// The tool call's arguments name the child (sessionId, as a resumed
	// run is asked for); details name none. Recognised because the child
	// points back at the parent.
	linkToolCall
	// pi-subagents' parallel run: details.results[], one item per child
	// (2 or 3) with its sessionFile and usage. About half of these runs
	// (the first always) have some of their children written and some
	// left out; the others all or none.
	linkResults
	numLinkStyles
)

var linkNames = [numLinkStyles]string{"pi-subagents", "kimchi", "childSessionId", "childSessionFile", "sessionPath",
	"session.id+path", "sessionId", "tool_call", "pi-subagents-parallel"}

// subRun is one subagent tool call of a family's root session.
type subRun struct {
	link     linkStyle
	children []int // indexes of the children in famSpec.files
}

// subChild is what the plan says of a child session file.
type subChild struct {
	absent bool // not written (deleted, or not synced to this machine)
}

// SubagentRun is one subagent tool call in the manifest.
type SubagentRun struct {
	Parent          string          `json:"parent"` // the parent's path, relative to the home
	ParentSessionID string          `json:"parent_session_id"`
	EntryID         string          `json:"entry_id"` // the toolResult carrying the roll-up
	ToolCallID      string          `json:"tool_call_id"`
	Link            string          `json:"link"`            // how details name the child (linkNames)
	Counted         bool            `json:"counted"`         // the roll-up itself counts: no child file was written
	Split           bool            `json:"split,omitempty"` // some child files were written, some not: the parts (results[].usage) of the children not written count
	Usage           KindUsage       `json:"usage"`           // the roll-up's tokens and recorded cost
	Children        []SubagentChild `json:"children"`
}

// SubagentChild is one child session of a run.
type SubagentChild struct {
	SessionID string    `json:"session_id"`
	Path      string    `json:"path"`    // relative to the home (where it would be, when absent)
	Present   bool      `json:"present"` // the file was written
	Usage     KindUsage `json:"usage"`   // the child's own billed records (its file's usage when present)
}

func (g *generator) addRun(r SubagentRun) {
	g.mu.Lock()
	g.runs = append(g.runs, r)
	g.mu.Unlock()
}

func (g *generator) sortedRuns() []SubagentRun {
	sort.Slice(g.runs, func(i, j int) bool {
		a, b := g.runs[i], g.runs[j]
		if a.Parent != b.Parent {
			return a.Parent < b.Parent
		}
		return a.EntryID < b.EntryID
	})
	return g.runs
}

// addSubagentRuns plans the subagent families: about one per 25 sessions
// (at least 5), each a pi v3 root with one or two runs (two until every
// link style has been used, so every home has each). The first family's
// first child is always written and the second family's always left out,
// so a home has both cases. The children of a parallel run (linkResults)
// are written in part in about half of the runs, the first one always (a
// roll-up read in part: only the parts of the children not read count);
// in the others all or none. Its random source is its own: the rest of the
// plan is the one drawn without the option (only --size scaling takes the
// new files into account).
func (p *plan) addSubagentRuns(opts Options) {
	r := newRNG(mix64(opts.Seed ^ 0x7375626167656e74)) // "subagent"
	style := 0
	splitDone := false
	for k := range max(5, opts.Sessions/25) {
		proj := r.intn(len(projects))
		root := fileSpec{kind: kSession, ver: vPi3, layout: layPiSessions, project: proj,
			start: startTime(r, vPi3, proj), target: r.logUniform(8<<10, 64<<10), parent: -1, special: "subagent_run"}
		fam := famSpec{files: []fileSpec{root}}
		runs := 1 + r.intn(2)
		if style < int(numLinkStyles) {
			runs = 2
		}
		for i := range runs {
			run := subRun{link: linkStyle(style % int(numLinkStyles))}
			style++
			absent := r.pct(33)
			if i == 0 && k < 2 {
				absent = k == 1
			}
			kids := 1
			split := false
			if run.link == linkResults {
				kids = 2 + r.intn(2)
				split = !splitDone || r.pct(50)
				splitDone = true
			}
			gone := -1 // in a split run: one child always left out, one always written
			if split {
				gone = r.intn(kids)
			}
			for j := range kids {
				ch := fileSpec{kind: kSubagent, ver: vPi3, layout: layPiSessions, project: proj, parent: 0,
					target: r.logUniform(4<<10, 32<<10), special: "subagent_run"}
				ch.subagent.absent = absent
				if split {
					ch.subagent.absent = j == gone || (j != (gone+1)%kids && r.pct(50))
				}
				run.children = append(run.children, len(fam.files))
				fam.files = append(fam.files, ch)
			}
			fam.runs = append(fam.runs, run)
		}
		p.fams = append(p.fams, fam)
	}
}

// subagentFamily writes a family planned by addSubagentRuns: the parent
// (ordinary turns, then one turn per run) and the children that are not
// absent.
func (fg *famGen) subagentFamily(spec *famSpec) ([]*fileOut, *tally, error) {
	g := fg.generator
	pfs := &spec.files[0]
	p := fg.newSess(pfs)
	p.hdrTs = pfs.start
	p.rel = p.relPath(pfs.layout)
	p.buildHeader()
	p.bytes = int64(len(p.header)) + 1
	p.target = pfs.target
	p.start()
	p.converse(1)
	kids := make([]*sess, len(spec.files))
	runs := make([]SubagentRun, len(spec.runs))
	for ri := range spec.runs {
		if err := fg.ctx.Err(); err != nil {
			return nil, nil, err
		}
		runs[ri] = fg.subagentTurn(p, spec, &spec.runs[ri], kids)
	}
	if fg.err != nil {
		return nil, nil, fg.err
	}
	outs := make([]*fileOut, 0, len(spec.files))
	for i := range spec.files {
		s := p
		if i > 0 {
			if spec.files[i].subagent.absent {
				continue
			}
			s = kids[i]
		}
		fo, out, err := fg.render(s, &spec.files[i], s.rel, len(s.lines))
		if err != nil {
			return nil, nil, err
		}
		if err := g.write(fo, out); err != nil {
			return nil, nil, err
		}
		outs = append(outs, fo)
	}
	t := g.count(outs)
	for _, fo := range outs {
		fo.recs = nil
	}
	for _, r := range runs {
		g.addRun(r)
	}
	return outs, t, nil
}

// subagentTurn writes one run into the parent: the user's request, the
// assistant's subagent tool call, the child sessions (in kids), and the
// toolResult rolling up their spend, then the assistant's answer.
func (fg *famGen) subagentTurn(p *sess, spec *famSpec, run *subRun, kids []*sess) SubagentRun {
	g := fg.generator
	p.adv(20000, 900000)
	user := p.userMsg(fill(p.r, pick(p.r, userPrompts), p.project), 0)
	task := p.text(userPrompts, 160)
	agent := pick(p.r, []string{"scout", "planner", "worker", "reviewer"})
	for _, ci := range run.children {
		kids[ci] = fg.newSess(&spec.files[ci])
	}
	c := toolCall{kind: tSubagent, id: p.callID()}
	args := []byte{'{'}
	if run.link == linkResults {
		args = append(key(args, "tasks"), '[')
		for i := range run.children {
			if i > 0 {
				args = append(args, ',')
			}
			args = append(args, '{')
			args = kvStr(args, "agent", agent)
			args = kvStr(args, "task", task)
			args = append(args, '}')
		}
		args = append(args, ']')
	} else {
		args = kvStr(args, "agent", agent)
		args = kvStr(args, "task", task)
	}
	if run.link == linkToolCall {
		args = kvStr(args, "sessionId", kids[run.children[0]].id)
	}
	c.args = append(args, '}')
	p.assistant([]toolCall{c}, p.text(answerLines, 80), "", "toolUse", "", false)

	mr := SubagentRun{Parent: p.rel, ParentSessionID: p.id, ToolCallID: c.id, Link: linkNames[run.link], Counted: false}
	var sum usage
	var parts, goneParts []usage
	written := 0
	at := p.t
	for _, ci := range run.children {
		cfs := &spec.files[ci]
		k := kids[ci]
		k.hdrTs = at + p.r.between(150, 2500)
		k.parentID, k.parentPath = p.id, g.abs(p.rel)
		k.rel = k.relPath(layPiSessions)
		k.buildHeader()
		k.bytes = int64(len(k.header)) + 1
		k.target = cfs.target
		k.start()
		k.converse(1)
		k.finish()
		child := SubagentChild{SessionID: k.id, Path: k.rel, Present: !cfs.subagent.absent}
		var part usage
		for i := range k.lines {
			if ln := &k.lines[i]; ln.hasRec {
				sum = sum.add(ln.rec.u)
				part = part.add(ln.rec.u)
				child.Usage.add(ln.rec.u)
				if costed(ln.rec.u) {
					child.Usage.CostRecordedMicros += ln.rec.u.costTotal()
				}
			}
			at = max(at, k.lines[i].ts)
		}
		child.Usage.CostRecorded = microsToUSD(child.Usage.CostRecordedMicros)
		part.style = styleCostNumber
		parts = append(parts, part)
		if child.Present {
			written++
		} else {
			goneParts = append(goneParts, part)
		}
		mr.Children = append(mr.Children, child)
	}
	// The roll-up counts whole when no child was written; read in part, the
	// parts (results[].usage) of the children not written count instead;
	// only a parallel run has parts (the other styles name one child).
	mr.Counted = written == 0
	mr.Split = written > 0 && len(goneParts) > 0
	p.t = max(p.t, at) + p.r.between(100, 3000)
	sum.style = styleFull
	if run.link == linkPiSubagents || run.link == linkResults {
		sum.style = styleCostNumber
	}

	k := kids[run.children[0]]
	b, id := p.begin("message", 1024)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "toolResult")
	b = kvStr(b, "toolCallId", c.id)
	b = kvStr(b, "toolName", toolNames[tSubagent])
	b = append(key(b, "content"), '[', '{')
	b = kvStr(b, "type", "text")
	b = kvStr(b, "text", p.text(answerLines, 300))
	b = append(b, '}', ']')
	b = append(key(b, "details"), '{')
	abs := g.abs(k.rel)
	elsewhere := "/home/dev/" + k.rel
	switch run.link {
	case linkPiSubagents:
		b = kvStr(b, "agent", agent)
		b = kvStr(b, "sessionFile", abs)
		b = kvInt(b, "turns", int64(max(1, len(k.turns))))
	case linkKimchi:
		b = kvInt(b, "durationMs", at-k.hdrTs)
		b = append(key(b, "tokenUsage"), '{')
		b = kvInt(b, "input", sum.in)
		b = kvInt(b, "output", sum.out)
		b = kvInt(b, "cacheRead", sum.cr)
		b = kvInt(b, "cacheWrite", sum.cw)
		b = append(b, '}')
		b = kvStr(b, "sessionId", k.id)
		b = kvStr(b, "sessionFile", abs)
	case linkChildSessionID:
		b = kvStr(b, "childSessionId", k.id)
	case linkChildSessionFile:
		b = kvStr(b, "childSessionFile", elsewhere)
	case linkSessionPath:
		b = kvStr(b, "sessionPath", `C:\Users\dev\`+strings.ReplaceAll(k.rel, "/", `\`))
	case linkNestedSession:
		b = append(key(b, "session"), '{')
		b = kvStr(b, "id", k.id)
		b = kvStr(b, "path", elsewhere)
		b = append(b, '}')
	case linkSessionID:
		b = kvStr(b, "sessionId", k.id)
		b = kvStr(b, "status", "completed")
	case linkToolCall:
		b = kvStr(b, "status", "completed")
		b = kvInt(b, "turns", int64(max(1, len(k.turns))))
	case linkResults:
		b = kvStr(b, "mode", "parallel")
		b = append(key(b, "results"), '[')
		for i, ci := range run.children {
			if i > 0 {
				b = append(b, ',')
			}
			part := parts[i]
			part.style = styleCostNumber
			b = append(b, '{')
			b = kvStr(b, "agent", agent)
			b = kvInt(b, "exitCode", 0)
			b = kvStr(b, "sessionFile", g.abs(kids[ci].rel))
			b = appendUsage(key(b, "usage"), part)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	b = appendUsage(key(b, "usage"), sum)
	b = kvBool(b, "isError", false)
	b = kvInt(b, "timestamp", p.t)
	b = append(b, '}', '}')
	rec := p.bill(kindToolResult, sum, id, p.t)
	rec.covered = !mr.Counted
	if mr.Split {
		rec.parts = goneParts
	}
	p.commit(b, id, 0, rec, -1)
	p.ctx += 400
	mr.EntryID = id
	mr.Usage.add(sum)
	if costed(sum) {
		mr.Usage.CostRecordedMicros = sum.costTotal()
		mr.Usage.CostRecorded = microsToUSD(mr.Usage.CostRecordedMicros)
	}

	end := p.assistant(nil, p.text(answerLines, int(p.r.logUniform(150, 1500))), "", "stop", "", false)
	p.lines[end].turnEnd = true
	p.turns = append(p.turns, turnRef{start: user, end: end, epoch: p.epoch})
	if id == "" {
		fg.err = errors.New("synth: a subagent roll-up without an entry id")
	}
	return mr
}
