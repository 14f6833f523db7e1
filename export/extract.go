package export

import (
	"encoding/binary"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/validate"
)

// Issue codes the export adds to those of the reader and validate.
const (
	CodeBadUsage           = "bad_usage"            // warning: a token count or cost that is negative or not a number; counted as 0 / absent
	CodeChildUsageMismatch = "child_usage_mismatch" // warning: aggregateUsage ≠ the target's own usage + the children seen so far
	CodeValueTooLarge      = "value_too_large"      // warning: a text longer than a sink can store (MaxValueBytes); stored as NULL, the rest of the file kept
)

// MaxValueBytes is the longest string value the export stores: Arrow
// string arrays and Parquet byte arrays measure a value with a signed
// 32-bit length, so 2 GiB − 1 bytes. A longer text, arguments_json or
// raw_json (one line of more than 2 GiB) is stored as NULL in every sink,
// with a value_too_large row in ingest_issues naming the file and line;
// byte_size keeps the block's size and the rest of the file is exported.
const MaxValueBytes = math.MaxInt32

// maxValueBytes is MaxValueBytes; tests lower it (a 2 GiB fixture is out
// of reach).
var maxValueBytes int64 = MaxValueBytes

// fits reports whether a value of n bytes can be stored; when it cannot,
// it records value_too_large for line, naming the value: what, of content
// block number block (block < 0: not a block's).
func (x *extractor) fits(n int64, line, block int, what string) bool {
	if n <= maxValueBytes {
		return true
	}
	if block >= 0 {
		what = fmt.Sprintf("block %d: %s", block, what)
	}
	x.issuef(line, CodeValueTooLarge, "%s of %d bytes is longer than the %d bytes a stored value can hold: stored as NULL", what, n, maxValueBytes)
	return false
}

// Usage kinds (SPEC.md §3 usage.kind).
const (
	KindAssistant      = "assistant"
	KindToolResult     = "tool_result"
	KindCompaction     = "compaction"
	KindBranchSummary  = "branch_summary"
	KindSessionSummary = "session_summary"
	KindChildUsage     = "child_usage"
	KindUsageEntry     = "usage_entry" // a pi "usage" entry (SessionManager.appendUsage); sub_kind is its kind
	KindModelUsage     = "model_usage" // an oh-my-pi "model_usage" entry (side calls); sub_kind is its purpose
)

// extractOptions are the per-run settings of the extractor.
type extractOptions struct {
	usageOnly bool // ModeUsage: no entries and content blocks, tool rows instead
	noTools   bool // ModeUsage without tool_uses rows (Options.SkipToolUses)
	noContent bool
	withRaw   bool
	prices    *pricing.Table
	costMode  CostMode
}

// fileResult is everything one file yields: the verdict, and when its
// records are used (SPEC.md §1.5), the rows of every table.
type fileResult struct {
	file    ingest.File
	res     validate.Result
	session *sessionRow // nil when the file's records are not used
	entries []entryRow  // ModeFull
	blocks  []blockRow  // ModeFull
	tools   []toolRow   // ModeUsage
	usage   []usageRow
	issues  []issueRow // validate's issues and the export's, by line
	issueN  int        // issues of every severity, also those beyond the listing cap
}

// tokens4 are the four token counts of a usage record.
type tokens4 struct{ in, out, cr, cw int64 }

func (a tokens4) add(b tokens4) tokens4 {
	return tokens4{a.in + b.in, a.out + b.out, a.cr + b.cr, a.cw + b.cw}
}

// model is a provider/model attribution.
type model struct{ provider, model optStr }

// extractor is an ingest.Visitor that feeds a validate.Checker and, in the
// same read, turns the records of one session file into rows. Reuse one per
// worker with reset.
type extractor struct {
	opts *extractOptions
	ck   *validate.Checker

	out       *fileResult
	sawFirst  bool
	isSession bool
	sessionID string
	hdr       sessionRow
	hdrModel  model // v1 header provider/modelId
	entryIdx  int
	lastID    optStr // the last entry's id (the active leaf)

	// attribution of usage without its own model
	lastAssistant, lastModelChange model
	haveAssistant, haveModelChange bool

	// child_usage_attributed consistency
	own      map[string]ownUsage // assistant messages with usage, by entry id
	children map[string]tokens4

	// callLinks: the child sessions toolCall arguments name, by call id
	// (SPEC.md §7.3, a roll-up recognised through its tool call)
	callLinks map[string][]childRef

	// active branch
	hasParentKey []bool
	idIndex      map[string]int

	exportIssues []issueRow
	scratch      []byte
	keyBuf       []byte
	keys         pendingKeys // the current entry's, until entryKeys makes them
	v1Hash       *xxh3.Hasher
}

func newExtractor(opts *extractOptions) *extractor {
	return &extractor{opts: opts, ck: validate.NewChecker(), own: map[string]ownUsage{},
		children: map[string]tokens4{}, idIndex: map[string]int{}, callLinks: map[string][]childRef{}}
}

func (x *extractor) reset(f ingest.File) {
	x.ck.Reset()
	x.out = &fileResult{file: f}
	x.sawFirst, x.isSession = false, false
	x.sessionID = ""
	x.hdr = sessionRow{}
	x.hdrModel = model{}
	x.entryIdx = 0
	x.lastID = optStr{}
	x.lastAssistant, x.lastModelChange = model{}, model{}
	x.haveAssistant, x.haveModelChange = false, false
	clear(x.own)
	clear(x.children)
	clear(x.callLinks)
	x.hasParentKey = x.hasParentKey[:0]
	clear(x.idIndex)
	x.exportIssues = nil
}

// Issue implements ingest.Visitor.
func (x *extractor) Issue(is ingest.Issue) { x.ck.Issue(is) }

// Record implements ingest.Visitor.
func (x *extractor) Record(r *ingest.Record) error {
	if err := x.ck.Record(r); err != nil {
		return err
	}
	if !x.sawFirst {
		if s := x.ck.TitleSlot(); s != nil && r.Offset == 0 {
			return nil // oh-my-pi's title slot: the header is the next record
		}
		x.sawFirst = true
		x.header(r)
		if s := x.ck.TitleSlot(); s != nil && s.Title != "" {
			x.hdr.name = someStr(validString([]byte(s.Title)))
		}
		return nil
	}
	if x.isSession {
		x.entry(r)
	}
	return nil
}

func (x *extractor) issuef(line int, code, format string, args ...any) {
	x.exportIssues = append(x.exportIssues, issueRow{lineNo: line, severity: string(ingest.SeverityWarning),
		code: code, message: fmt.Sprintf(format, args...)})
}

// str returns the decoded string node n as valid UTF-8 (SPEC.md §1.2: the
// agent reads invalid bytes as U+FFFD).
func str(t *ingest.Tape, n int) optStr {
	s, ok := t.Str(n) // decoded once, at its size: no scratch copy of a huge text
	if !ok {
		return optStr{}
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return someStr(s)
}

// nonEmpty is str, with "" as NULL.
func nonEmpty(t *ingest.Tape, n int) optStr {
	s := str(t, n)
	if s.v == "" {
		return optStr{}
	}
	return s
}

func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (x *extractor) header(r *ingest.Record) {
	t, root := r.Tape, r.Root
	if t.Kind(root) != ingest.KindObject {
		return
	}
	if typ, _ := t.StrBytes(t.Get(root, "type")); string(typ) != "session" {
		return
	}
	id := str(t, t.Get(root, "id"))
	if id.v == "" {
		return
	}
	x.isSession = true
	x.sessionID = id.v
	h := &x.hdr
	h.sessionID = id.v
	h.cwd = str(t, t.Get(root, "cwd"))
	if h.cwd.v != "" {
		h.project = someStr(projectOf(h.cwd.v))
	}
	created := t.Get(root, "createdAt")
	if created < 0 {
		created = t.Get(root, "timestamp")
	}
	h.createdAt = parseISO(t, created)
	if pid := nonEmpty(t, t.Get(root, "parentSessionId")); pid.ok {
		h.parentID, h.parentResolvedBy = pid, someStr("header")
	}
	h.parentPath = nonEmpty(t, t.Get(root, "parentSession"))
	if !h.parentPath.ok {
		h.parentPath = nonEmpty(t, t.Get(root, "branchedFrom"))
	}
	wf := t.Get(root, "workflow")
	h.wfRun = str(t, t.Get(wf, "runId"))
	h.wfStageID = str(t, t.Get(wf, "stageId"))
	h.wfStageName = str(t, t.Get(wf, "stageName"))
	h.internal = t.Kind(t.Get(root, "internal")) == ingest.KindTrue &&
		h.wfRun.v != "" && h.wfStageID.v != "" && h.wfStageName.v != ""
	x.hdrModel = model{nonEmpty(t, t.Get(root, "provider")), nonEmpty(t, t.Get(root, "modelId"))}
}

// projectOf is the last path element of a cwd (SPEC.md §3), for / and \
// separated paths.
func projectOf(cwd string) string {
	s := strings.TrimRight(strings.ReplaceAll(cwd, `\`, "/"), "/")
	if s == "" {
		return cwd
	}
	return path.Base(s)
}

func parseISO(t *ingest.Tape, n int) optTime {
	b, ok := t.StrBytes(n)
	if !ok {
		return optTime{}
	}
	ts, err := validate.ParseTime(string(b))
	if err != nil {
		return optTime{}
	}
	return someTime(ts)
}

// entryTypes interns the known entry types so rows share their strings.
var entryTypes = func() map[string]string {
	m := map[string]string{"session": "session"}
	for k := range validate.KnownEntryTypes {
		m[k] = k
	}
	return m
}()

var roles = map[string]string{}

func init() {
	for _, r := range []string{"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary",
		"compactionSummary", "system", "hookMessage"} {
		roles[r] = r
	}
}

func intern(m map[string]string, b []byte) string {
	if s, ok := m[string(b)]; ok {
		return s
	}
	return validString(b)
}

// ent is the entry being extracted: its record, its row, and the raw
// timestamps its usage rows carry.
type ent struct {
	t        *ingest.Tape
	root     int
	r        *ingest.Record
	e        entryRow
	tsRaw    []byte // the entry's timestamp text (a copy: StrBytes' scratch is reused)
	msgTSRaw []byte // message.timestamp when a number (ms)
	msg      int    // message object, or -1
	instant  optTime
}

// entry extracts one line's entry: its row (ModeFull), its usage rows, its
// tool rows and its share of the session's counts.
func (x *extractor) entry(r *ingest.Record) {
	t, root := r.Tape, r.Root
	if t.Kind(root) != ingest.KindObject {
		return // not an entry: validate reports invalid_entry
	}
	var typ optStr
	if b, ok := t.StrBytes(t.Get(root, "type")); ok {
		typ = someStr(intern(entryTypes, b))
	}
	if typ.v == "session" {
		return // duplicate header: reported by validate, not an entry
	}
	n := x.entryHead(r)
	switch typ.v {
	case "message":
		x.message(&n)
	case "custom_message":
		x.customType(&n)
		x.blocks(t, t.Get(root, "content"), &n.e, nil)
	case "custom":
		x.customType(&n)
	case "model_change":
		m := model{nonEmpty(t, t.Get(root, "provider")), nonEmpty(t, t.Get(root, "modelId"))}
		n.e.provider, n.e.model = m.provider, m.model
		x.lastModelChange, x.haveModelChange = m, true
	case "thinking_level_change":
		if !x.opts.usageOnly {
			n.e.thinkingLevel = str(t, t.Get(root, "thinkingLevel"))
		}
	case "session_info":
		if nm := t.Get(root, "name"); nm >= 0 && x.ck.TitleSlot() == nil { // omp: the title slot is the name
			x.hdr.name = nonEmpty(t, nm) // an empty name clears the title
		}
	case "compaction", "branch_summary", "session_summary":
		x.summaryUsage(&n, typ.v)
	case "usage", "model_usage":
		x.usageEntry(&n, typ.v)
	case "child_usage_attributed":
		x.childUsage(&n)
	}
	x.hdr.activity(n.instant)
	x.hdr.entries++
	if !x.opts.usageOnly {
		n.e.typ = typ
		x.out.entries = append(x.out.entries, n.e)
	}
}

// entryHead reads what every entry has: index, ids, timestamps (the
// entry's, else its message's epoch milliseconds) and copy keys.
func (x *extractor) entryHead(r *ingest.Record) ent {
	t, root := r.Tape, r.Root
	full := !x.opts.usageOnly
	n := ent{t: t, root: root, r: r, e: entryRow{entryIndex: x.entryIdx, lineNo: r.Line}}
	e := &n.e
	x.entryIdx++
	e.entryID = nonEmpty(t, t.Get(root, "id"))
	x.lastID = e.entryID
	if full {
		pn := t.Get(root, "parentId")
		e.parentID = str(t, pn)
		x.hasParentKey = append(x.hasParentKey, pn >= 0)
		if e.entryID.ok {
			if _, dup := x.idIndex[e.entryID.v]; !dup {
				x.idIndex[e.entryID.v] = e.entryIndex
			}
		}
	}
	tsNode := t.Get(root, "timestamp")
	tsRaw, _ := t.StrBytes(tsNode)
	tsRaw = append(x.scratch[:0], tsRaw...) // StrBytes' scratch is reused by later calls
	x.scratch = tsRaw
	n.tsRaw = tsRaw
	e.timestamp = parseISO(t, tsNode)

	n.msg = t.Get(root, "message")
	if t.Kind(n.msg) != ingest.KindObject {
		n.msg = -1
	}
	msgTS := t.Get(n.msg, "timestamp")
	if t.Kind(msgTS) == ingest.KindNumber {
		n.msgTSRaw = t.Raw(msgTS)
	}
	if !e.timestamp.ok {
		if ms, ok := t.Int(msgTS); ok {
			e.timestamp = someTime(time.UnixMilli(ms).UTC())
		}
	}
	n.instant = e.timestamp

	// Copy keys (SPEC.md §4, see entryKeys): an entry is known by its id
	// and timestamp, and a v1 entry (no id, or the id migration derived for
	// it) also by its content.
	e.v1 = !e.entryID.ok || x.derivedID(e.entryID.v, r.Seq)
	if e.entryID.ok {
		e.copyKey = x.keyA(e.entryID.v, tsRaw) // usage rows need it
	}
	x.keys = pendingKeys{t: t, root: root, seq: r.Seq, ts: tsRaw}
	if full {
		x.entryKeys(e)
	} // ModeUsage: made only if the entry has tool rows (addBlock)
	if x.opts.withRaw && x.fits(int64(len(r.Raw)), r.Line, -1, "raw_json") {
		e.raw = someStr(validString(r.Raw))
	}
	return n
}

// customType keeps a custom entry's customType (ModeFull).
func (x *extractor) customType(n *ent) {
	if !x.opts.usageOnly {
		n.e.customType = str(n.t, n.t.Get(n.root, "customType"))
	}
}

// usageRow is the usage row of the usage object u of the entry n.
func (x *extractor) usageRow(n *ent, u int, kind string, attr model) usageRow {
	return x.usage(n.t, u, kind, n.r, &n.e, n.tsRaw, n.msgTSRaw, attr)
}

// message extracts a message entry: its role, an assistant's or a tool
// result's usage, and its content blocks.
func (x *extractor) message(n *ent) {
	t, msg, sess := n.t, n.msg, &x.hdr
	sess.messages++
	if msg < 0 {
		return
	}
	e := &n.e
	if b, ok := t.StrBytes(t.Get(msg, "role")); ok {
		e.role = someStr(intern(roles, b))
	}
	switch e.role.v {
	case "user":
		sess.user++
	case "assistant":
		sess.assistant++
	case "toolResult":
		sess.tools++
	default:
		sess.otherMessages++
	}
	if !x.opts.usageOnly {
		e.customType = str(t, t.Get(msg, "customType"))
	}
	var tr *toolResultMeta
	switch e.role.v {
	case "assistant":
		x.assistant(n)
	case "toolResult":
		tr = x.toolResult(n)
	}
	kept := len(x.out.tools)
	x.blocks(t, t.Get(msg, "content"), e, tr)
	if tr != nil && x.opts.usageOnly && tr.callID.ok && len(x.out.tools) == kept {
		// A result without content blocks ([] or no content: a
		// command with no output) is still a result, and its isError
		// counts: one tool_uses row stands for it (entries keep the
		// same facts in ModeFull).
		x.addBlock(&blockRow{entryIndex: e.entryIndex, entryID: e.entryID, blockIndex: -1,
			toolCallID: tr.callID, toolName: tr.name, isError: tr.isError}, e)
	}
}

// assistant extracts an assistant message's model and usage.
func (x *extractor) assistant(n *ent) {
	t, msg, e := n.t, n.msg, &n.e
	own := model{nonEmpty(t, t.Get(msg, "provider")), nonEmpty(t, t.Get(msg, "model"))}
	e.provider, e.model = own.provider, own.model
	requested := own.model
	if served := nonEmpty(t, t.Get(msg, "responseModel")); served.ok {
		// SPEC.md §7.4: a request routed by an alias (openrouter/auto)
		// is priced and grouped by the model that served it.
		own.model = served
	}
	if u := t.Get(msg, "usage"); t.Kind(u) == ingest.KindObject {
		attr := own
		if !attr.provider.ok && !attr.model.ok {
			attr = x.attribution()
		}
		row := x.usageRow(n, u, KindAssistant, attr)
		row.requestedModel = requested
		row.api = str(t, t.Get(msg, "api"))
		row.stopReason = str(t, t.Get(msg, "stopReason"))
		if e.entryID.ok {
			x.own[e.entryID.v] = ownUsage{tokens4{row.input, row.output, row.cacheRead, row.cacheWrite}, attr}
		}
		x.out.usage = append(x.out.usage, row)
	}
	x.lastAssistant, x.haveAssistant = own, true
}

// toolResult extracts a tool result message's call, and its usage: a
// subagent roll-up and its parts (SPEC.md §7.3).
func (x *extractor) toolResult(n *ent) *toolResultMeta {
	t, msg, e := n.t, n.msg, &n.e
	tr := &toolResultMeta{callID: str(t, t.Get(msg, "toolCallId")), name: str(t, t.Get(msg, "toolName"))}
	if ie := t.Kind(t.Get(msg, "isError")); ie == ingest.KindTrue || ie == ingest.KindFalse {
		tr.isError = someBool(ie == ingest.KindTrue)
	}
	e.toolCallID, e.toolName, e.isError = tr.callID, tr.name, tr.isError
	if u := t.Get(msg, "usage"); t.Kind(u) == ingest.KindObject {
		attr := x.attribution()
		row := x.usageRow(n, u, KindToolResult, attr)
		cs := x.rollupLink(t, t.Get(msg, "details"), tr.callID, &row)
		x.out.usage = append(x.out.usage, row)
		x.out.usage = append(x.out.usage, x.splitRollup(t, cs, &row, n.r, e, n.tsRaw, n.msgTSRaw, attr)...)
	}
	return tr
}

// summaryKinds are the usage kinds of the summary entries.
var summaryKinds = map[string]string{"compaction": KindCompaction, "branch_summary": KindBranchSummary,
	"session_summary": KindSessionSummary}

// summaryUsage extracts the usage of a compaction, branch summary or
// session summary entry of type typ.
func (x *extractor) summaryUsage(n *ent, typ string) {
	u := n.t.Get(n.root, "usage")
	if n.t.Kind(u) != ingest.KindObject {
		return
	}
	kind := summaryKinds[typ]
	attr := x.attribution()
	if kind == KindSessionSummary {
		// The format records no model for the summary call (it may
		// use another model than the session): none is guessed, so
		// it is priced only from a recorded cost (SPEC.md §4).
		attr = model{}
	}
	x.out.usage = append(x.out.usage, x.usageRow(n, u, kind, attr))
}

// usageEntry extracts pi's appendUsage entries (typ usage: kind
// cache_warm, …) and oh-my-pi's side calls (typ model_usage: purpose
// title, …). They carry their own provider and model (SPEC.md §1.4, §4);
// without them the usage is attributed like a tool result's.
func (x *extractor) usageEntry(n *ent, typ string) {
	t, root := n.t, n.root
	u := t.Get(root, "usage")
	if t.Kind(u) != ingest.KindObject {
		return
	}
	kind, sub := KindUsageEntry, "kind"
	if typ == "model_usage" {
		kind, sub = KindModelUsage, "purpose"
	}
	attr := model{nonEmpty(t, t.Get(root, "provider")), nonEmpty(t, t.Get(root, "model"))}
	if !attr.provider.ok && !attr.model.ok {
		attr = x.attribution()
	}
	n.e.provider, n.e.model = attr.provider, attr.model
	row := x.usageRow(n, u, kind, attr)
	row.subKind = nonEmpty(t, t.Get(root, sub))
	row.api = str(t, t.Get(root, "api"))
	row.stopReason = str(t, t.Get(root, "stopReason"))
	x.out.usage = append(x.out.usage, row)
}

// childUsage extracts a child_usage_attributed entry. The child's usage is
// folded into the target assistant message (seed 003): it is priced as the
// target's model when the target is in the file, else as usage without a
// model of its own.
func (x *extractor) childUsage(n *ent) {
	t, root := n.t, n.root
	u := t.Get(root, "childUsage")
	if t.Kind(u) != ingest.KindObject {
		return
	}
	attr := x.attribution()
	if own, ok := x.own[str(t, t.Get(root, "targetId")).v]; ok {
		attr = own.attr
	}
	row := x.usageRow(n, u, KindChildUsage, attr)
	x.out.usage = append(x.out.usage, row)
	x.checkChild(t, root, n.r.Line, tokens4{row.input, row.output, row.cacheRead, row.cacheWrite})
}

// ownUsage is an assistant message's own usage and the model it is priced
// as, for the child_usage_attributed records that name it as their target.
type ownUsage struct {
	tokens tokens4
	attr   model
}

// attribution is the provider/model of usage without its own (SPEC.md §4
// decisions): the nearest preceding assistant message, else the last
// model_change, else the v1 header. session_summary usage gets none.
func (x *extractor) attribution() model {
	switch {
	case x.haveAssistant && (x.lastAssistant.provider.ok || x.lastAssistant.model.ok):
		return x.lastAssistant
	case x.haveModelChange:
		return x.lastModelChange
	}
	return x.hdrModel
}

// checkChild compares a child_usage_attributed record's aggregateUsage
// with the target's own usage plus the children attributed to it so far.
func (x *extractor) checkChild(t *ingest.Tape, root, line int, child tokens4) {
	target := str(t, t.Get(root, "targetId")).v
	sum := x.children[target].add(child)
	x.children[target] = sum
	agg := t.Get(root, "aggregateUsage")
	if t.Kind(agg) != ingest.KindObject {
		return
	}
	got := tokens4{quietTok(t, agg, "input"), quietTok(t, agg, "output"), quietTok(t, agg, "cacheRead"), quietTok(t, agg, "cacheWrite")}
	ownU, ok := x.own[target]
	own := ownU.tokens
	if !ok {
		x.issuef(line, CodeChildUsageMismatch, "child usage names target %q, which is not an assistant message with usage earlier in the file", target)
		return
	}
	if want := own.add(sum); want != got {
		x.issuef(line, CodeChildUsageMismatch,
			"aggregateUsage of %s is input %d, output %d, cacheRead %d, cacheWrite %d; its own usage plus the children so far is %d, %d, %d, %d",
			target, got.in, got.out, got.cr, got.cw, want.in, want.out, want.cr, want.cw)
	}
}

func quietTok(t *ingest.Tape, obj int, key string) int64 {
	v, ok := t.Int(t.Get(obj, key))
	if !ok || v < 0 || v > MaxTokens {
		return 0
	}
	return v
}

// tok reads a token count: missing is 0; negative or not an integer is 0
// and a bad_usage issue.
func (x *extractor) tok(t *ingest.Tape, obj int, key string, line int) int64 {
	n := t.Get(obj, key)
	if n < 0 || t.Kind(n) == ingest.KindNull {
		return 0
	}
	v, ok := t.Int(n)
	if !ok || v < 0 {
		x.issuef(line, CodeBadUsage, "usage.%s is %s, not a non-negative integer: counted as 0", key, clip(t.Raw(n)))
		return 0
	}
	if v > MaxTokens {
		x.issuef(line, CodeBadUsage, "usage.%s is %s, more than %d tokens in one record: counted as 0", key, clip(t.Raw(n)), int64(MaxTokens))
		return 0
	}
	return v
}

// MaxRecordCost is the largest recorded cost one usage field may hold, in
// USD: one model call costing more than a million dollars is no real cost.
// A larger value is a bad_usage issue and is ignored like a negative one,
// so that cost sums stay exact and in range (the report sums costs as
// DECIMAL(38,15); 10^23 USD broke every report).
const MaxRecordCost = 1e6

// MaxTokens is the largest token count one usage field may hold (2⁴⁰,
// about 1.1 × 10¹²; the largest context windows hold some 10⁷ tokens).
// A larger count is no real count: it is a bad_usage issue and counts as 0
// like a negative one (SPEC.md §4), so that sums of records can never
// overflow 64 bits.
const MaxTokens = 1 << 40

// cost reads a recorded cost component: absent or null is NULL; a value
// that is not a finite non-negative number is NULL and a bad_usage issue.
func (x *extractor) cost(t *ingest.Tape, obj int, key string, line int) optFloat {
	n := t.Get(obj, key)
	if n < 0 || t.Kind(n) == ingest.KindNull {
		return optFloat{}
	}
	v, ok := t.Float(n)
	if !ok || v < 0 || math.IsNaN(v) {
		x.issuef(line, CodeBadUsage, "usage.cost.%s is %s, not a non-negative number: ignored", key, clip(t.Raw(n)))
		return optFloat{}
	}
	if v > MaxRecordCost {
		x.issuef(line, CodeBadUsage, "usage.cost.%s is %s, more than %g USD for one record: ignored", key, clip(t.Raw(n)), float64(MaxRecordCost))
		return optFloat{}
	}
	return someFloat(v)
}

func clip(b []byte) string {
	if len(b) > 40 {
		return validString(b[:40]) + "…"
	}
	return validString(b)
}

func (x *extractor) usage(t *ingest.Tape, u int, kind string, r *ingest.Record, e *entryRow,
	tsRaw, msgTSRaw []byte, m model) usageRow {
	line := r.Line
	row := usageRow{entryIndex: e.entryIndex, entryID: e.entryID, lineNo: line, timestamp: e.timestamp,
		kind: kind, provider: m.provider, model: m.model}
	row.input = x.tok(t, u, "input", line)
	row.output = x.tok(t, u, "output", line)
	row.cacheRead = x.tok(t, u, "cacheRead", line)
	row.cacheWrite = x.tok(t, u, "cacheWrite", line)
	x.cacheWrite1h(t, u, &row)
	row.totalTokens = row.input + row.output + row.cacheRead + row.cacheWrite
	if n := t.Get(u, "totalTokens"); n >= 0 && t.Kind(n) != ingest.KindNull {
		if v, ok := t.Int(n); ok && v >= 0 && v <= MaxTokens {
			row.totalTokens = v
		} else {
			x.issuef(line, CodeBadUsage, "usage.totalTokens is %s, not a non-negative integer of at most 2^40: the sum of the counts is used", clip(t.Raw(n)))
		}
	}
	if c := t.Get(u, "cost"); t.Kind(c) == ingest.KindNumber {
		// pi-subagents' own usage objects carry the total cost as a plain
		// number (SPEC.md §7.3).
		row.recorded.total = x.cost(t, u, "cost", line)
	} else if t.Kind(c) == ingest.KindObject {
		row.recorded = costParts{
			input:      x.cost(t, c, "input", line),
			output:     x.cost(t, c, "output", line),
			cacheRead:  x.cost(t, c, "cacheRead", line),
			cacheWrite: x.cost(t, c, "cacheWrite", line),
			total:      x.cost(t, c, "total", line),
		}
	}
	if x.opts.prices != nil && m.provider.ok && m.model.ok {
		var at time.Time
		if row.timestamp.ok {
			at = row.timestamp.v
		}
		if p, ok := x.opts.prices.LookupAt(m.provider.v, m.model.v, at); ok {
			c := p.Cost(pricing.Tokens{Input: row.input, Output: row.output, CacheRead: row.cacheRead, CacheWrite: row.cacheWrite,
				CacheWrite1h: row.cacheWrite1h})
			row.calculated = costParts{someFloat(c.Input), someFloat(c.Output), someFloat(c.CacheRead), someFloat(c.CacheWrite), someFloat(c.Total)}
		}
	}
	row.cost, row.costSource = costOf(x.opts.costMode, &row)
	if !e.v1 {
		row.copyKeyA = someInt(e.copyKey)
	}
	row.copyKeyB = x.keyB(kind, tsRaw, msgTSRaw, row.input, row.output, row.cacheRead, row.cacheWrite)
	return row
}

// cacheWrite1h sets the 1-hour part of row's cache writes (SPEC.md §7.4):
// pi's usage.cacheWrite1h (the 1-hour part of cacheWrite), else oh-my-pi's
// usage.cttl.ephemeral1h (cttl's ephemeral5m and ephemeral1h add up to
// cacheWrite; when cacheWrite is missing or 0, their sum is the cache
// writes). A 1-hour part above cacheWrite is a bad_usage issue and is
// counted as cacheWrite.
func (x *extractor) cacheWrite1h(t *ingest.Tape, u int, row *usageRow) {
	line := row.lineNo
	var h int64
	key := "cacheWrite1h"
	if n := t.Get(u, key); n >= 0 && t.Kind(n) != ingest.KindNull {
		h = x.tok(t, u, key, line)
	} else if c := t.Get(u, "cttl"); t.Kind(c) == ingest.KindObject {
		key = "cttl.ephemeral1h"
		h5, h1 := x.tok(t, c, "ephemeral5m", line), x.tok(t, c, "ephemeral1h", line)
		if row.cacheWrite == 0 {
			row.cacheWrite = h5 + h1
		}
		h = h1
	}
	if h > row.cacheWrite {
		x.issuef(line, CodeBadUsage, "usage.%s is %d, more than the %d cache-write tokens: counted as %d", key, h, row.cacheWrite, row.cacheWrite)
		h = row.cacheWrite
	}
	row.cacheWrite1h = h
}

// costOf is the cost of a usage row in mode and where it comes from
// (SPEC.md §4), as queries/export.sql apply_cost_mode computes it when the
// mode of an export changes: recorded uses usage.cost; calculate the price
// table; auto the recorded cost when present and non-zero for non-zero
// tokens, else the price table. Without a cost the row is unpriced and its
// cost columns NULL.
func costOf(mode CostMode, r *usageRow) (costParts, string) {
	rec, calc := r.recorded.total.ok, r.calculated.total.ok
	switch mode {
	case CostRecorded:
		calc = false
	case CostCalculate:
		rec = false
	default:
		noTokens := r.input == 0 && r.output == 0 && r.cacheRead == 0 && r.cacheWrite == 0
		rec = rec && (r.recorded.total.v != 0 || noTokens)
	}
	switch {
	case rec:
		return r.recorded, "recorded"
	case calc:
		return r.calculated, "calculated"
	}
	return costParts{}, "unpriced"
}

// toolResultMeta is what a toolResult message gives each of its blocks.
type toolResultMeta struct {
	callID, name optStr
	isError      optBool
}

// blocks adds the content blocks of content (a string or an array): in
// ModeFull as content_blocks rows, in ModeUsage as tool_uses rows for the
// blocks the tools report reads (toolCall blocks, and the blocks of
// toolResult messages with a tool call id), whose other blocks are not
// even measured.
func (x *extractor) blocks(t *ingest.Tape, content int, e *entryRow, tr *toolResultMeta) {
	base := blockRow{entryIndex: e.entryIndex, entryID: e.entryID}
	if tr != nil {
		base.toolCallID, base.toolName, base.isError = tr.callID, tr.name, tr.isError
	}
	// measure: the block's size and content are needed (all but toolCall
	// blocks outside tool results are left out of ModeUsage).
	measure := !x.opts.usageOnly || (tr != nil && !x.opts.noTools)
	switch t.Kind(content) {
	case ingest.KindString:
		if !measure {
			return
		}
		b := base
		b.blockType = someStr("text")
		x.text(t, content, &b, e.lineNo)
		x.addBlock(&b, e)
	case ingest.KindArray:
		i := 0
		t.Children(content, func(c int) bool {
			idx := i
			i++
			if t.Kind(c) != ingest.KindObject {
				return true
			}
			b := base
			b.blockIndex = idx
			bt, _ := t.StrBytes(t.Get(c, "type"))
			b.blockType = someStr(intern(blockTypes, bt))
			if !measure && b.blockType.v != "toolCall" {
				return true
			}
			switch b.blockType.v {
			case "text":
				x.text(t, t.Get(c, "text"), &b, e.lineNo)
			case "thinking":
				x.text(t, t.Get(c, "thinking"), &b, e.lineNo)
			case "image":
				if !x.opts.usageOnly {
					b.mimeType = str(t, t.Get(c, "mimeType"))
				}
				if d := t.Get(c, "data"); t.Kind(d) == ingest.KindString {
					b.byteSize = someInt(base64Size(t, d))
				}
			case "toolCall":
				b.toolCallID = str(t, t.Get(c, "id"))
				b.toolName = str(t, t.Get(c, "name"))
				if a := t.Get(c, "arguments"); a >= 0 {
					x.noteCallLinks(t, a, b.toolCallID)
					raw := t.Raw(a)
					b.byteSize = someInt(int64(len(raw)))
					if !x.opts.noContent && x.fits(int64(len(raw)), e.lineNo, idx, "arguments") {
						if v := validString(raw); x.fits(int64(len(v)), e.lineNo, idx, "arguments (invalid UTF-8 read as U+FFFD)") {
							b.arguments = someStr(v)
						}
					}
				}
			}
			if bt == nil {
				b.blockType = optStr{}
			}
			x.addBlock(&b, e)
			return true
		})
	}
}

// addBlock keeps block b of entry e: a content_blocks row, or in ModeUsage
// a tool_uses row when the tools report reads it.
func (x *extractor) addBlock(b *blockRow, e *entryRow) {
	out := x.out
	if !x.opts.usageOnly {
		out.blocks = append(out.blocks, *b)
		return
	}
	isCall, isResult := b.blockType.v == "toolCall", e.role.v == "toolResult" && b.toolCallID.ok
	if (!isCall && !isResult) || x.opts.noTools {
		return
	}
	x.entryKeys(e)
	out.tools = append(out.tools, toolRow{entryIndex: e.entryIndex, blockIndex: b.blockIndex, timestamp: e.timestamp,
		isCall: isCall, isResult: isResult, toolCallID: b.toolCallID, toolName: b.toolName, provider: e.provider,
		model: e.model, byteSize: b.byteSize, isError: b.isError, copyKey: e.copyKey, contentKey: e.contentKey})
}

// pendingKeys is what the copy keys of the current entry are made of, until
// entryKeys makes them.
type pendingKeys struct {
	t    *ingest.Tape
	root int
	seq  int
	ts   []byte
	done bool
}

// entryKeys completes the copy keys of entry e, the current entry, once:
// copy_key is its id and timestamp — for an entry without id, the id
// migration will give it (session.DerivedEntryID), so that it matches its
// migrated form and the forks of that; content_key, for a v1 entry only,
// hashes its content (keyV1), so that the copies in a v1 fork, which
// migration gives ids of their own, match too. entries.fork_copy_of and the
// tools report treat an entry as a copy when an older session holds one
// with the same copy_key or the same content_key.
func (x *extractor) entryKeys(e *entryRow) {
	k := &x.keys
	if k.done {
		return
	}
	k.done = true
	if !e.entryID.ok {
		e.copyKey = x.keyA(session.DerivedEntryID(x.sessionID, k.seq, 0), k.ts)
	}
	if e.v1 {
		e.contentKey = someInt(x.keyV1(k.t, k.root))
	}
}

var blockTypes = map[string]string{"text": "text", "thinking": "thinking", "image": "image", "toolCall": "toolCall"}

// text sets the size (decoded UTF-8 bytes) and, with content, the text of
// block b (of the entry at line) from the string node n, decoding it at
// most once, and never when it is too long to store.
func (x *extractor) text(t *ingest.Tape, n int, b *blockRow, line int) {
	if t.Kind(n) != ingest.KindString {
		return
	}
	size := int64(t.StrLen(n))
	b.byteSize = someInt(size)
	if x.opts.noContent || !x.fits(size, line, b.blockIndex, b.blockType.v) {
		return
	}
	s := str(t, n) // decoded once, at its size
	if int64(len(s.v)) > size && !x.fits(int64(len(s.v)), line, b.blockIndex, b.blockType.v+" (invalid UTF-8 read as U+FFFD)") {
		return
	}
	b.text = s
}

// base64Size is the decoded size in bytes of the base64 string node n
// (padding and whitespace excluded).
func base64Size(t *ingest.Tape, n int) int64 {
	s, _ := t.StrBytes(n)
	k := 0
	for _, c := range s {
		switch c {
		case '=', ' ', '\n', '\r', '\t':
		default:
			k++
		}
	}
	return int64(k) * 6 / 8
}

// Copy keys (SPEC.md §4): 64-bit hashes of length-prefixed fields.

func (x *extractor) keyA(id string, ts []byte) int64 {
	b := x.scratchKey('A')
	b = appendField(b, []byte(id))
	b = appendField(b, ts)
	return x.hash(b)
}

// keyV1 is the content key of a v1 entry: a hash of its members other than
// those migration adds or rewrites (id, parentId, firstKeptEntryIndex →
// firstKeptEntryId), raw, in order, so that the entry, a fork's verbatim
// copy of it and the migrated forms of both share it (SPEC.md §2.1, §4).
// (Migration's other entry edit, message.role hookMessage → custom, is not
// undone: such entries carry neither usage nor tool calls.)
func (x *extractor) keyV1(t *ingest.Tape, root int) int64 {
	if x.v1Hash == nil {
		x.v1Hash = xxh3.New()
	}
	h := x.v1Hash
	h.Reset()
	buf := t.Buf()
	var n [binary.MaxVarintLen64]byte
	t.Children(root, func(c int) bool {
		nd := &t.Nodes[c]
		key := buf[nd.KeyStart:nd.KeyEnd]
		switch string(key) {
		case "id", "parentId", "firstKeptEntryIndex", "firstKeptEntryId":
			return true
		}
		h.Write(binary.AppendUvarint(n[:0], uint64(len(key))))
		h.Write(key)
		val := t.Raw(c)
		h.Write(binary.AppendUvarint(n[:0], uint64(len(val))))
		h.Write(val)
		return true
	})
	b := x.scratchKey('V')
	b = binary.LittleEndian.AppendUint64(b, h.Sum64())
	return x.hash(b)
}

// derivedID reports whether id, the id of the entry at record position seq,
// is one migration derived for a v1 entry of this session or of its parent
// (a fork of a migrated session copies its ids): session.IsDerivedEntryID.
func (x *extractor) derivedID(id string, seq int) bool {
	return session.IsDerivedEntryID(id, x.sessionID, seq) ||
		x.hdr.parentID.ok && session.IsDerivedEntryID(id, x.hdr.parentID.v, seq)
}

func (x *extractor) keyB(kind string, ts, msgTS []byte, in, out, cr, cw int64) int64 {
	b := x.scratchKey('B')
	b = appendField(b, []byte(kind))
	b = appendField(b, ts)
	b = appendField(b, msgTS)
	for _, v := range [...]int64{in, out, cr, cw} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return x.hash(b)
}

// scratchKey starts a key in keyBuf (scratch holds the entry's timestamp
// bytes while keys are built).
func (x *extractor) scratchKey(domain byte) []byte {
	return append(x.keyBuf[:0], domain)
}

func (x *extractor) hash(b []byte) int64 {
	x.keyBuf = b
	return int64(xxh3.Hash(b))
}

func appendField(b, f []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(f)))
	return append(b, f...)
}

// finish completes the file: the verdict, and, when its records are used,
// the active branch and the session row.
func (x *extractor) finish() *fileResult {
	out := x.out
	res := x.ck.Finish()
	out.res = res
	torn := false
	bom, headerLineErr := false, false
	for _, is := range res.Issues {
		switch {
		case is.Code == ingest.CodeTornFinalRecord:
			torn = true
		case is.Code == ingest.CodeBOM:
			bom = true
		case is.Line == 1 && is.Severity == ingest.SeverityError:
			headerLineErr = true // e.g. the header shares its line with records
		}
	}
	use := x.isSession
	switch res.Status {
	case validate.StatusNeedsUpgrade, validate.StatusCurrent, validate.StatusTorn, validate.StatusCorrupt:
	case validate.StatusNotSession:
		// A BOM before an otherwise good header: read with the BOM dropped,
		// flagged by the status. A header line with another error (records
		// glued to the header) is not_session with or without a BOM.
		use = use && bom && !headerLineErr && res.FormatVersion >= 1 && res.FormatVersion <= validate.CurrentVersion
	default:
		use = false
	}
	out.issueN = res.Errors + res.Warnings + res.Notes
	for _, is := range res.Issues {
		out.issues = append(out.issues, issueRow{lineNo: is.Line, severity: string(is.Severity), code: is.Code, message: is.Message})
	}
	if !use {
		out.entries, out.blocks, out.tools, out.usage = nil, nil, nil, nil
		return out
	}
	out.issueN += len(x.exportIssues)
	out.issues = append(out.issues, x.exportIssues...)
	sort.SliceStable(out.issues, func(i, j int) bool {
		a, b := out.issues[i].lineNo, out.issues[j].lineNo
		if a == 0 {
			return false
		}
		return b == 0 || a < b
	})
	if !x.opts.usageOnly {
		x.activeBranch()
	}
	s := x.hdr
	s.source = out.file.Source
	s.path = out.file.Path
	s.formatVersion = res.FormatVersion
	s.activeLeaf = x.lastID
	s.torn = torn
	out.session = &s
	return out
}

// activeBranch marks the entries on the path from the last entry to the
// root (SPEC.md §1.4). An entry without a parentId key (v1) hangs under
// the entry before it.
func (x *extractor) activeBranch() {
	es := x.out.entries
	cur := len(es) - 1
	for cur >= 0 && !es[cur].onActiveBranch {
		e := &es[cur]
		e.onActiveBranch = true
		switch {
		case !x.hasParentKey[cur]:
			cur--
		case e.parentID.ok:
			p, ok := x.idIndex[e.parentID.v]
			if !ok {
				return
			}
			cur = p
		default:
			return
		}
	}
}
