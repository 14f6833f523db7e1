package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/session"
	"github.com/sessions-etl/sessions-etl/validate"
)

// Edit replaces the original bytes [Off, End) with New. Edits of a plan are
// sorted by Off and never overlap; an insertion has Off == End.
type Edit struct {
	Off, End int64
	New      []byte
}

// Change describes one planned modification, for output and the journal.
type Change struct {
	Line int    `json:"line"`
	What string `json:"what"`
}

// Plan is everything a migration of one file will do. It is computed from
// the file's bytes only, so planning the same bytes twice gives the same plan.
type Plan struct {
	FromVersion int             // format version before (1–4)
	EarlyV4     bool            // the file was early v4
	SessionID   string          // header id
	Status      validate.Status // verdict before
	Edits       []Edit
	Changes     []Change // upgrade changes (SPEC.md §2.1), the first MaxListedChanges of them
	ChangeCount int      // all upgrade changes
	Repairs     []Change // --repair changes
	Notes       []Change // things left as they are, worth telling
	Entries     int      // entries the migrated file holds
	KeptParent  bool     // an unresolved parentSession path is kept (--keep-unresolved-parent)
	// Base, when not nil, holds the repaired bytes the Edits apply to (a
	// --repair plan); Apply then reads the original only to consume it.
	Base []byte
	Size int64 // bytes of the original
}

// MaxListedChanges caps Plan.Changes (a v1 file has one change per entry).
const MaxListedChanges = 50

// NeedsWrite reports whether applying the plan changes the file.
func (p *Plan) NeedsWrite() bool { return len(p.Edits) > 0 || p.Base != nil }

// PlanOptions configures [PlanFile].
type PlanOptions struct {
	// Repair allows the repairs of SPEC.md §1.5/issue "migrate": split
	// concatenated records (fragments glued to records are dropped), remove
	// a torn final fragment, drop a leading BOM.
	Repair bool
	// KeepUnresolvedParent writes v4 even when a parentSession path cannot
	// be resolved to a session id, keeping the path in parentSession.
	KeepUnresolvedParent bool
	// RemovedKept says, in the messages of repairs that remove bytes, where
	// those bytes remain: "" means "kept in the backup" (migrate); import
	// says that the source file keeps them, migrate --no-backup that they
	// are not kept.
	RemovedKept string
	// ResolveParent maps a header's parentSession path to the parent's
	// session id (SPEC.md §2.1). Nil resolves nothing.
	ResolveParent func(parentPath string) (id string, ok bool)
}

// Reasons a file is not migrated. They are the stable "reason" strings of
// `migrate --json` (README.md).
const (
	ReasonUnresolvedParent = "unresolved_parent"  // parentSession path names no known session
	ReasonConflict         = "conflicting_header" // header holds both old and new keys with different values
	ReasonNotRepairable    = "not_repairable"     // --repair given but the damage is not of a repairable kind
	ReasonCheckFailed      = "post_check_failed"  // the planned result did not validate as current v4
)

// SkipError explains why a file is left untouched. Reason is a validate
// status (torn, corrupt, …) or one of the Reason* constants.
type SkipError struct {
	Reason string
	Detail string
}

// Error gives the reason, then the detail.
func (e *SkipError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + ": " + e.Detail
}

// member is an object member's location in the file.
type member struct {
	keyStart int64 // offset of the key's opening quote
	keyEnd   int64 // offset just after the key's closing quote
	valStart int64
	valEnd   int64
	present  bool
}

type v1Entry struct {
	seq, line     int
	typeEnd       int64 // offset just after the "type" value (insertion point)
	hasType       bool
	id            string
	idRaw         []byte // the id's JSON text as written (invalid UTF-8 kept)
	hasID         bool
	idEnd         int64
	hasParent     bool
	parentNull    member // a "parentId":null member (present only then)
	firstKept     member // firstKeptEntryIndex
	firstKeptIdx  int64  // -1 when not an integer
	hasFirstKeyID bool   // also has firstKeptEntryId
}

type splitLine struct {
	line       int
	start, end int64
	crlf       bool
	final      bool
	values     [][2]int64
}

// planner is the ingest.Visitor that gathers what a plan needs in one read.
type planner struct {
	ck     *validate.Checker
	opts   PlanOptions
	header bool
	hdr    struct {
		typeEnd                                      int64
		version, timestamp, createdAt, parent, parID member
		parentVal, parIDVal                          []byte
		tsVal, caVal                                 []byte
		members                                      []member // all header members in order
		line                                         int
	}
	version    int
	entries    []v1Entry
	hookRoles  []Change
	hookEdits  []Edit
	split      map[int]*splitLine
	splitOrder []int
	bom        bool
	torn       bool
	tornLine   int // the torn final line
	noNewline  bool
	conflict   string // why the file cannot be edited safely
	firstSplit bool   // the header shares its line with other records
	lastLine   int
	src        io.ReaderAt
	records    int
	err        error
}

func fileOff(r *ingest.Record, pos int) int64 {
	return r.Offset + int64(pos-r.Tape.Nodes[r.Root].Start)
}

func (p *planner) memberOf(r *ingest.Record, n int) member {
	if n < 0 {
		return member{}
	}
	nd := &r.Tape.Nodes[n]
	return member{keyStart: fileOff(r, nd.KeyStart-1), keyEnd: fileOff(r, nd.KeyEnd+1), valStart: fileOff(r, nd.Start), valEnd: fileOff(r, nd.End), present: true}
}

func (p *planner) Issue(is ingest.Issue) {
	switch is.Code {
	case ingest.CodeBOM:
		p.bom = true
	case ingest.CodeTornFinalRecord:
		p.torn = true
		p.tornLine = is.Line
	case ingest.CodeNoTrailingNewline:
		p.noNewline = true
		p.lastLine = is.Line
	}
	p.ck.Issue(is)
}

func (p *planner) Record(r *ingest.Record) error {
	if err := p.ck.Record(r); err != nil {
		return err
	}
	p.records++
	if r.Split {
		sl := p.split[r.Line]
		if sl == nil {
			sl = &splitLine{line: r.Line, start: r.LineStart, end: r.LineEnd, crlf: r.CRLF, final: r.Final}
			p.split[r.Line] = sl
			p.splitOrder = append(p.splitOrder, r.Line)
		}
		sl.values = append(sl.values, [2]int64{r.Offset, r.Offset + int64(len(r.Raw))})
	}
	t, root := r.Tape, r.Root
	if !p.header {
		p.header = true
		p.firstSplit = r.Split
		p.headerRecord(r)
		return nil
	}
	if t.Kind(root) != ingest.KindObject {
		return nil
	}
	typ, _ := t.Str(t.Get(root, "type"))
	if typ == "session" {
		return nil
	}
	if p.version <= 2 && typ == "message" {
		if k := dupKey(t, t.Get(root, "message"), "role"); k != "" && p.conflict == "" {
			p.conflict = fmt.Sprintf("line %d: message key %q occurs twice", r.Line, k)
		}
		role := t.Path(root, "message", "role")
		if s, ok := t.Str(role); ok && s == "hookMessage" {
			nd := &t.Nodes[role]
			p.hookEdits = append(p.hookEdits, Edit{Off: fileOff(r, nd.Start), End: fileOff(r, nd.End), New: []byte(`"custom"`)})
			p.hookRoles = append(p.hookRoles, Change{Line: r.Line, What: `message.role "hookMessage" → "custom"`})
		}
	}
	if p.version == 1 {
		if k := dupKey(t, root, "type", "id", "parentId", "firstKeptEntryIndex", "firstKeptEntryId"); k != "" && p.conflict == "" {
			p.conflict = fmt.Sprintf("line %d: entry key %q occurs twice", r.Line, k)
		}
		e := v1Entry{seq: r.Seq, line: r.Line, firstKeptIdx: -1}
		if tn := t.Get(root, "type"); tn >= 0 {
			e.hasType = true
			e.typeEnd = fileOff(r, t.Nodes[tn].End)
		}
		if in := t.Get(root, "id"); in >= 0 {
			e.id, _ = t.Str(in)
			e.idRaw = bytes.Clone(t.Raw(in))
			e.hasID = true
			e.idEnd = fileOff(r, t.Nodes[in].End)
		}
		if pn := t.Get(root, "parentId"); pn >= 0 {
			e.hasParent = true
			if t.Kind(pn) == ingest.KindNull {
				e.parentNull = p.memberOf(r, pn)
			}
		}
		if typ == "compaction" {
			if fk := t.Get(root, "firstKeptEntryIndex"); fk >= 0 {
				e.firstKept = p.memberOf(r, fk)
				if v, ok := t.Int(fk); ok {
					e.firstKeptIdx = v
				}
				e.hasFirstKeyID = t.Get(root, "firstKeptEntryId") >= 0
			}
		}
		p.entries = append(p.entries, e)
	}
	return nil
}

// dupKey returns the first of keys that occurs more than once in object n:
// JavaScript keeps the last occurrence, an edit would see only one, so such
// records are not rewritten.
func dupKey(t *ingest.Tape, n int, keys ...string) string {
	for _, k := range keys {
		count := 0
		t.Children(n, func(c int) bool {
			if name, ok := t.Key(c); ok && name == k {
				count++
			}
			return count < 2
		})
		if count > 1 {
			return k
		}
	}
	return ""
}

func (p *planner) headerRecord(r *ingest.Record) {
	t, root := r.Tape, r.Root
	if t.Kind(root) != ingest.KindObject {
		return
	}
	if k := dupKey(t, root, "type", "version", "timestamp", "createdAt", "parentSession", "parentSessionId"); k != "" {
		p.conflict = fmt.Sprintf("line %d: header key %q occurs twice", r.Line, k)
	}
	h := &p.hdr
	h.line = r.Line
	if tn := t.Get(root, "type"); tn >= 0 {
		h.typeEnd = fileOff(r, t.Nodes[tn].End)
	}
	h.version = p.memberOf(r, t.Get(root, "version"))
	h.timestamp = p.memberOf(r, t.Get(root, "timestamp"))
	h.createdAt = p.memberOf(r, t.Get(root, "createdAt"))
	h.parent = p.memberOf(r, t.Get(root, "parentSession"))
	h.parID = p.memberOf(r, t.Get(root, "parentSessionId"))
	h.parentVal = bytes.Clone(t.Raw(t.Get(root, "parentSession")))
	h.parIDVal = bytes.Clone(t.Raw(t.Get(root, "parentSessionId")))
	h.tsVal = bytes.Clone(t.Raw(t.Get(root, "timestamp")))
	h.caVal = bytes.Clone(t.Raw(t.Get(root, "createdAt")))
	t.Children(root, func(c int) bool {
		h.members = append(h.members, p.memberOf(r, c))
		return true
	})
	vn := t.Get(root, "version")
	if vn < 0 {
		p.version = 1
	} else if v, ok := t.Int(vn); ok && v >= 1 && v <= 4 {
		p.version = int(v)
	}
}

// PlanFile reads a session file of size bytes from src and plans its
// upgrade to v4. It returns a
// *SkipError when the file must stay untouched (status not needs_upgrade,
// unresolved parent, conflicting header keys, damage --repair cannot fix).
// A current file yields a plan without edits.
func PlanFile(ctx context.Context, src io.ReaderAt, size int64, opts PlanOptions) (*Plan, error) {
	p := &planner{ck: validate.NewChecker(), opts: opts, split: map[int]*splitLine{}, src: src}
	rd := ingest.Reader{MaxDepth: 2}
	if _, err := rd.Read(ctx, io.NewSectionReader(src, 0, size), p); err != nil {
		return nil, err
	}
	res := p.ck.Finish()
	plan := &Plan{FromVersion: res.Header.Version, EarlyV4: res.EarlyV4, SessionID: res.Header.ID,
		Status: res.Status, Entries: res.Entries, Size: size}
	if res.FormatVersion > 0 {
		plan.FromVersion = res.FormatVersion
	}
	switch res.Status {
	case validate.StatusNeedsUpgrade:
	case validate.StatusCurrent:
		return plan, nil
	case validate.StatusEmpty:
		return nil, &SkipError{Reason: string(res.Status)}
	default:
		if !opts.Repair {
			return nil, &SkipError{Reason: string(res.Status), Detail: res.FirstError()}
		}
		if err := p.repairable(res); err != nil {
			return nil, err
		}
		if err := p.planRepairs(plan, size); err != nil {
			return nil, err
		}
		return planRepaired(ctx, src, size, plan, res, opts)
	}
	if plan.FromVersion == 0 {
		return nil, &SkipError{Reason: string(res.Status), Detail: res.FirstError()}
	}
	if p.conflict != "" {
		return nil, &SkipError{Reason: ReasonConflict, Detail: p.conflict}
	}
	if err := p.planHeader(plan, res); err != nil {
		return nil, err
	}
	if p.version == 1 {
		p.planV1(plan)
	}
	if p.noNewline && !p.torn {
		plan.Edits = append(plan.Edits, Edit{Off: size, End: size, New: []byte("\n")})
		plan.Changes = append(plan.Changes, Change{Line: p.lastLine, What: "added the missing final newline, so the agent's next append cannot glue onto the last record"})
	}
	plan.Edits = append(plan.Edits, p.hookEdits...)
	plan.Changes = append(plan.Changes, p.hookRoles...)
	sort.SliceStable(plan.Edits, func(i, j int) bool { return plan.Edits[i].Off < plan.Edits[j].Off })
	sort.SliceStable(plan.Changes, func(i, j int) bool { return plan.Changes[i].Line < plan.Changes[j].Line })
	plan.ChangeCount = len(plan.Changes)
	if len(plan.Changes) > MaxListedChanges {
		// A v1 file gets one change per entry: list the first ones only.
		more := len(plan.Changes) - MaxListedChanges
		plan.Changes = append(plan.Changes[:MaxListedChanges:MaxListedChanges],
			Change{What: fmt.Sprintf("… and %d more changes of the same kinds", more)})
	}
	if p.err != nil {
		return nil, p.err
	}
	for i := 1; i < len(plan.Edits); i++ {
		if plan.Edits[i].Off < plan.Edits[i-1].End {
			return nil, &SkipError{Reason: ReasonCheckFailed, Detail: "overlapping edits (please report this file)"}
		}
	}
	return plan, nil
}

// planRepaired is the second phase of a repair: the repairs are applied in
// memory, and the upgrade is planned on the repaired bytes, which then
// become the plan's Base (an upgrade edit may fall inside a repaired line).
func planRepaired(ctx context.Context, src io.ReaderAt, size int64, repairs *Plan, res validate.Result, opts PlanOptions) (*Plan, error) {
	var buf bytes.Buffer
	if err := Apply(&buf, io.NewSectionReader(src, 0, size), repairs); err != nil {
		return nil, err
	}
	o := opts
	o.Repair = false
	up, err := PlanFile(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()), o)
	var se *SkipError
	if errors.As(err, &se) && (se.Reason != ReasonUnresolvedParent && se.Reason != ReasonConflict) {
		return nil, &SkipError{Reason: ReasonNotRepairable, Detail: "still " + se.Error() + " after the repairs"}
	}
	if err != nil {
		return nil, err
	}
	up.Repairs = repairs.Repairs
	up.Status = res.Status
	up.Size = size
	up.Base = buf.Bytes()
	return up, nil
}

// repairable accepts only damage the agent itself would silently drop.
func (p *planner) repairable(res validate.Result) error {
	if res.Status == validate.StatusFutureVersion || res.Status == validate.StatusUnrecognizedVersion {
		return &SkipError{Reason: string(res.Status), Detail: res.FirstError()}
	}
	if !p.header || p.hdr.line == 0 {
		return &SkipError{Reason: ReasonNotRepairable, Detail: "no readable session header"}
	}
	for _, is := range res.Issues {
		if is.Severity != ingest.SeverityError {
			continue
		}
		switch {
		case is.Code == ingest.CodeConcatenatedRecords, is.Code == ingest.CodeTornFinalRecord, is.Code == ingest.CodeBOM:
		case is.Code == ingest.CodeNotSession && p.firstSplit: // the header shares its line: split it
		default:
			return &SkipError{Reason: ReasonNotRepairable, Detail: fmt.Sprintf("line %d: %s cannot be repaired", is.Line, is.Code)}
		}
	}
	if res.Errors > len(res.Issues) {
		return &SkipError{Reason: ReasonNotRepairable, Detail: "too many problems"}
	}
	return nil
}

func (p *planner) planRepairs(plan *Plan, size int64) error {
	if p.bom {
		plan.Edits = append(plan.Edits, Edit{Off: 0, End: 3})
		plan.Repairs = append(plan.Repairs, Change{Line: 1, What: "removed the UTF-8 byte-order mark before the header"})
	}
	for _, ln := range p.splitOrder {
		sl := p.split[ln]
		if sl.final && p.torn {
			continue // handled with the torn tail below
		}
		sep := []byte("\n")
		if sl.crlf {
			sep = []byte("\r\n")
		}
		repl := p.joinValues(sl, sep)
		if sl.final {
			repl = append(repl, '\n') // the agent's next append must start on a new line
		}
		plan.Edits = append(plan.Edits, Edit{Off: sl.start, End: sl.end, New: repl})
		plan.Repairs = append(plan.Repairs, Change{Line: ln, What: fmt.Sprintf("split %d records onto their own lines%s", len(sl.values), p.droppedNote(sl))})
	}
	if p.torn {
		start, err := lastLineStart(p.src, size)
		if err != nil {
			return err
		}
		var values [][2]int64
		line := p.tornLine
		if sl := p.split[p.lastSplitLine()]; sl != nil && sl.final {
			values = sl.values
			line = sl.line
		}
		var repl []byte
		if len(values) > 0 {
			repl = append(p.joinValues(&splitLine{values: values}, []byte("\n")), '\n')
		}
		plan.Edits = append(plan.Edits, Edit{Off: start, End: size, New: repl})
		what := fmt.Sprintf("removed the torn final fragment (%d bytes, %s)", size-start-int64(valuesLen(values)), p.kept())
		if len(values) > 0 {
			what = fmt.Sprintf("kept %d complete records of the final line and removed its torn fragment (%s)", len(values), p.kept())
		}
		plan.Repairs = append(plan.Repairs, Change{Line: line, What: what})
	}
	return nil
}

func (p *planner) lastSplitLine() int {
	if len(p.splitOrder) == 0 {
		return -1
	}
	return p.splitOrder[len(p.splitOrder)-1]
}

func valuesLen(v [][2]int64) int {
	n := 0
	for _, x := range v {
		n += int(x[1] - x[0])
	}
	return n
}

// droppedNote tells whether splitting sl drops anything: the bytes of the
// line outside its records. JSON whitespace between (or around) records is
// not a fragment: dropping it loses nothing, so it is not reported.
func (p *planner) droppedNote(sl *splitLine) string {
	buf := make([]byte, sl.end-sl.start)
	if _, err := p.src.ReadAt(buf, sl.start); err != nil && err != io.EOF {
		if p.err == nil {
			p.err = fmt.Errorf("read records to repair: %w", err)
		}
		return ""
	}
	pos := sl.start
	for _, v := range append(sl.values, [2]int64{sl.end, sl.end}) {
		if v[0] > pos && len(bytes.Trim(buf[pos-sl.start:v[0]-sl.start], " \t\r\n")) > 0 {
			return ", dropped an unrecoverable fragment (" + p.kept() + ")"
		}
		pos = max(pos, v[1])
	}
	return ""
}

// kept says where the bytes a repair removes remain (PlanOptions.RemovedKept).
func (p *planner) kept() string {
	if p.opts.RemovedKept != "" {
		return p.opts.RemovedKept
	}
	return "kept in the backup"
}

func (p *planner) joinValues(sl *splitLine, sep []byte) []byte {
	var out []byte
	for i, v := range sl.values {
		if i > 0 {
			out = append(out, sep...)
		}
		buf := make([]byte, v[1]-v[0])
		if _, err := p.src.ReadAt(buf, v[0]); err != nil && p.err == nil {
			p.err = fmt.Errorf("read records to repair: %w", err)
		}
		out = append(out, buf...)
	}
	return out
}

// lastLineStart returns the offset just after the last '\n' of the file.
func lastLineStart(ra io.ReaderAt, size int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// deleteMember returns the edit removing header member m with one
// neighbouring comma.
func (p *planner) deleteMember(m member) Edit {
	ms := p.hdr.members
	for i := range ms {
		if ms[i].keyStart != m.keyStart {
			continue
		}
		switch {
		case i > 0:
			return Edit{Off: ms[i-1].valEnd, End: m.valEnd}
		case len(ms) > 1:
			return Edit{Off: m.keyStart, End: ms[1].keyStart}
		}
	}
	return Edit{Off: m.keyStart, End: m.valEnd}
}

func (p *planner) planHeader(plan *Plan, res validate.Result) error {
	h := &p.hdr
	line := h.line
	add := func(e Edit, what string) {
		plan.Edits = append(plan.Edits, e)
		plan.Changes = append(plan.Changes, Change{Line: line, What: what})
	}
	if p.version < 4 {
		if h.version.present {
			add(Edit{Off: h.version.valStart, End: h.version.valEnd, New: []byte("4")}, fmt.Sprintf("header version %d → 4", p.version))
		} else {
			add(Edit{Off: h.typeEnd, End: h.typeEnd, New: []byte(`,"version":4`)}, "header version (absent = 1) → 4")
		}
	}
	if h.timestamp.present {
		switch {
		case !h.createdAt.present:
			// Key-only edits replace the key's bytes alone: the separator
			// after it (":", ": ", ":\t") stays as written.
			add(Edit{Off: h.timestamp.keyStart, End: h.timestamp.keyEnd, New: []byte(`"createdAt"`)}, "header timestamp → createdAt")
		case bytes.Equal(h.tsVal, h.caVal):
			add(p.deleteMember(h.timestamp), "header timestamp removed (createdAt holds the same value)")
		default:
			return &SkipError{Reason: ReasonConflict, Detail: "header has both timestamp and createdAt with different values"}
		}
	}
	if h.parent.present {
		var parentPath string
		isString := json.Unmarshal(h.parentVal, &parentPath) == nil && len(h.parentVal) > 0 && h.parentVal[0] == '"'
		switch {
		case bytes.Equal(h.parentVal, []byte("null")):
			if h.parID.present {
				add(p.deleteMember(h.parent), "header parentSession null removed")
			} else {
				add(Edit{Off: h.parent.keyStart, End: h.parent.keyEnd, New: []byte(`"parentSessionId"`)}, "header parentSession null → parentSessionId null")
			}
		case !isString:
			return &SkipError{Reason: ReasonConflict, Detail: "header parentSession is not a string"}
		default:
			id, ok := "", false
			if p.opts.ResolveParent != nil {
				id, ok = p.opts.ResolveParent(parentPath)
			}
			if ok && id == plan.SessionID {
				ok = false // a session is not its own parent: the path is wrong
			}
			switch {
			case ok && h.parID.present:
				if !bytes.Equal(h.parIDVal, jsonString(id)) {
					return &SkipError{Reason: ReasonConflict, Detail: fmt.Sprintf("parentSessionId differs from the session at parentSession (%s)", id)}
				}
				add(p.deleteMember(h.parent), "header parentSession removed (parentSessionId already names it)")
			case ok:
				plan.Edits = append(plan.Edits, Edit{Off: h.parent.keyStart, End: h.parent.keyEnd, New: []byte(`"parentSessionId"`)})
				add(Edit{Off: h.parent.valStart, End: h.parent.valEnd, New: jsonString(id)},
					fmt.Sprintf("header parentSession %s → parentSessionId %s", parentPath, id))
			case p.opts.KeepUnresolvedParent:
				plan.KeptParent = true
				plan.Notes = append(plan.Notes, Change{Line: line, What: fmt.Sprintf("parentSession %s names no known session: kept as is (--keep-unresolved-parent)", parentPath)})
			default:
				return &SkipError{Reason: ReasonUnresolvedParent, Detail: fmt.Sprintf("parentSession %s names no known session (use --keep-unresolved-parent to keep the path)", parentPath)}
			}
		}
	}
	return nil
}

func (p *planner) planV1(plan *Plan) {
	ids := make(map[string]bool, len(p.entries))
	for _, e := range p.entries {
		if e.hasID {
			ids[e.id] = true
		}
	}
	finalID := make([]string, len(p.entries))
	bySeq := make(map[int]int, len(p.entries))
	for i := range p.entries {
		e := &p.entries[i]
		bySeq[e.seq] = i
		if e.hasID {
			finalID[i] = e.id
			continue
		}
		for attempt := 0; ; attempt++ {
			id := session.DerivedEntryID(plan.SessionID, e.seq, attempt)
			if !ids[id] {
				ids[id] = true
				finalID[i] = id
				break
			}
		}
	}
	// ref is the JSON text that names entry i: an existing id is copied as
	// written (re-encoding could change invalid UTF-8 and break the link).
	ref := func(i int) []byte {
		if p.entries[i].hasID {
			return p.entries[i].idRaw
		}
		return jsonString(finalID[i])
	}
	for i := range p.entries {
		e := &p.entries[i]
		parent := []byte("null")
		if i > 0 {
			parent = ref(i - 1)
		}
		switch {
		case !e.hasID && !e.hasParent:
			ins := append([]byte(`,"id":`), jsonString(finalID[i])...)
			ins = append(append(ins, `,"parentId":`...), parent...)
			plan.Edits = append(plan.Edits, Edit{Off: e.typeEnd, End: e.typeEnd, New: ins})
			plan.Changes = append(plan.Changes, Change{Line: e.line, What: fmt.Sprintf("id %s, parentId %s", finalID[i], parent)})
		case !e.hasID && e.parentNull.present && i > 0:
			// A v1 entry is linear: a null parentId on an entry without an
			// id is a missing link, not a second root.
			ins := append([]byte(`,"id":`), jsonString(finalID[i])...)
			plan.Edits = append(plan.Edits, Edit{Off: e.typeEnd, End: e.typeEnd, New: ins},
				Edit{Off: e.parentNull.valStart, End: e.parentNull.valEnd, New: parent})
			plan.Changes = append(plan.Changes, Change{Line: e.line, What: fmt.Sprintf("id %s, parentId null → %s", finalID[i], parent)})
		case !e.hasID:
			ins := append([]byte(`,"id":`), jsonString(finalID[i])...)
			plan.Edits = append(plan.Edits, Edit{Off: e.typeEnd, End: e.typeEnd, New: ins})
			plan.Changes = append(plan.Changes, Change{Line: e.line, What: fmt.Sprintf("id %s (parentId kept)", finalID[i])})
		case !e.hasParent:
			plan.Edits = append(plan.Edits, Edit{Off: e.idEnd, End: e.idEnd, New: append([]byte(`,"parentId":`), parent...)})
			plan.Changes = append(plan.Changes, Change{Line: e.line, What: fmt.Sprintf("parentId %s (id kept)", parent)})
		}
		if e.firstKept.present {
			j, ok := bySeq[int(e.firstKeptIdx)]
			switch {
			case e.hasFirstKeyID:
				plan.Notes = append(plan.Notes, Change{Line: e.line, What: "compaction has both firstKeptEntryIndex and firstKeptEntryId: left as is"})
			case e.firstKeptIdx < 1 || !ok:
				plan.Notes = append(plan.Notes, Change{Line: e.line, What: fmt.Sprintf("compaction firstKeptEntryIndex %d names no entry: left as is", e.firstKeptIdx)})
			default:
				plan.Edits = append(plan.Edits, Edit{Off: e.firstKept.keyStart, End: e.firstKept.keyEnd, New: []byte(`"firstKeptEntryId"`)},
					Edit{Off: e.firstKept.valStart, End: e.firstKept.valEnd, New: ref(j)})
				plan.Changes = append(plan.Changes, Change{Line: e.line, What: fmt.Sprintf("compaction firstKeptEntryIndex %d → firstKeptEntryId %s", e.firstKeptIdx, finalID[j])})
			}
		}
	}
}

// Apply writes the original bytes from src with the plan's edits applied to
// dst. src must be positioned at the start of the original.
func Apply(dst io.Writer, src io.Reader, plan *Plan) error {
	if plan.Base != nil {
		// The original is still read in full: callers hash and back it up
		// as it is read.
		if _, err := io.Copy(io.Discard, src); err != nil {
			return fmt.Errorf("read original bytes: %w", err)
		}
		src = bytes.NewReader(plan.Base)
	}
	var pos int64
	for _, e := range plan.Edits {
		if e.Off > pos {
			if _, err := io.CopyN(dst, src, e.Off-pos); err != nil {
				return fmt.Errorf("copy original bytes: %w", err)
			}
		}
		if len(e.New) > 0 {
			if _, err := dst.Write(e.New); err != nil {
				return err
			}
		}
		if e.End > e.Off {
			if _, err := io.CopyN(io.Discard, src, e.End-e.Off); err != nil {
				return fmt.Errorf("skip original bytes: %w", err)
			}
		}
		pos = e.End
	}
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("copy original bytes: %w", err)
	}
	return nil
}
