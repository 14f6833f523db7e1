package synth

import (
	"math/bits"
	"strconv"
	"strings"
)

// recKind is the kind of a billed record (SPEC.md §4).
type recKind uint8

const (
	kindAssistant recKind = iota
	kindToolResult
	kindCompaction
	kindBranchSummary
	kindSessionSummary
	kindChildUsage
	kindUsageEntry // pi "usage" entries (appendUsage: the cache warmer)
	kindModelUsage // oh-my-pi "model_usage" entries (side calls)
	numKinds
)

var recKindNames = [numKinds]string{"assistant", "tool_result", "compaction", "branch_summary", "session_summary", "child_usage",
	"usage_entry", "model_usage"}

// recKey is a billed record's identity: entry id and entry timestamp, or for
// v1 entries without an id, entry timestamp, message timestamp and usage.
type recKey struct {
	id              string
	ts, msgTs       int64
	in, out, cr, cw int64
}

type billed struct {
	kind recKind
	u    usage
	key  recKey
	// covered marks a subagent roll-up with child session files in the
	// home: not counted, the children's own records are (SPEC.md §7.3);
	// parts, when some children's files are not in the home, are the
	// usage of each of those (details.results[].usage), counted instead,
	// one record each.
	covered bool
	parts   []usage
}

// entryLine is one entry as written, shared (not copied) by forks and copies.
type entryLine struct {
	raw     []byte
	id      string // "" for v1 entries
	parent  int32  // index of the parent line in the same session, -1 for the first
	ts      int64  // entry timestamp, Unix ms
	asst    int16  // model index of an assistant message, -1 otherwise
	model   int16  // model in use after this line
	ctx     int32  // context tokens after this line
	turnEnd bool   // the final assistant message of a turn
	hasRec  bool
	rec     billed
}

type turnRef struct {
	start, end int32
	epoch      int
}

type toolKind uint8

const (
	tRead toolKind = iota
	tBash
	tGrep
	tFind
	tLs
	tEdit
	tWrite
	tTask
	tRLM
	tSubagent // a subagent run (Options.Subagents; never drawn by newCall)
	numTools
)

var toolNames = [numTools]string{"read", "bash", "grep", "find", "ls", "edit", "write", "task", "rlm", "subagent"}

type toolCall struct {
	kind toolKind
	w    int64 // share of the tool-output budget; 0 for fixed-size results
	id   string
	path string
	args []byte
}

type turnPlan struct {
	steps [][]toolCall
}

const (
	maxToolBytes   = 8 << 20 // one tool output at most
	thinkingLevels = "off minimal low medium high"
)

var commands = []string{
	"go test ./...", "npm test -- --run", "git status --short", "git diff --stat", "rg -n \"TODO\" src",
	"pytest -x -q", "make lint", "ls -la src", "cat package.json | jq '.scripts'", "go vet ./... && staticcheck ./...",
	"docker compose logs api --tail=200", "npx tsc --noEmit", "git log --oneline -n 20", "curl -s localhost:8080/healthz",
}

// sess is one session being written.
type sess struct {
	g          *famGen
	r          *rng
	spec       *fileSpec
	ver        variant
	id         string
	hdrTs      int64
	cwd        string
	project    string
	rel        string
	parentID   string
	parentPath string
	header     []byte
	lines      []entryLine
	leaf       int32
	t          int64
	model      int
	firstModel int
	thinking   string
	firstThink string
	ctx        int64
	cached     int64
	compactAt  int64
	idsFirst   int // entries that carry ids: -1 all, 0 none (v1), k (mixed v1)
	target     int64
	bytes      int64
	structB    int64
	structN    int64
	remW       int64
	remEntries int64
	epoch      int
	turns      []turnRef
	abandoned  []int32
	branched   bool
	lateBranch bool            // branched in the last third (branch extractions copy a long path)
	pendingImg int64           // bytes of a screenshot still to write (already in target)
	childAgg   map[int32]usage // Prime: a message's aggregateUsage so far, by line
	named      bool
	hookDone   bool
	lastSumm   int32
}

func (g *famGen) newSess(fs *fileSpec) *sess {
	r := g.r
	s := &sess{g: g, r: r, spec: fs, ver: fs.ver, id: newUUID(r), leaf: -1, idsFirst: -1, lastSumm: -1}
	if fs.ver == vPi1 {
		s.idsFirst = 0
		if fs.damage == dMixedV1 {
			s.idsFirst = r.btw(2, 3)
		}
	}
	s.project = projects[fs.project%len(projects)]
	s.cwd = "/home/dev/" + s.project
	if fs.local {
		s.model = mLocal
	} else {
		s.model = r.weighted(modelWeights)
	}
	s.firstModel = s.model
	s.thinking = "off"
	if models[s.model].reasoning {
		s.thinking = pick(r, []string{"off", "low", "medium", "medium", "high"})
	}
	s.firstThink = s.thinking
	s.ctx = r.between(2500, 12000)
	s.compactAt = r.between(90000, 160000)
	return s
}

// hasID reports whether the next entry gets an id.
func (s *sess) hasID() bool { return s.idsFirst < 0 || len(s.lines) < s.idsFirst }

func (s *sess) adv(lo, hi int64) { s.t += s.r.between(lo, hi) }

// begin starts an entry: {"type":…,"id":…,"parentId":…,"timestamp":…
func (s *sess) begin(typ string, capHint int) ([]byte, string) {
	b := make([]byte, 0, capHint+192)
	b = append(b, `{"type":`...)
	b = appendStr(b, typ)
	id := ""
	if s.hasID() {
		id = s.g.newID()
		b = kvStr(b, "id", id)
		if s.leaf < 0 || s.lines[s.leaf].id == "" {
			b = kvNull(b, "parentId")
		} else {
			b = kvStr(b, "parentId", s.lines[s.leaf].id)
		}
	}
	return kvISO(b, "timestamp", s.t), id
}

// commit appends a finished entry; pad is how many of its bytes are tool
// output (the part the size budget controls).
func (s *sess) commit(b []byte, id string, pad int64, rec *billed, asst int) int32 {
	idx := int32(len(s.lines))
	ln := entryLine{raw: b, id: id, parent: s.leaf, ts: s.t, asst: int16(asst), model: int16(s.model), ctx: int32(min(s.ctx, 1<<30))}
	if rec != nil {
		ln.hasRec, ln.rec = true, *rec
	}
	s.lines = append(s.lines, ln)
	s.leaf = idx
	s.bytes += int64(len(b)) + 1
	s.structB += int64(len(b)) - pad
	s.structN++
	if s.remEntries > 0 {
		s.remEntries--
	}
	return idx
}

func (s *sess) bill(kind recKind, u usage, id string, msgTs int64) *billed {
	k := recKey{id: id, ts: s.t}
	if id == "" {
		k = recKey{ts: s.t, msgTs: msgTs, in: u.in, out: u.out, cr: u.cr, cw: u.cw}
	}
	return &billed{kind: kind, u: u, key: k}
}

func (s *sess) fullStyle() usageStyle {
	if s.ver == vPi1 {
		return styleV1
	}
	return styleFull
}

// callUsage returns the usage of one model call on the current context and
// advances the cache state.
func (s *sess) callUsage(out int64) usage {
	prompt := min(s.ctx, 190000)
	var in, cr, cw int64
	switch models[s.model].style {
	case cacheAnthropic:
		cr = min(s.cached, prompt)
		in = min(s.r.between(1, 40), prompt-cr)
		cw = prompt - cr - in
	case cacheOpenAI:
		if s.cached > 0 && s.r.pct(85) {
			cr = min(s.cached, prompt) / 128 * 128
		}
		in = prompt - cr
	case cacheImplicit:
		if s.r.pct(50) {
			cr = min(s.cached, prompt) * 3 / 4
		}
		in = prompt - cr
	default:
		in = prompt
	}
	s.cached = prompt
	s.ctx += out
	u := priced(s.model, in, out, cr, cw)
	u.style = s.fullStyle()
	return u
}

func (s *sess) text(pool []string, n int) string { return prose(s.r, pool, n, s.project, " ") }

// ---- entries -------------------------------------------------------------

func (s *sess) userMsg(text string, image int64) int32 {
	b, id := s.begin("message", len(text)+int(image)+64)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "user")
	if s.ver == vPi1 && image == 0 && s.r.pct(50) {
		b = kvStr(b, "content", text)
	} else {
		b = append(key(b, "content"), '[', '{')
		b = kvStr(b, "type", "text")
		b = kvStr(b, "text", text)
		b = append(b, '}')
		if img := s.g.corpus.image; image > 0 {
			image = min(image, int64(len(img))/4*4)
			b = append(b, ',', '{')
			b = kvStr(b, "type", "image")
			b = append(key(b, "data"), '"')
			b = append(b, img[:image]...)
			b = append(b, '"')
			b = kvStr(b, "mimeType", "image/png")
			b = append(b, '}')
			s.ctx += 1600
		}
		b = append(b, ']')
	}
	b = kvInt(b, "timestamp", s.t)
	b = append(b, '}', '}')
	s.ctx += int64(len(text))/4 + 8
	return s.commit(b, id, image, nil, -1)
}

// assistant writes an assistant message. zero gives the all-zero usage of a
// failed request.
func (s *sess) assistant(calls []toolCall, text, thinking, stop, errMsg string, zero bool) int32 {
	msgTs := s.t
	outTok := int64(len(text)+len(thinking))/4 + s.r.between(20, 400)
	for _, c := range calls {
		outTok += int64(len(c.args))/4 + 20
	}
	if zero {
		outTok = 0
	}
	s.t += 1200 + outTok*s.r.between(8, 25) + s.r.between(0, 4000)
	var u usage
	if zero {
		u.style = s.fullStyle()
	} else {
		u = s.callUsage(outTok)
	}
	size := len(text) + len(thinking) + 400
	for _, c := range calls {
		size += len(c.args) + 80
	}
	b, id := s.begin("message", size)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "assistant")
	b = append(key(b, "content"), '[')
	if thinking != "" {
		b = append(b, '{')
		b = kvStr(b, "type", "thinking")
		b = kvStr(b, "thinking", thinking)
		b = append(b, '}')
	}
	if text != "" {
		if thinking != "" {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = kvStr(b, "type", "text")
		b = kvStr(b, "text", text)
		b = append(b, '}')
	}
	for i, c := range calls {
		if i > 0 || thinking != "" || text != "" {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = kvStr(b, "type", "toolCall")
		b = kvStr(b, "id", c.id)
		b = kvStr(b, "name", toolNames[c.kind])
		b = kvRaw(b, "arguments", c.args)
		b = append(b, '}')
	}
	b = append(b, ']')
	m := &models[s.model]
	b = kvStr(b, "api", m.api)
	b = kvStr(b, "provider", m.provider)
	b = kvStr(b, "model", m.id)
	b = appendUsage(key(b, "usage"), u)
	b = kvStr(b, "stopReason", stop)
	if errMsg != "" {
		b = kvStr(b, "errorMessage", errMsg)
	}
	b = kvInt(b, "timestamp", msgTs)
	b = append(b, '}', '}')
	return s.commit(b, id, 0, s.bill(kindAssistant, u, id, msgTs), s.model)
}

func (s *sess) callID() string {
	switch models[s.model].provider {
	case "anthropic", "openrouter":
		return randToken(s.r, "toolu_01", 22)
	case "openai":
		return randToken(s.r, "call_", 24) + "|" + randToken(s.r, "fc_", 32)
	case "google":
		return randToken(s.r, "tool_", 12)
	}
	return randToken(s.r, "call_", 9)
}

// newCall draws a tool call of a kind allowed for the session's writer.
func (s *sess) newCall() toolCall {
	w := []int{30, 30, 10, 3, 3, 15, 5, 0, 0}
	if s.ver.isV4() {
		w[tTask] = 4
	}
	if s.ver == vPrime3 {
		w[tRLM] = 5
	}
	c := toolCall{kind: toolKind(s.r.weighted(w))}
	switch c.kind {
	case tRead:
		c.w = s.r.logUniform(1<<10, 48<<10)
	case tBash:
		c.w = s.r.logUniform(200, 16<<10)
	case tGrep:
		c.w = s.r.logUniform(300, 8<<10)
	case tFind, tLs:
		c.w = s.r.logUniform(150, 3<<10)
	case tTask:
		c.w = s.r.logUniform(400, 6<<10)
	case tRLM:
		c.w = s.r.logUniform(300, 4<<10)
	}
	if (c.kind == tRead || c.kind == tBash) && s.r.permille(s.g.opts.Profile.hugeOutputPermille()) {
		c.w = s.r.logUniform(100<<10, 1<<20)
	}
	return c
}

// finishCall fills the id and arguments (drawn when the call is made, so
// the plan stays cheap).
func (s *sess) finishCall(c *toolCall) {
	c.id = s.callID()
	c.path = s.cwd + "/" + randPath(s.r)
	code := s.g.corpus.code
	b := []byte{'{'}
	switch c.kind {
	case tRead:
		b = kvStr(b, "path", c.path)
		if s.r.pct(20) {
			b = kvInt(b, "offset", s.r.between(1, 400))
			b = kvInt(b, "limit", 200)
		}
	case tBash:
		b = kvStr(b, "command", pick(s.r, commands))
		if s.r.pct(30) {
			b = kvInt(b, "timeout", 120)
		}
	case tGrep:
		b = kvStr(b, "pattern", pick(s.r, idents)+"\\(")
		b = kvStr(b, "path", pick(s.r, dirs))
	case tFind:
		b = kvStr(b, "pattern", "*"+pick(s.r, exts))
		b = kvStr(b, "path", pick(s.r, dirs))
	case tLs:
		b = kvStr(b, "path", pick(s.r, dirs))
	case tEdit:
		b = kvStr(b, "path", c.path)
		b = append(key(b, "oldText"), '"')
		b = code.appendSlice(b, s.r, s.r.between(60, 600))
		b = append(b, '"')
		b = append(key(b, "newText"), '"')
		b = code.appendSlice(b, s.r, s.r.between(60, 800))
		b = append(b, '"')
	case tWrite:
		b = kvStr(b, "path", c.path)
		b = append(key(b, "content"), '"')
		b = code.appendSlice(b, s.r, s.r.logUniform(300, 6000))
		b = append(b, '"')
	case tTask:
		b = kvStr(b, "description", "Investigate "+pick(s.r, idents)+" usage")
		b = kvStr(b, "prompt", s.text(userPrompts, 200))
	case tRLM:
		b = kvStr(b, "query", s.text(userPrompts, 120))
		b = kvInt(b, "maxDepth", 2)
	}
	c.args = append(b, '}')
}

// toolSize gives a tool output its share of what is left of the budget.
func (s *sess) toolSize(w int64) int64 {
	if w == 0 {
		return 0
	}
	avg := int64(700)
	if s.structN > 0 {
		avg = s.structB / s.structN
	}
	avail := s.target - s.bytes - s.pendingImg - avg*s.remEntries - 260
	var size int64
	if s.remW <= w {
		size = avail
	} else {
		size = mulDiv(max(avail, 0), w, s.remW)
	}
	s.remW = max(0, s.remW-w)
	return min(max(size, 24), s.g.opts.Profile.maxTool())
}

func (s *sess) toolResult(c *toolCall, callerIdx int32) int32 {
	size := s.toolSize(c.w)
	s.adv(60, 3000)
	if c.kind == tBash || c.kind == tTask || c.kind == tRLM {
		s.adv(0, 40000)
	}
	isErr := c.kind == tBash && s.r.pct(12)
	b, id := s.begin("message", int(size)+400)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "toolResult")
	b = kvStr(b, "toolCallId", c.id)
	b = kvStr(b, "toolName", toolNames[c.kind])
	b = append(key(b, "content"), `[{"type":"text","text":"`...)
	before := len(b)
	corpus := s.g.corpus
	switch c.kind {
	case tRead:
		b = corpus.code.appendSlice(b, s.r, size)
	case tBash, tTask, tRLM:
		b = corpus.shell.appendSlice(b, s.r, size)
		if isErr {
			b = append(b, `\n\nCommand exited with code 1`...)
		}
	case tGrep, tFind, tLs:
		b = corpus.grep.appendSlice(b, s.r, size)
	case tEdit:
		b = appendEscaped(b, "Successfully replaced text in "+c.path+".")
	case tWrite:
		b = appendEscaped(b, "Successfully wrote "+strconv.Itoa(len(c.args))+" bytes to "+c.path)
	}
	pad := int64(len(b) - before)
	b = append(b, `"}]`...)
	if c.kind == tEdit {
		b = append(key(b, "details"), '{')
		b = append(key(b, "diff"), '"')
		b = corpus.code.appendSlice(b, s.r, s.r.between(100, 1200))
		b = append(b, '"', '}')
	}
	var rec *billed
	if c.kind == tTask && s.ver.isV4() {
		in := s.r.between(3000, 60000)
		u := priced(s.model, in, s.r.between(200, 4000), s.r.between(0, 20000), 0)
		b = appendUsage(key(b, "usage"), u)
		rec = s.bill(kindToolResult, u, id, s.t)
	}
	b = kvBool(b, "isError", isErr)
	b = kvInt(b, "timestamp", s.t)
	b = append(b, '}', '}')
	s.ctx += min(pad/4, 25000) + 20
	idx := s.commit(b, id, pad, rec, -1)
	if c.kind == tRLM && callerIdx >= 0 {
		s.childUsage(callerIdx)
	}
	return idx
}

// childUsage writes Prime's child_usage_attributed records for an assistant
// message: aggregateUsage is always own + children so far.
func (s *sess) childUsage(target int32) {
	// A second tool call of the same message goes on from the first's
	// aggregate. The default profile keeps the bytes of earlier releases
	// (the bench home and the README's demo), where it started again from
	// the message's own usage (no count depends on aggregateUsage).
	agg, ok := s.childAgg[target]
	if !ok || s.g.opts.Profile == ProfileDefault {
		agg = s.lines[target].rec.u
		agg.style = styleFull
	}
	for k := s.r.btw(1, 3); k > 0; k-- {
		s.adv(200, 30000)
		in := s.r.between(500, 30000)
		child := priced(s.model, in, s.r.between(50, 3000), s.r.between(0, 20000), 0)
		agg = agg.add(child)
		b, id := s.begin("child_usage_attributed", 600)
		b = kvStr(b, "targetId", s.lines[target].id)
		b = appendUsage(key(b, "childUsage"), child)
		b = appendUsage(key(b, "aggregateUsage"), agg)
		b = append(b, '}')
		s.commit(b, id, 0, s.bill(kindChildUsage, child, id, s.t), -1)
	}
	if s.childAgg == nil {
		s.childAgg = map[int32]usage{}
	}
	s.childAgg[target] = agg
}

func (s *sess) modelChange(m int) {
	s.adv(500, 20000)
	s.model = m
	s.cached = 0
	s.epoch++
	b, id := s.begin("model_change", 64)
	b = kvStr(b, "provider", models[m].provider)
	b = kvStr(b, "modelId", models[m].id)
	b = append(b, '}')
	s.commit(b, id, 0, nil, -1)
}

func (s *sess) thinkingChange(level string) {
	s.adv(300, 10000)
	s.thinking = level
	b, id := s.begin("thinking_level_change", 32)
	b = kvStr(b, "thinkingLevel", level)
	b = append(b, '}')
	s.commit(b, id, 0, nil, -1)
}

func (s *sess) simple(typ string, fields func(b []byte) []byte) {
	s.adv(20, 3000)
	b, id := s.begin(typ, 256)
	b = fields(b)
	b = append(b, '}')
	s.commit(b, id, 0, nil, -1)
}

// randomTarget returns the id of a random earlier entry with an id.
func (s *sess) randomTarget() string {
	for try := 0; try < 8 && len(s.lines) > 0; try++ {
		if id := s.lines[s.r.intn(len(s.lines))].id; id != "" {
			return id
		}
	}
	return ""
}

func (s *sess) compaction() {
	if len(s.turns) == 0 {
		return
	}
	s.adv(2000, 40000)
	keep := s.turns[len(s.turns)-1].start
	before := s.ctx
	b, id := s.begin("compaction", 4096)
	var rec *billed
	if s.ver == vPi1 {
		b = kvStr(b, "summary", s.text(summaryLines, 400))
		b = kvInt(b, "firstKeptEntryIndex", int64(keep)+1) // parsed lines, header = 0
		b = kvInt(b, "tokensBefore", before)
	} else {
		if s.ver.atomic() {
			b = kvStr(b, "summary", "[User]: "+s.text(userPrompts, 200)+"\n(filtered "+strconv.Itoa(s.r.btw(10, 400))+" lines)\n[Assistant]: "+s.text(answerLines, 600))
		} else {
			b = kvStr(b, "summary", "## Goal\n"+s.text(userPrompts, 200)+"\n\n## Progress\n"+s.text(answerLines, 900))
		}
		b = kvStr(b, "firstKeptEntryId", s.lines[keep].id)
		b = kvInt(b, "tokensBefore", before)
		if s.ver.atomic() {
			after := s.r.between(8000, 25000)
			b = append(b, `,"details":{"strategy":"verbatim-lines","promptVersion":3,"rung":"planned","parameters":{"compression_ratio":0.5,"preserve_recent":2,"query":`...)
			b = appendStr(b, s.text(userPrompts, 40))
			b = append(b, `},"stats":{`...)
			lb := s.r.between(300, 2000)
			ld := lb * s.r.between(30, 70) / 100
			b = kvInt(b, "linesBefore", lb)
			b = kvInt(b, "linesDeleted", ld)
			b = kvInt(b, "linesKept", lb-ld)
			b = kvInt(b, "rangeCount", s.r.between(5, 90))
			b = kvInt(b, "tokensBefore", before)
			b = kvInt(b, "tokensAfter", after)
			b = kvInt(b, "percentReduction", 100-after*100/max(before, 1))
			b = append(b, '}', '}')
		} else if s.r.pct(50) {
			b = append(b, `,"details":{"readFiles":[`...)
			b = appendStr(b, randPath(s.r))
			b = append(b, ',')
			b = appendStr(b, randPath(s.r))
			b = append(b, `],"modifiedFiles":[`...)
			b = appendStr(b, randPath(s.r))
			b = append(b, ']', '}')
		}
		if s.ver != vPi2 && (s.r.pct(50) || s.spec.showcase) {
			u := priced(s.model, min(before, 180000), s.r.between(600, 4000), 0, 0)
			b = appendUsage(key(b, "usage"), u)
			rec = s.bill(kindCompaction, u, id, s.t)
		}
	}
	b = append(b, '}')
	s.commit(b, id, 0, rec, -1)
	s.ctx = s.r.between(8000, 25000)
	s.cached = 0
	s.compactAt = s.r.between(90000, 160000)
}

// branch moves the leaf back to the end of an earlier turn (made after the
// last model change, so abandoned entries use the current model), optionally
// writing a branch_summary.
func (s *sess) branch() bool {
	var cands []int
	for k := 0; k < len(s.turns)-1; k++ {
		if s.turns[k].epoch == s.epoch {
			cands = append(cands, k)
		}
	}
	if len(cands) == 0 {
		return false
	}
	k := cands[len(cands)-1-s.r.intn(min(3, len(cands)))]
	old := s.leaf
	s.abandoned = append(s.abandoned, old)
	s.turns = s.turns[:k+1]
	s.leaf = s.turns[k].end
	s.ctx = int64(s.lines[s.leaf].ctx)
	s.cached = s.ctx
	s.branched = true
	if s.r.pct(60) || s.spec.showcase {
		s.adv(3000, 30000)
		b, id := s.begin("branch_summary", 1500)
		b = kvStr(b, "fromId", s.lines[old].id)
		b = kvStr(b, "summary", s.text(answerLines, 500))
		if s.r.pct(50) {
			b = append(b, `,"details":{"readFiles":[`...)
			b = appendStr(b, randPath(s.r))
			b = append(b, `],"modifiedFiles":[]}`...)
		}
		var rec *billed
		if s.r.pct(50) || s.spec.showcase {
			u := priced(s.model, s.r.between(2000, 40000), s.r.between(150, 1500), s.r.between(0, 10000), 0)
			u.style = styleFull
			b = appendUsage(key(b, "usage"), u)
			rec = s.bill(kindBranchSummary, u, id, s.t)
		}
		b = append(b, '}')
		s.commit(b, id, 0, rec, -1)
		s.ctx += 400
	}
	return true
}

func (s *sess) sessionSummary() {
	if len(s.turns) == 0 {
		return
	}
	s.adv(1500, 20000)
	b, id := s.begin("session_summary", 256)
	b = kvStr(b, "summary", fill(s.r, pick(s.r, summaryLines), s.project))
	b = kvStr(b, "summarizedThroughId", s.lines[s.turns[len(s.turns)-1].end].id)
	var rec *billed
	if s.r.pct(85) {
		u := usage{in: s.r.between(400, 3000), out: s.r.between(8, 40), style: styleSummary}
		b = appendUsage(key(b, "usage"), u)
		rec = s.bill(kindSessionSummary, u, id, s.t)
	}
	b = append(b, '}')
	s.lastSumm = s.commit(b, id, 0, rec, -1)
}

func (s *sess) systemMessage(tools bool) {
	s.adv(5, 400)
	b, id := s.begin("message", len(systemPrompt)+400)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "system")
	if tools {
		b = append(b, `,"content":[],"toolsAdded":[{"name":"web_search","description":"Search the web and return the top results","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}]`...)
	} else {
		b = kvStr(b, "content", systemPrompt+"\nCurrent working directory: "+s.cwd+"\n")
		b = append(b, `,"sections":{"project":"`...)
		b = appendEscaped(b, "Project "+s.project+": follow the conventions in AGENTS.md.")
		b = append(b, '"', '}')
	}
	b = kvInt(b, "timestamp", s.t)
	b = append(b, '}', '}')
	s.commit(b, id, 0, nil, -1)
}

// customMessage writes an extension message: hookMessage role in v2, custom
// role in v3+.
func (s *sess) customMessage() {
	s.adv(20, 2000)
	b, id := s.begin("message", 300)
	b = append(key(b, "message"), '{')
	if s.ver == vPi2 {
		b = kvStr(b, "role", "hookMessage")
		b = kvStr(b, "content", "Reminder: run the tests before committing ("+pick(s.r, idents)+").")
		b = kvStr(b, "customType", "reminder")
	} else {
		b = kvStr(b, "role", "custom")
		b = kvStr(b, "customType", "reminder")
		b = kvStr(b, "content", "Reminder: run the tests before committing ("+pick(s.r, idents)+").")
	}
	b = kvBool(b, "display", s.r.pct(70))
	b = kvInt(b, "timestamp", s.t)
	b = append(b, '}', '}')
	s.commit(b, id, 0, nil, -1)
}

func (s *sess) bashExecution() {
	s.adv(2000, 60000)
	b, id := s.begin("message", 2000)
	b = append(key(b, "message"), '{')
	b = kvStr(b, "role", "bashExecution")
	b = kvStr(b, "command", pick(s.r, commands))
	b = append(key(b, "output"), '"')
	b = s.g.corpus.shell.appendSlice(b, s.r, s.r.between(100, 2500))
	b = append(b, '"')
	b = kvInt(b, "exitCode", int64(s.r.weighted([]int{85, 15})))
	b = kvBool(b, "cancelled", false)
	b = kvBool(b, "truncated", false)
	b = kvInt(b, "timestamp", s.t)
	b = append(b, '}', '}')
	s.commit(b, id, 0, nil, -1)
}

// ---- session flow ----------------------------------------------------------

func isqrt(x int64) int64 {
	if x <= 0 {
		return 0
	}
	r := int64(1) << ((bits.Len64(uint64(x)) + 1) / 2)
	for {
		n := (r + x/r) / 2
		if n >= r {
			return r
		}
		r = n
	}
}

// planTurns draws the shape of the conversation still to write and sets
// the budget counters.
func (s *sess) planTurns(budget int64, minTurns int) []turnPlan {
	n := int(isqrt(budget/s.g.opts.Profile.turnBytes()) * s.r.between(70, 130) / 100)
	n = min(max(n, minTurns, 1), s.g.opts.Profile.maxTurns())
	plans := make([]turnPlan, n)
	stepWeights := []int{15, 25, 25, 15, 10, 6, 4}
	if budget/int64(n) < 8<<10 { // small budget: short turns
		stepWeights = []int{40, 45, 15, 0, 0, 0, 0}
	}
	for i := range plans {
		steps := []int{0, 1, 2, 3, 4, 6, 8}[s.r.weighted(stepWeights)]
		for st := 0; st < steps; st++ {
			calls := 1 + s.r.weighted([]int{70, 20, 10})
			var cs []toolCall
			for c := 0; c < calls; c++ {
				tc := s.newCall()
				s.remW += tc.w
				cs = append(cs, tc)
			}
			plans[i].steps = append(plans[i].steps, cs)
			s.remEntries += int64(1 + calls)
		}
		s.remEntries += 3
	}
	if s.spec.showcase && len(plans) > 1 && (s.ver.isV4() || s.ver == vPrime3) {
		tc := toolCall{kind: tTask, w: s.r.logUniform(400, 6<<10)}
		if s.ver == vPrime3 {
			tc.kind = tRLM
		}
		plans[1].steps = append(plans[1].steps, []toolCall{tc})
		s.remW += tc.w
		s.remEntries += 2
	}
	return plans
}

func (s *sess) idsLeft() bool { return s.g.n < idsPerFamily-600 }

// start writes the entries a session begins with.
func (s *sess) start() {
	s.t = s.hdrTs + s.r.between(50, 3000)
	if s.ver.isV4() && s.r.pct(70) {
		s.systemMessage(false)
	}
	if s.ver != vPi1 && s.r.pct(60) {
		s.adv(1, 50)
		s.modelChange(s.model)
		if models[s.model].reasoning {
			s.thinkingChange(s.thinking)
		}
	}
	if s.ver.atomic() && s.r.pct(30) {
		s.simple("context_window_change", func(b []byte) []byte {
			return kvInt(b, "contextWindow", []int64{200000, 1000000}[s.r.intn(2)])
		})
	}
	if s.ver == vPrime3 {
		if s.r.pct(40) {
			s.gitState()
		}
		if s.r.pct(10) {
			s.serviceTier()
		}
	}
}

func (s *sess) gitState() {
	s.simple("git_state", func(b []byte) []byte {
		b = append(key(b, "git"), '{')
		b = kvStr(b, "branch", pick(s.r, []string{"main", "feature/" + pick(s.r, idents), "fix/" + pick(s.r, idents)}))
		b = kvStr(b, "head", randHex(s.r, 40))
		b = kvBool(b, "dirty", s.r.pct(60))
		b = kvInt(b, "ahead", s.r.between(0, 4))
		b = kvInt(b, "behind", s.r.between(0, 2))
		return append(b, '}')
	})
}

func (s *sess) serviceTier() {
	s.simple("service_tier_change", func(b []byte) []byte {
		return kvStr(b, "serviceTier", pick(s.r, []string{"priority", "default", "flex"}))
	})
}

// between writes what happens between two turns.
func (s *sess) between(ti, nTurns int) {
	if s.r.pct(5) {
		s.adv(2*3600000, 20*3600000) // back the next day
	} else {
		s.adv(20000, 900000)
	}
	if s.ctx > s.compactAt || s.ctx > 8000 && s.r.pct(7) || s.spec.showcase && ti == 3 { // automatic, or a manual /compact
		s.compaction()
	}
	if s.spec.showcase && ti == 2 {
		s.showcase()
	}
	if s.ver != vPi1 && ti >= 2 && (s.r.pct(12) || (s.spec.forceBranch && !s.lateBranch && ti >= nTurns*2/3)) {
		s.lateBranch = s.branch() && ti >= nTurns*2/3
	}
	if ti > 0 && s.model != mLocal && s.r.pct(7) {
		m := s.r.weighted(modelWeights)
		if m != s.model {
			s.modelChange(m)
		}
	}
	if ti > 0 && models[s.model].reasoning && s.r.pct(5) {
		s.thinkingChange(pick(s.r, strings.Fields(thinkingLevels)))
	}
	if s.ver == vPi1 {
		return
	}
	if s.ver == vPi2 && !s.hookDone && (ti >= 1 || s.r.pct(30)) || s.r.pct(3) {
		s.hookDone = true
		s.customMessage()
	}
	if ti > 0 && s.r.pct(4) {
		if t := s.randomTarget(); t != "" {
			s.simple("label", func(b []byte) []byte {
				b = kvStr(b, "targetId", t)
				if s.r.pct(90) {
					b = kvStr(b, "label", pick(s.r, []string{"checkpoint-1", "good state", "before refactor", "works", "bug repro"}))
				}
				return b
			})
		}
	}
	if ti == 1 && !s.named && s.r.pct(35) {
		s.named = true
		s.simple("session_info", func(b []byte) []byte {
			return kvStr(b, "name", fill(s.r, pick(s.r, sessionNames), s.project))
		})
	}
	if s.r.pct(4) {
		s.simple("custom", func(b []byte) []byte {
			b = kvStr(b, "customType", pick(s.r, []string{"todo-state", "plan-mode"}))
			b = append(key(b, "data"), `{"items":[{"text":`...)
			b = appendStr(b, "Check "+pick(s.r, idents))
			b = append(b, `,"done":`...)
			b = strconv.AppendBool(b, s.r.pct(50))
			b = append(b, `}],"version":2}`...)
			return b
		})
	}
	if s.ver != vPi2 && s.r.pct(3) {
		s.simple("custom_message", func(b []byte) []byte {
			b = kvStr(b, "customType", "context-note")
			b = kvStr(b, "content", "The "+pick(s.r, idents)+" service is deployed from the release branch.")
			return kvBool(b, "display", s.r.pct(50))
		})
	}
	if s.r.pct(4) {
		s.bashExecution()
	}
	switch {
	case s.ver.atomic():
		if s.r.pct(3) {
			s.simple("context_window_change", func(b []byte) []byte {
				return kvInt(b, "contextWindow", []int64{200000, 1000000}[s.r.intn(2)])
			})
		}
		if s.ver == vAtomic3 && s.r.pct(3) {
			if t := s.randomTarget(); t != "" {
				s.simple("context_compaction", func(b []byte) []byte {
					before := s.r.between(30000, 90000)
					b = kvInt(b, "promptVersion", 1)
					b = append(b, `,"deletedTargets":[{"kind":"entry","entryId":`...)
					b = appendStr(b, t)
					b = append(b, `}],"protectedEntryIds":[],"stats":{"objectsBefore":20,"objectsAfter":19,"objectsDeleted":1`...)
					b = kvInt(b, "tokensBefore", before)
					b = kvInt(b, "tokensAfter", before*8/10)
					return append(b, `,"percentReduction":20}`...)
				})
			}
		}
		if s.ver.isV4() && s.r.pct(2) {
			s.systemMessage(true)
		}
	case s.ver == vPrime3:
		if s.r.pct(4) {
			s.serviceTier()
		}
		if s.r.pct(6) {
			s.gitState()
		}
	}
}

// showcase writes the rare entry types of the session's writer, so every
// home holds each of them at least once.
func (s *sess) showcase() {
	if s.ver == vPi1 {
		return
	}
	if t := s.randomTarget(); t != "" {
		s.simple("label", func(b []byte) []byte {
			b = kvStr(b, "targetId", t)
			return kvStr(b, "label", "checkpoint-1")
		})
	}
	if !s.named {
		s.named = true
		s.simple("session_info", func(b []byte) []byte {
			return kvStr(b, "name", fill(s.r, pick(s.r, sessionNames), s.project))
		})
	}
	s.simple("custom", func(b []byte) []byte {
		b = kvStr(b, "customType", "todo-state")
		return append(b, `,"data":{"items":[{"text":"Write tests","done":false}],"version":2}`...)
	})
	s.customMessage()
	if s.ver != vPi2 {
		s.simple("custom_message", func(b []byte) []byte {
			b = kvStr(b, "customType", "context-note")
			b = kvStr(b, "content", "The deploy runs from the release branch.")
			return kvBool(b, "display", true)
		})
	}
	s.bashExecution()
	s.usageEntries()
	switch {
	case s.ver.atomic():
		s.simple("context_window_change", func(b []byte) []byte { return kvInt(b, "contextWindow", 1000000) })
		if s.ver == vAtomic3 {
			t := s.lines[len(s.lines)-1].id
			s.simple("context_compaction", func(b []byte) []byte {
				b = kvInt(b, "promptVersion", 1)
				b = append(b, `,"deletedTargets":[{"kind":"entry","entryId":`...)
				b = appendStr(b, t)
				return append(b, `}],"protectedEntryIds":[],"stats":{"objectsBefore":20,"objectsAfter":19,"objectsDeleted":1,"tokensBefore":50000,"tokensAfter":43000,"percentReduction":14}`...)
			})
		}
		if s.ver.isV4() {
			s.systemMessage(true)
		}
	case s.ver == vPrime3:
		s.serviceTier()
		s.gitState()
	}
}

// usageEntries writes a pi cache-warm "usage" entry and an oh-my-pi
// "model_usage" side call (SPEC.md §1.4, §4), both billed, naming the model
// of the nearest preceding assistant message, which the manifest attributes
// them to; without one, none is written.
func (s *sess) usageEntries() {
	m := -1
	for i := len(s.lines) - 1; i >= 0; i-- {
		if s.lines[i].asst >= 0 {
			m = int(s.lines[i].asst)
			break
		}
	}
	if m < 0 || m >= len(models) {
		return
	}
	for _, kind := range []recKind{kindUsageEntry, kindModelUsage} {
		s.adv(20, 3000)
		typ := "usage"
		if kind == kindModelUsage {
			typ = "model_usage"
		}
		b, id := s.begin(typ, 384)
		var u usage
		if kind == kindUsageEntry {
			b = kvStr(b, "kind", "cache_warm")
			u = priced(m, 2, 0, min(s.cached, 190000), 0)
		} else {
			b = kvStr(b, "purpose", "title")
			b = kvStr(b, "role", "smol")
			b = kvStr(b, "api", models[m].api)
			u = priced(m, s.r.between(200, 3000), s.r.between(5, 40), 0, 0)
		}
		u.style = s.fullStyle()
		b = kvStr(b, "provider", models[m].provider)
		b = kvStr(b, "model", models[m].id)
		b = appendUsage(key(b, "usage"), u)
		if kind == kindModelUsage {
			b = kvStr(b, "stopReason", "stop")
		}
		b = append(b, '}')
		s.commit(b, id, 0, s.bill(kind, u, id, s.t), -1)
	}
}

// turn writes one user request and the agent's work on it.
func (s *sess) turn(tp *turnPlan, image int64) {
	s.adv(300, 20000)
	user := s.userMsg(fill(s.r, pick(s.r, userPrompts), s.project), image)
	forceErr := s.spec.showcase && len(s.turns) == 1 && s.ver.isV4()
	for _, calls := range tp.steps {
		if s.ver != vPi1 && s.model != mLocal && (s.r.pct(2) || forceErr) {
			forceErr = false
			failed := s.assistant(nil, "", "", "error", pick(s.r, []string{
				"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
				"Request timed out.", "fetch failed: ECONNRESET"}), true)
			if s.ver == vAtomic4 || s.ver == vAtomicEarly4 {
				s.simple("context_edit", func(b []byte) []byte {
					b = kvStr(b, "targetId", s.lines[failed].id)
					return kvNull(b, "replacement")
				})
			}
			s.adv(1000, 8000)
		}
		for i := range calls {
			s.finishCall(&calls[i])
		}
		thinking := ""
		if s.thinking != "off" && models[s.model].reasoning && s.r.pct(60) {
			thinking = s.text(thinkingLines, int(s.r.logUniform(100, 2500)))
		}
		text := ""
		if s.r.pct(45) {
			text = s.text(answerLines, int(s.r.between(40, 300)))
		}
		caller := s.assistant(calls, text, thinking, "toolUse", "", false)
		for i := range calls {
			s.toolResult(&calls[i], caller)
		}
	}
	stop := "stop"
	if s.r.pct(1) {
		stop = "aborted"
	} else if s.r.pct(1) {
		stop = "length"
	}
	thinking := ""
	if s.thinking != "off" && models[s.model].reasoning && s.r.pct(40) {
		thinking = s.text(thinkingLines, int(s.r.logUniform(100, 1500)))
	}
	end := s.assistant(nil, s.text(answerLines, int(s.r.logUniform(150, 3000))), thinking, stop, "", false)
	s.lines[end].turnEnd = true
	s.turns = append(s.turns, turnRef{start: user, end: end, epoch: s.epoch})
	if s.ver.isV4() && s.r.pct(20) {
		s.sessionSummary()
	}
	if s.ver == vPrime3 && s.r.pct(15) {
		s.simple("agent_status", func(b []byte) []byte {
			b = append(key(b, "status"), '{')
			b = kvStr(b, "summary", fill(s.r, pick(s.r, summaryLines), s.project))
			b = kvStr(b, "taskState", pick(s.r, []string{"completed", "in_progress", "blocked"}))
			b = kvInt(b, "messageCount", int64(len(s.lines)))
			return append(b, '}')
		})
	}
}

// converse writes turns until the plan and the byte budget are used up.
func (s *sess) converse(minTurns int) {
	if s.spec.kind == kSession {
		s.pendingImg = s.spec.image // the screenshot is not conversation
	}
	plans := s.planTurns(s.target-s.bytes-s.pendingImg, minTurns)
	imageTurn := -1
	if s.pendingImg > 0 {
		imageTurn = s.r.intn(min(len(plans), 3))
	}
	for ti := range plans {
		if !s.idsLeft() || s.g.ctx.Err() != nil {
			break
		}
		if ti > 0 || len(s.lines) > 0 {
			s.between(ti, len(plans))
		}
		img := int64(0)
		if ti == imageTurn {
			img, s.pendingImg = s.pendingImg, 0
		}
		s.turn(&plans[ti], img)
	}
	slack := max(4096, s.target/200)
	for pads := 0; s.bytes < s.target-slack && pads < 4000 && s.idsLeft() && s.g.ctx.Err() == nil; pads++ {
		c := toolCall{kind: tBash, w: 1}
		if s.r.pct(40) {
			c.kind = tRead
		}
		s.remW, s.remEntries = 1, 2
		s.between(len(s.turns), len(s.turns)+1)
		s.turn(&turnPlan{steps: [][]toolCall{{c}}}, 0)
	}
}

// finish writes the entries a session ends with.
func (s *sess) finish() {
	if s.ver.isV4() && len(s.turns) > 0 && s.lastSumm != int32(len(s.lines)-1) && (s.r.pct(50) || s.spec.showcase) {
		s.sessionSummary()
	}
	if s.ver == vPrime3 && len(s.turns) > 0 {
		if s.r.pct(40) || s.spec.showcase {
			s.simple("session_state", func(b []byte) []byte { return kvStr(b, "state", "archived") })
		}
	}
}
