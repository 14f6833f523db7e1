package validate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/session"
)

// Status is the one verdict a file gets (SPEC.md §1.5).
type Status string

// Statuses in order of precedence: a file gets the first that applies.
const (
	StatusNotSession          Status = "not_session"
	StatusFutureVersion       Status = "future_version"
	StatusUnrecognizedVersion Status = "unrecognized_version"
	StatusTorn                Status = "torn"
	StatusCorrupt             Status = "corrupt"
	StatusEmpty               Status = "empty"
	StatusNeedsUpgrade        Status = "needs_upgrade"
	StatusCurrent             Status = "current"
	// StatusUnreadable is not a verdict of SPEC.md §1.5: the file could not
	// be opened or read (permissions, I/O error). It counts as an error.
	StatusUnreadable Status = "unreadable"
)

// Statuses lists every status in order of precedence, for summaries.
var Statuses = []Status{StatusNotSession, StatusFutureVersion, StatusUnrecognizedVersion,
	StatusTorn, StatusCorrupt, StatusEmpty, StatusNeedsUpgrade, StatusCurrent, StatusUnreadable}

// IsError reports whether the status makes validate exit 1 (SPEC.md §1.5).
func (s Status) IsError() bool {
	switch s {
	case StatusEmpty, StatusNeedsUpgrade, StatusCurrent, StatusSkipped:
		return false
	}
	return true
}

// Loadable reports whether the agent would load a file with this status.
func (s Status) Loadable() bool { return s == StatusNeedsUpgrade || s == StatusCurrent }

// CurrentVersion is the format version this tool writes.
const CurrentVersion = 4

// Header is what the first record of a session says (SPEC.md §1.3). Absent
// string fields are empty.
type Header struct {
	ID              string // session id
	Version         int    // 1–4 when known, 0 otherwise
	RawVersion      string // the version value's JSON text, empty when absent
	CreatedAt       string // v4 "createdAt" (ISO-8601)
	Timestamp       string // pre-v4 and early-v4 "timestamp" (ISO-8601)
	Cwd             string
	ParentSession   string // pre-v4 parent path
	ParentSessionID string // v4 parent id
	BranchedFrom    string // v1-era parent path
	HasTimestamp    bool   // "timestamp" key present
	HasParentPath   bool   // "parentSession" key present
	HasCreatedAt    bool   // "createdAt" key present
}

// Result is the verdict on one file.
type Result struct {
	Status        Status
	FormatVersion int  // 1–4; 0 when the header gives no known version
	EarlyV4       bool // version 4 header still carrying timestamp/parentSession
	Header        Header
	Entries       int    // records after the header (duplicate headers excluded)
	LeafID        string // id of the last entry (the active leaf), when it has one
	Issues        []ingest.Issue
	// Counts of issues by severity, including those beyond the listing cap.
	Errors, Warnings, Notes int
	// TitleSlot is set when the file opens with an oh-my-pi title slot
	// (SPEC.md §7.2): an omp session, whose header is on the next line.
	TitleSlot *session.TitleSlot
}

// FirstError describes the first error-severity issue ("line N: message"),
// or returns "" when there is none.
func (r Result) FirstError() string {
	for _, is := range r.Issues {
		if is.Severity == ingest.SeverityError {
			if is.Line > 0 {
				return fmt.Sprintf("line %d: %s", is.Line, is.Message)
			}
			return is.Message
		}
	}
	return ""
}

// MaxListedIssues caps the issues kept per file; the rest are counted and
// summarised by one issues_truncated note.
const MaxListedIssues = 100

// KnownEntryTypes are the entry types of SPEC.md §1.4 (session's list).
var KnownEntryTypes = session.KnownEntryTypes

type entry struct {
	id      string
	parent  string
	line    int32
	hasPar  bool // parentId is a string
	dupOf   bool
	visited uint8
}

// Checker applies the header and entry rules (SPEC.md §1.3, §1.4) to the
// records of one file as an [ingest.Visitor], then gives the verdict with
// Finish. Reuse one Checker per worker with Reset.
type Checker struct {
	res        Result
	sawFirst   bool // first non-blank line seen (record or broken line)
	headerOK   bool
	checkTree  bool
	torn       bool
	corrupt    bool
	notSession bool
	bom        bool
	// splitHeader: the header is a complete record but shares its line
	// with others; the header's facts stay known (for --repair).
	splitHeader bool
	dropped     int

	entries         []entry
	byID            map[string]int32
	mixedV1         bool
	firstKeptChecks []firstKept
	seqLine         []int32 // v1: line of each parsed record (header = 0)
}

type firstKept struct {
	index int64
	line  int
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	c := &Checker{byID: make(map[string]int32)}
	c.Reset()
	return c
}

// Reset prepares c for a new file.
func (c *Checker) Reset() {
	c.res = Result{}
	c.sawFirst, c.headerOK, c.checkTree = false, false, false
	c.torn, c.corrupt, c.notSession, c.bom, c.splitHeader = false, false, false, false, false
	c.dropped = 0
	c.entries = c.entries[:0]
	clear(c.byID)
	c.mixedV1 = false
	c.firstKeptChecks = c.firstKeptChecks[:0]
	c.seqLine = c.seqLine[:0]
}

func (c *Checker) add(is ingest.Issue) {
	switch is.Severity {
	case ingest.SeverityError:
		c.res.Errors++
	case ingest.SeverityWarning:
		c.res.Warnings++
	default:
		c.res.Notes++
	}
	if len(c.res.Issues) >= MaxListedIssues {
		c.dropped++
		return
	}
	c.res.Issues = append(c.res.Issues, is)
}

func (c *Checker) errorf(line int, code, format string, args ...any) {
	c.add(ingest.Issue{Line: line, Severity: ingest.SeverityError, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (c *Checker) warnf(line int, code, format string, args ...any) {
	c.add(ingest.Issue{Line: line, Severity: ingest.SeverityWarning, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Issue records a line-level issue from the reader.
func (c *Checker) Issue(is ingest.Issue) {
	switch is.Code {
	case ingest.CodeBOM:
		c.bom = true
	case ingest.CodeTornFinalRecord:
		c.torn = true
	case ingest.CodeCorruptLine, ingest.CodeConcatenatedRecords:
		c.corrupt = true
	}
	if !c.sawFirst && (is.Code == ingest.CodeCorruptLine || is.Code == ingest.CodeTornFinalRecord) {
		// The first non-blank line is not a record: there is no header.
		c.sawFirst = true
		c.notSession = true
		c.add(is)
		c.errorf(is.Line, ingest.CodeNotSession, "the first line is not a readable session header")
		return
	}
	c.add(is)
}

// TitleSlot returns the file's oh-my-pi title slot, once its first line
// was read as one (nil otherwise).
func (c *Checker) TitleSlot() *session.TitleSlot { return c.res.TitleSlot }

// Record checks one record.
func (c *Checker) Record(r *ingest.Record) error {
	if !c.sawFirst && c.res.TitleSlot == nil && r.Offset == 0 && !r.Split && !r.Final && !r.CRLF {
		if s, ok := session.ParseTitleSlot(r.Raw); ok {
			// oh-my-pi's title slot: not an entry; the header follows.
			c.res.TitleSlot = &s
			c.add(ingest.Issue{Line: r.Line, Severity: ingest.SeverityNote, Code: session.CodeOmpTitleSlot,
				Message: "an oh-my-pi title slot (an omp session; its header is on the next line)"})
			return nil
		}
	}
	if !c.sawFirst {
		c.sawFirst = true
		c.header(r)
		if r.Split && c.headerOK {
			// The header shares its line with other records (a lost
			// newline, or CR-only line endings): JSON.parse of the first
			// line fails, so the agent sees no header.
			c.splitHeader = true
			c.errorf(r.Line, ingest.CodeNotSession, "the session header shares line %d with other records: the agent cannot read the header", r.Line)
		}
		if c.res.FormatVersion == 1 {
			c.seqLine = append(c.seqLine, int32(r.Line))
		}
		return nil
	}
	t, root := r.Tape, r.Root
	if c.res.FormatVersion == 1 {
		c.seqLine = append(c.seqLine, int32(r.Line))
	}
	if t.Kind(root) != ingest.KindObject {
		c.res.Entries++
		if c.checkTree {
			c.errorf(r.Line, ingest.CodeInvalidEntry, "entry is a JSON %s, not an object", t.Kind(root))
		}
		return nil
	}
	typB, ok := t.StrBytes(t.Get(root, "type"))
	if ok && string(typB) == "session" {
		if c.headerOK {
			c.errorf(r.Line, ingest.CodeDuplicateHeader, "a second session header (a known writer bug): the agent rejects the file")
		}
		return nil
	}
	c.res.Entries++
	if !c.checkTree {
		return nil
	}
	if !ok {
		c.errorf(r.Line, ingest.CodeInvalidEntry, "entry has no string \"type\"")
		return nil
	}
	if !KnownEntryTypes[string(typB)] {
		c.warnf(r.Line, ingest.CodeUnknownEntryType, "unknown entry type %q: kept as is", typB)
	}
	isMessage := string(typB) == "message"
	isCompaction := string(typB) == "compaction"
	if ts := t.Get(root, "timestamp"); ts < 0 {
		c.warnf(r.Line, ingest.CodeBadTimestamp, "entry has no timestamp")
	} else if b, ok := t.StrBytes(ts); !ok {
		c.warnf(r.Line, ingest.CodeBadTimestamp, "entry timestamp is a JSON %s, not a string", t.Kind(ts))
	} else if !isISOTime(b) {
		c.warnf(r.Line, ingest.CodeBadTimestamp, "entry timestamp %q is not ISO-8601", b)
	}
	if isMessage {
		msg := t.Get(root, "message")
		if t.Kind(msg) != ingest.KindObject {
			c.warnf(r.Line, ingest.CodeInvalidMessage, "message entry without a message object")
		}
	}
	if c.res.FormatVersion == 1 && isCompaction {
		if n := t.Get(root, "firstKeptEntryIndex"); n >= 0 {
			v, ok := t.Int(n)
			if !ok {
				v = -1
			}
			c.firstKeptChecks = append(c.firstKeptChecks, firstKept{index: v, line: r.Line})
		}
	}
	idNode := t.Get(root, "id")
	id, idOK := t.Str(idNode)
	idOK = idOK && id != ""
	if c.res.FormatVersion == 1 {
		if idNode < 0 {
			// v1 entries have no ids; a parentId, if present, must still name an entry.
			pn := t.Get(root, "parentId")
			switch t.Kind(pn) {
			case ingest.KindInvalid, ingest.KindNull:
			case ingest.KindString:
				parent, _ := t.Str(pn)
				c.entries = append(c.entries, entry{parent: parent, hasPar: true, line: int32(r.Line), dupOf: true})
			default:
				c.errorf(r.Line, ingest.CodeInvalidParentID, "entry has a parentId that is a JSON %s", t.Kind(pn))
			}
			return nil
		}
		if !c.mixedV1 {
			c.mixedV1 = true
			c.add(ingest.Issue{Line: r.Line, Severity: ingest.SeverityNote, Code: ingest.CodeMixedV1,
				Message: "v1 header, but entries already carry ids: existing ids are kept, missing links are filled"})
		}
	}
	if !idOK {
		c.errorf(r.Line, ingest.CodeMissingID, "entry has no non-empty string id")
		return nil
	}
	e := entry{id: id, line: int32(r.Line)}
	pn := t.Get(root, "parentId")
	switch t.Kind(pn) {
	case ingest.KindNull:
	case ingest.KindString:
		e.parent, _ = t.Str(pn)
		e.hasPar = true
	case ingest.KindInvalid:
		if c.res.FormatVersion >= 2 {
			c.errorf(r.Line, ingest.CodeInvalidParentID, "entry %s has no parentId", id)
		}
	default:
		c.errorf(r.Line, ingest.CodeInvalidParentID, "entry %s has a parentId that is a JSON %s", id, t.Kind(pn))
	}
	if first, dup := c.byID[id]; dup {
		c.errorf(r.Line, ingest.CodeDuplicateID, "id %s was already used on line %d", id, c.entries[first].line)
		e.dupOf = true
	} else {
		c.byID[id] = int32(len(c.entries))
	}
	c.entries = append(c.entries, e)
	c.res.LeafID = id
	return nil
}

func (c *Checker) header(r *ingest.Record) {
	t, root := r.Tape, r.Root
	h := &c.res.Header
	if t.Kind(root) != ingest.KindObject {
		c.notSession = true
		c.errorf(r.Line, ingest.CodeNotSession, "the first record is a JSON %s, not a session header", t.Kind(root))
		return
	}
	if typ, _ := t.Str(t.Get(root, "type")); typ != "session" {
		c.notSession = true
		if typ == "" {
			c.errorf(r.Line, ingest.CodeNotSession, "the first record has no \"type\":\"session\"")
		} else {
			c.errorf(r.Line, ingest.CodeNotSession, "the first record has type %q, not \"session\"", typ)
		}
		return
	}
	id, ok := t.Str(t.Get(root, "id"))
	if !ok || id == "" {
		c.notSession = true
		c.errorf(r.Line, ingest.CodeNotSession, "the session header has no non-empty string id")
		return
	}
	h.ID = id
	h.CreatedAt, h.HasCreatedAt = t.Str(t.Get(root, "createdAt"))
	h.Timestamp, _ = t.Str(t.Get(root, "timestamp"))
	h.HasTimestamp = t.Get(root, "timestamp") >= 0
	h.ParentSession, _ = t.Str(t.Get(root, "parentSession"))
	h.HasParentPath = t.Get(root, "parentSession") >= 0
	h.ParentSessionID, _ = t.Str(t.Get(root, "parentSessionId"))
	h.BranchedFrom, _ = t.Str(t.Get(root, "branchedFrom"))
	h.Cwd, _ = t.Str(t.Get(root, "cwd"))

	vn := t.Get(root, "version")
	if vn < 0 {
		h.Version = 1
	} else {
		h.RawVersion = string(t.Raw(vn))
		switch v, kind := versionOf(t, vn); kind {
		case versionKnown:
			h.Version = int(v)
		case versionFuture:
			c.errorf(r.Line, ingest.CodeFutureVersion, "header version %s is newer than this tool knows (4): written by a newer agent", h.RawVersion)
			c.res.Status = StatusFutureVersion
		default:
			c.errorf(r.Line, ingest.CodeUnrecognizedVersion, "header version %s is not a positive integer", h.RawVersion)
			c.res.Status = StatusUnrecognizedVersion
		}
	}
	c.headerOK = true
	c.res.FormatVersion = h.Version
	if h.Version == 0 {
		return
	}
	c.checkTree = true
	if h.Version == 4 {
		c.res.EarlyV4 = h.HasTimestamp || h.HasParentPath
		if !h.HasCreatedAt && !h.HasTimestamp {
			c.warnf(r.Line, ingest.CodeMissingCreatedAt, "version 4 header has neither createdAt nor timestamp")
		}
	}
}

type versionKind int

const (
	versionKnown versionKind = iota
	versionFuture
	versionUnrecognized
)

// versionOf classifies a header version value (SPEC.md §1.3): integers 1–4
// are known, larger integers are future, everything else is unrecognized.
// A number is an integer when its value is (4.0 and 4e0 are 4, as in
// JavaScript).
func versionOf(t *ingest.Tape, n int) (float64, versionKind) {
	if t.Kind(n) != ingest.KindNumber {
		return 0, versionUnrecognized
	}
	f, err := strconv.ParseFloat(string(t.Raw(n)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || f < 1 {
		return 0, versionUnrecognized
	}
	if f > CurrentVersion {
		return f, versionFuture
	}
	return f, versionKnown
}

// Finish completes the checks that need the whole file (dangling parents,
// cycles, v1 compaction indexes) and returns the verdict. The Result's
// Issues are sorted by line.
func (c *Checker) Finish() Result {
	if c.checkTree && !c.notSession {
		c.finishTree()
	}
	for _, fk := range c.firstKeptChecks {
		if fk.index < 1 || fk.index >= int64(len(c.seqLine)) {
			c.warnf(fk.line, ingest.CodeBadFirstKept, "compaction firstKeptEntryIndex %d names no entry (valid: 1–%d)", fk.index, len(c.seqLine)-1)
		}
	}
	r := &c.res
	switch {
	case c.bom || c.notSession || c.splitHeader:
		r.Status = StatusNotSession
	case r.Status == StatusFutureVersion || r.Status == StatusUnrecognizedVersion:
	case !c.sawFirst:
		r.Status = StatusEmpty
	case c.torn:
		r.Status = StatusTorn
	case c.corrupt || r.Errors > 0:
		r.Status = StatusCorrupt
	case r.FormatVersion == CurrentVersion && !r.EarlyV4:
		r.Status = StatusCurrent
	default:
		r.Status = StatusNeedsUpgrade
	}
	if c.notSession && !c.bom {
		r.FormatVersion = 0
	}
	if c.dropped > 0 {
		r.Issues = append(r.Issues, ingest.Issue{Severity: ingest.SeverityNote, Code: ingest.CodeTooManyIssues,
			Message: fmt.Sprintf("%d more issues not listed", c.dropped)})
	}
	sort.SliceStable(r.Issues, func(i, j int) bool {
		a, b := r.Issues[i].Line, r.Issues[j].Line
		if a == 0 {
			return false
		}
		return b == 0 || a < b
	})
	out := *r
	out.Issues = append([]ingest.Issue(nil), r.Issues...)
	return out
}

func (c *Checker) finishTree() {
	for i := range c.entries {
		e := &c.entries[i]
		if e.hasPar {
			if _, ok := c.byID[e.parent]; !ok {
				name := e.id
				if name == "" {
					name = "without id"
				}
				c.errorf(int(e.line), ingest.CodeDanglingParent, "entry %s names parent %s, which is not in the file", name, e.parent)
				e.hasPar = false
			}
		}
	}
	// Cycle detection: walk parent links; visited 1 = on the current walk, 2 = done.
	var path []int32
	for i := range c.entries {
		if c.entries[i].visited != 0 || c.entries[i].dupOf {
			continue
		}
		path = path[:0]
		cur := int32(i)
		for {
			e := &c.entries[cur]
			if e.visited == 2 {
				break
			}
			if e.visited == 1 {
				// cur is on the current walk: the path from cur on is a cycle.
				k := len(path) - 1
				for path[k] != cur {
					k--
				}
				cycle := path[k:]
				minLine := c.entries[cycle[0]].line
				ids := make([]string, 0, 5)
				for _, m := range cycle {
					minLine = min(minLine, c.entries[m].line)
					if len(ids) < 5 {
						ids = append(ids, c.entries[m].id)
					}
				}
				c.errorf(int(minLine), ingest.CodeParentCycle, "parentId links loop through %d entries (%s)", len(cycle), strings.Join(ids, " → "))
				break
			}
			e.visited = 1
			path = append(path, cur)
			if !e.hasPar {
				break
			}
			cur = c.byID[e.parent]
		}
		for _, p := range path {
			c.entries[p].visited = 2
		}
	}
}

// isISOTime reports whether b is an instant ParseTime accepts, without
// parsing the common JavaScript form 2025-06-01T10:00:01.000Z the slow way.
func isISOTime(b []byte) bool {
	if len(b) == 24 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		ok := true
		for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22} {
			ok = ok && b[i] >= '0' && b[i] <= '9'
		}
		mon := int(b[5]-'0')*10 + int(b[6]-'0')
		day := int(b[8]-'0')*10 + int(b[9]-'0')
		hour := int(b[11]-'0')*10 + int(b[12]-'0')
		min := int(b[14]-'0')*10 + int(b[15]-'0')
		sec := int(b[17]-'0')*10 + int(b[18]-'0')
		if ok && mon >= 1 && mon <= 12 && day >= 1 && day <= 28 && hour < 24 && min < 60 && sec < 60 {
			return true
		}
	}
	_, err := ParseTime(string(b))
	return err == nil
}

// ParseTime parses the ISO-8601 instants the agents write
// (JavaScript's Date.toISOString, "2025-06-01T10:00:00.000Z", and RFC 3339
// offsets). The result is in UTC.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// File validates one file with a reader and checker the caller reuses. An
// error opening or reading the file is returned as a Result with status
// unreadable, never as a Go error; only ctx cancellation is returned.
func File(ctx context.Context, rd *ingest.Reader, c *Checker, path string) (Result, error) {
	c.Reset()
	if _, err := rd.ReadFile(ctx, path, c); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		res := c.Finish()
		res.Status = StatusUnreadable
		res.Errors++
		res.Issues = append(res.Issues, ingest.Issue{Severity: ingest.SeverityError, Code: ingest.CodeUnreadable, Message: unwrapPathError(err)})
		return res, nil
	}
	return c.Finish(), nil
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
