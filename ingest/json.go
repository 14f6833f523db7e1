package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is the JSON type of a node on a [Tape].
type Kind uint8

// The JSON kinds a [Tape] node can have.
const (
	KindInvalid Kind = iota
	KindNull
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindObject
	KindArray
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "object", "array"}

// String returns the JSON name of the kind ("object", "string", …).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Node is one value recorded on a [Tape]. Offsets are byte offsets into the
// buffer the tape was parsed from. For strings Start/End include the quotes.
type Node struct {
	Start, End       int   // value span [Start, End)
	KeyStart, KeyEnd int   // raw key bytes between the quotes, for object members; both 0 otherwise
	Parent           int32 // index of the enclosing node, -1 for a root
	First            int32 // first child (objects, arrays) or -1
	Next             int32 // next sibling or -1
	Kind             Kind
	Esc              bool // string value contains backslash escapes
	// EscSaved is, for a string value, the bytes its escapes take beyond
	// the bytes they decode to: the decoded length is End-Start-2-EscSaved.
	EscSaved int
	KeyEsc   bool // key contains backslash escapes
}

// SyntaxError reports why a byte range is not one complete JSON value.
// Offset is relative to the start of the buffer given to [Tape.Parse].
// Incomplete is true when the input ended while the value was still
// well-formed so far: the signature of a record torn by a crash.
type SyntaxError struct {
	Offset     int
	Msg        string
	Incomplete bool
}

// Error says where the value breaks and whether it was cut short.
func (e *SyntaxError) Error() string {
	if e.Incomplete {
		return fmt.Sprintf("incomplete JSON at byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Tape is a validating, shallow parse of JSON values. [Tape.Parse] checks the
// full RFC 8259 grammar of a value (strings, escapes, numbers, nesting of any
// depth) and records a [Node] for every value whose nesting depth is at most
// MaxDepth (the root has depth 0). Deeper values are validated but not
// recorded; their enclosing container's span still covers them.
//
// Invalid UTF-8 inside strings is accepted, as JSON.parse in the agents
// accepts it (SPEC.md §1.2); callers check it separately.
//
// A Tape is reused across values to avoid allocation. It is not safe for
// concurrent use. Nodes reference the parsed buffer, which must stay
// unchanged while the tape is used.
type Tape struct {
	// MaxDepth is the deepest nesting level recorded (root = 0).
	MaxDepth int

	buf   []byte
	Nodes []Node
	// BadUTF8 is set when a string or key parsed since the last Reset holds
	// invalid UTF-8 (outside strings any byte >= 0x80 is a syntax error).
	BadUTF8 bool

	stack []frame  // recorded containers being parsed
	deep  []uint64 // one bit per unrecorded nesting level: 1 = object
	ndeep int
	tmp   []byte
}

type frame struct {
	node  int32 // node index, -1 when the container is not recorded
	last  int32 // last recorded child
	isObj bool
}

// Buf returns the buffer the tape's nodes point into.
func (t *Tape) Buf() []byte { return t.buf }

// Reset forgets all nodes and sets the buffer that later calls to Parse read.
func (t *Tape) Reset(buf []byte) {
	t.buf = buf
	t.Nodes = t.Nodes[:0]
	t.BadUTF8 = false
	if cap(t.tmp) > maxKeptScratch {
		t.tmp = nil // one huge escaped string (a 200 MB tool output) is not kept for the next record
	}
}

// maxKeptScratch is the largest StrBytes scratch buffer a Tape keeps
// across records.
const maxKeptScratch = 1 << 20

// byte classes for the scanner
var (
	isWS         [256]bool
	strSpecial   [256]bool // '"', '\\' and control characters end a fast string run
	isDigit      [256]bool
	validEscapes [256]bool
	simpleEscape [256]bool // escapes of one character after the backslash (all but \u)
)

func init() {
	for _, c := range " \t\r\n" {
		isWS[c] = true
	}
	for c := 0; c < 0x20; c++ {
		strSpecial[c] = true
	}
	strSpecial['"'] = true
	strSpecial['\\'] = true
	for c := '0'; c <= '9'; c++ {
		isDigit[c] = true
	}
	for _, c := range `"\/bfnrtu` {
		validEscapes[c] = true
		simpleEscape[c] = c != 'u'
	}
}

const (
	lo8  = 0x0101010101010101
	hi8  = 0x8080808080808080
	quo8 = 0x2222222222222222
	bsl8 = 0x5C5C5C5C5C5C5C5C
	sp8  = 0x2020202020202020
)

// skipString returns the index just past the closing quote of the string
// whose opening quote is at buf[i], whether it contains escapes, whether it
// holds bytes >= 0x80 (then the caller checks UTF-8), or an error. saved is
// the number of bytes its escapes take beyond what they decode to (as
// unescape writes them), so that the decoded length is the body's length
// minus saved.
func skipString(buf []byte, i int) (end int, esc, high bool, saved int, err *SyntaxError) {
	start := i
	i++
	n := len(buf)
	var acc uint64 // OR of the bytes scanned: bit 7 of any byte set means non-ASCII
	for {
		// Eight bytes at a time: find the first '"', '\\' or byte < 0x20.
		// The lowest set bit of the SWAR mask is exact (borrows only
		// disturb the bytes above the first match).
		for i+8 <= n {
			w := binary.LittleEndian.Uint64(buf[i:])
			acc |= w
			q := w ^ quo8
			b := w ^ bsl8
			if m := ((q-lo8)&^q | (b-lo8)&^b | (w-sp8)&^w) & hi8; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto special
			}
			i += 8
		}
		for i < n && !strSpecial[buf[i]] {
			acc |= uint64(buf[i])
			i++
		}
	special:
		if i >= n {
			return n, saved > 0, false, 0, &SyntaxError{Offset: start, Msg: "unterminated string", Incomplete: true}
		}
		c := buf[i]
		if c == '\\' { // the most frequent special in tool output
			// Every escape saves at least one byte: saved > 0 means escapes.
			saved++
			if i+1 >= n {
				return n, saved > 0, false, 0, &SyntaxError{Offset: i, Msg: "unterminated escape", Incomplete: true}
			}
			e := buf[i+1]
			if simpleEscape[e] {
				i += 2
				continue
			}
			if e != 'u' {
				return i, saved > 0, false, 0, &SyntaxError{Offset: i, Msg: fmt.Sprintf("invalid escape %q", e)}
			}
			var r rune
			for k := 0; k < 4; k++ {
				j := i + 2 + k
				if j >= n {
					return n, saved > 0, false, 0, &SyntaxError{Offset: i, Msg: "unterminated \\u escape", Incomplete: true}
				}
				if !isHex(buf[j]) {
					return j, saved > 0, false, 0, &SyntaxError{Offset: j, Msg: "invalid \\u escape"}
				}
				r = r<<4 | hexVal(buf[j])
			}
			switch { // six bytes for one to three (one counted above)
			case r < 0x80:
				saved += 4
			case r < 0x800:
				saved += 3
			case r >= 0xD800 && r < 0xDC00 && i+12 <= n && buf[i+6] == '\\' && buf[i+7] == 'u' && lowSurrogate(buf[i+8:i+12]):
				// A pair: twelve bytes for one four-byte rune (the second
				// escape's digits are checked here, as the loop would).
				saved += 7
				i += 6
			default: // three bytes, lone surrogates included (U+FFFD)
				saved += 2
			}
			i += 6
			continue
		}
		if c == '"' {
			return i + 1, saved > 0, acc&hi8 != 0, saved, nil
		}
		return i, saved > 0, false, 0, &SyntaxError{Offset: i, Msg: fmt.Sprintf("control character 0x%02x in string", c)}
	}
}

// hexVal is the value of the hexadecimal digit c (checked by isHex).
func hexVal(c byte) rune {
	if c <= '9' {
		return rune(c - '0')
	}
	return rune(c|0x20) - 'a' + 10
}

// lowSurrogate reports whether the four bytes b are the hexadecimal digits
// of a low surrogate (DC00-DFFF).
func lowSurrogate(b []byte) bool {
	var r rune
	for _, c := range b[:4] {
		if !isHex(c) {
			return false
		}
		r = r<<4 | hexVal(c)
	}
	return r >= 0xDC00 && r <= 0xDFFF
}

func isHex(c byte) bool {
	return isDigit[c] || (c|0x20) >= 'a' && (c|0x20) <= 'f'
}

func skipWS(buf []byte, i int) int {
	for i < len(buf) && isWS[buf[i]] {
		i++
	}
	return i
}

// skipNumber validates a JSON number starting at buf[i].
func skipNumber(buf []byte, i int) (int, *SyntaxError) {
	n := len(buf)
	start := i
	if buf[i] == '-' {
		i++
		if i >= n {
			return n, &SyntaxError{Offset: start, Msg: "truncated number", Incomplete: true}
		}
	}
	switch {
	case buf[i] == '0':
		i++
	case isDigit[buf[i]]:
		for i < n && isDigit[buf[i]] {
			i++
		}
	default:
		return i, &SyntaxError{Offset: i, Msg: "invalid number"}
	}
	if i < n && buf[i] == '.' {
		i++
		if i >= n {
			return n, &SyntaxError{Offset: start, Msg: "truncated number", Incomplete: true}
		}
		if !isDigit[buf[i]] {
			return i, &SyntaxError{Offset: i, Msg: "invalid number: digit expected after '.'"}
		}
		for i < n && isDigit[buf[i]] {
			i++
		}
	}
	if i < n && (buf[i] == 'e' || buf[i] == 'E') {
		i++
		if i < n && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		if i >= n {
			return n, &SyntaxError{Offset: start, Msg: "truncated number", Incomplete: true}
		}
		if !isDigit[buf[i]] {
			return i, &SyntaxError{Offset: i, Msg: "invalid number: digit expected in exponent"}
		}
		for i < n && isDigit[buf[i]] {
			i++
		}
	}
	return i, nil
}

func (t *Tape) push(isObj bool) {
	w := t.ndeep / 64
	if w >= len(t.deep) {
		t.deep = append(t.deep, 0)
	}
	if isObj {
		t.deep[w] |= 1 << (t.ndeep % 64)
	} else {
		t.deep[w] &^= 1 << (t.ndeep % 64)
	}
	t.ndeep++
}

func (t *Tape) topDeepIsObj() bool {
	k := t.ndeep - 1
	return t.deep[k/64]&(1<<(k%64)) != 0
}

// Parse validates exactly one JSON value starting at or after buf offset
// start (leading whitespace is skipped) and records its nodes. It returns
// the index of the root node and the offset just past the value. Bytes after
// the value are not examined. On error no nodes of this value remain on the
// tape and end is the offset of the error.
func (t *Tape) Parse(start int) (root int, end int, err *SyntaxError) {
	buf := t.buf
	n := len(buf)
	base := len(t.Nodes)
	t.stack = t.stack[:0]
	t.ndeep = 0
	root = base
	keyStart, keyEnd, keyEsc := 0, 0, false
	fail := func(e *SyntaxError) (int, int, *SyntaxError) {
		t.Nodes = t.Nodes[:base]
		return -1, e.Offset, e
	}
	// member parses `"key" :` at buf[i] and leaves i at the value.
	member := func(i int) (int, *SyntaxError) {
		if i >= n {
			return i, &SyntaxError{Offset: i, Msg: "object key expected", Incomplete: true}
		}
		if buf[i] != '"' {
			return i, &SyntaxError{Offset: i, Msg: "object key expected"}
		}
		ke, esc, high, _, e := skipString(buf, i)
		if e != nil {
			return ke, e
		}
		if high && !utf8.Valid(buf[i+1:ke-1]) {
			t.BadUTF8 = true
		}
		keyStart, keyEnd, keyEsc = i+1, ke-1, esc
		i = skipWS(buf, ke)
		if i >= n {
			return i, &SyntaxError{Offset: i, Msg: "':' expected", Incomplete: true}
		}
		if buf[i] != ':' {
			return i, &SyntaxError{Offset: i, Msg: "':' expected after object key"}
		}
		return skipWS(buf, i+1), nil
	}
	i := skipWS(buf, start)
	if i >= n {
		return fail(&SyntaxError{Offset: i, Msg: "no value", Incomplete: true})
	}
	for {
		// A value is expected at buf[i].
		if i >= n {
			return fail(&SyntaxError{Offset: i, Msg: "value expected", Incomplete: true})
		}
		record := t.ndeep == 0 && len(t.stack) <= t.MaxDepth
		var idx int32 = -1
		if record {
			idx = int32(len(t.Nodes))
			parent := int32(-1)
			if len(t.stack) > 0 {
				f := &t.stack[len(t.stack)-1]
				parent = f.node
				if f.last >= 0 {
					t.Nodes[f.last].Next = idx
				} else {
					t.Nodes[parent].First = idx
				}
				f.last = idx
			}
			t.Nodes = append(t.Nodes, Node{Start: i, Parent: parent, First: -1, Next: -1,
				KeyStart: keyStart, KeyEnd: keyEnd, KeyEsc: keyEsc})
		}
		keyStart, keyEnd, keyEsc = 0, 0, false
		c := buf[i]
		switch {
		case c == '{' || c == '[':
			isObj := c == '{'
			if record {
				if isObj {
					t.Nodes[idx].Kind = KindObject
				} else {
					t.Nodes[idx].Kind = KindArray
				}
				t.stack = append(t.stack, frame{node: idx, last: -1, isObj: isObj})
			} else {
				t.push(isObj)
			}
			i = skipWS(buf, i+1)
			if i >= n {
				return fail(&SyntaxError{Offset: i, Msg: "unterminated container", Incomplete: true})
			}
			if isObj && buf[i] == '}' || !isObj && buf[i] == ']' {
				i++
				goto closed
			}
			if isObj {
				var e *SyntaxError
				if i, e = member(i); e != nil {
					return fail(e)
				}
			}
			continue
		case c == '"':
			e, esc, high, saved, err := skipString(buf, i)
			if err != nil {
				return fail(err)
			}
			if high && !utf8.Valid(buf[i+1:e-1]) {
				t.BadUTF8 = true
			}
			if record {
				t.Nodes[idx].Kind = KindString
				t.Nodes[idx].Esc = esc
				t.Nodes[idx].EscSaved = saved
				t.Nodes[idx].End = e
			}
			i = e
		case c == '-' || isDigit[c]:
			e, err := skipNumber(buf, i)
			if err != nil {
				return fail(err)
			}
			if record {
				t.Nodes[idx].Kind = KindNumber
				t.Nodes[idx].End = e
			}
			i = e
		case c == 't' || c == 'f' || c == 'n':
			lit, k := "null", KindNull
			switch c {
			case 't':
				lit, k = "true", KindTrue
			case 'f':
				lit, k = "false", KindFalse
			}
			for j := 0; j < len(lit); j++ {
				if i+j >= n {
					return fail(&SyntaxError{Offset: i, Msg: "truncated literal", Incomplete: true})
				}
				if buf[i+j] != lit[j] {
					return fail(&SyntaxError{Offset: i + j, Msg: "invalid literal"})
				}
			}
			if record {
				t.Nodes[idx].Kind = k
				t.Nodes[idx].End = i + len(lit)
			}
			i += len(lit)
		default:
			return fail(&SyntaxError{Offset: i, Msg: fmt.Sprintf("unexpected character %q", c)})
		}
		goto after
	closed:
		// A container closed at buf[i-1].
		if t.ndeep > 0 {
			t.ndeep--
		} else {
			f := t.stack[len(t.stack)-1]
			t.stack = t.stack[:len(t.stack)-1]
			t.Nodes[f.node].End = i
		}
	after:
		// A value ended just before buf[i].
		if t.ndeep == 0 && len(t.stack) == 0 {
			return root, i, nil
		}
		i = skipWS(buf, i)
		if i >= n {
			return fail(&SyntaxError{Offset: i, Msg: "unterminated container", Incomplete: true})
		}
		inObj := false
		if t.ndeep > 0 {
			inObj = t.topDeepIsObj()
		} else {
			inObj = t.stack[len(t.stack)-1].isObj
		}
		switch buf[i] {
		case ',':
			i = skipWS(buf, i+1)
			if inObj {
				var e *SyntaxError
				if i, e = member(i); e != nil {
					return fail(e)
				}
			}
			continue
		case '}':
			if !inObj {
				return fail(&SyntaxError{Offset: i, Msg: "']' expected, found '}'"})
			}
			i++
			goto closed
		case ']':
			if inObj {
				return fail(&SyntaxError{Offset: i, Msg: "'}' expected, found ']'"})
			}
			i++
			goto closed
		default:
			return fail(&SyntaxError{Offset: i, Msg: fmt.Sprintf("',' or end of container expected, found %q", buf[i])})
		}
	}
}

// Get returns the index of the member named key of the object node n, or -1
// when n is not a recorded object or has no such member. When a key occurs
// more than once the last occurrence wins, as in JavaScript's JSON.parse.
func (t *Tape) Get(n int, key string) int {
	if n < 0 || t.Nodes[n].Kind != KindObject {
		return -1
	}
	found := -1
	for c := t.Nodes[n].First; c >= 0; c = t.Nodes[c].Next {
		nd := &t.Nodes[c]
		if !nd.KeyEsc {
			if nd.KeyEnd-nd.KeyStart == len(key) && string(t.buf[nd.KeyStart:nd.KeyEnd]) == key {
				found = int(c)
			}
			continue
		}
		if k, ok := t.Key(int(c)); ok && k == key {
			found = int(c)
		}
	}
	return found
}

// Path follows object members from node n: Path(n, "message", "usage").
// It returns -1 as soon as a member is missing.
func (t *Tape) Path(n int, keys ...string) int {
	for _, k := range keys {
		n = t.Get(n, k)
		if n < 0 {
			return -1
		}
	}
	return n
}

// Kind returns the kind of node n, or KindInvalid for n < 0.
func (t *Tape) Kind(n int) Kind {
	if n < 0 {
		return KindInvalid
	}
	return t.Nodes[n].Kind
}

// Raw returns the exact bytes of node n (including quotes for strings), or
// nil for n < 0. The slice aliases the parsed buffer.
func (t *Tape) Raw(n int) []byte {
	if n < 0 {
		return nil
	}
	nd := &t.Nodes[n]
	return t.buf[nd.Start:nd.End:nd.End]
}

// Children calls fn for each recorded child of object or array node n, in
// order, stopping when fn returns false.
func (t *Tape) Children(n int, fn func(child int) bool) {
	if n < 0 {
		return
	}
	for c := t.Nodes[n].First; c >= 0; c = t.Nodes[c].Next {
		if !fn(int(c)) {
			return
		}
	}
}

// Len returns the number of recorded children of node n.
func (t *Tape) Len(n int) int {
	k := 0
	t.Children(n, func(int) bool { k++; return true })
	return k
}

// Key returns the decoded key of member node n.
func (t *Tape) Key(n int) (string, bool) {
	if n < 0 {
		return "", false
	}
	nd := &t.Nodes[n]
	if nd.KeyEnd == 0 && nd.KeyStart == 0 {
		return "", false
	}
	raw := t.buf[nd.KeyStart:nd.KeyEnd]
	if !nd.KeyEsc {
		return string(raw), true
	}
	return string(unescape(nil, raw)), true
}

// Str returns the decoded value of string node n. ok is false when n is
// missing or not a string. The string is decoded once into memory of its
// exact size: a 200 MB tool output costs 200 MB, not a doubling series
// and a copy.
func (t *Tape) Str(n int) (s string, ok bool) {
	if n < 0 || t.Nodes[n].Kind != KindString {
		return "", false
	}
	nd := &t.Nodes[n]
	raw := t.buf[nd.Start+1 : nd.End-1]
	if !nd.Esc {
		return string(raw), true
	}
	b := unescape(make([]byte, 0, t.StrLen(n)), raw)
	if len(b) == 0 {
		return "", true
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true // b is not referenced elsewhere
}

// StrBytes is Str without the string allocation: the result aliases the
// parsed buffer when the string has no escapes, or a scratch buffer that is
// overwritten by the next StrBytes call otherwise.
func (t *Tape) StrBytes(n int) ([]byte, bool) {
	if n < 0 || t.Nodes[n].Kind != KindString {
		return nil, false
	}
	nd := &t.Nodes[n]
	raw := t.buf[nd.Start+1 : nd.End-1]
	if !nd.Esc {
		return raw, true
	}
	t.tmp = unescape(slices.Grow(t.tmp[:0], t.StrLen(n)), raw)
	return t.tmp, true
}

// StrLen returns the length in bytes of the decoded string node n (what
// StrBytes returns) without decoding it: the scanner counted what its
// escapes save (Node.EscSaved). 0 for a node that is not a string.
func (t *Tape) StrLen(n int) int {
	if n < 0 || t.Nodes[n].Kind != KindString {
		return 0
	}
	nd := &t.Nodes[n]
	return nd.End - nd.Start - 2 - nd.EscSaved
}

// Float returns the value of number node n as a float64. ok is false when n
// is not a number or does not fit (±Inf).
func (t *Tape) Float(n int) (float64, bool) {
	if n < 0 || t.Nodes[n].Kind != KindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(t.Raw(n)), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Int returns the value of number node n when it is an integer that fits in
// an int64 (1e3 and 4.0 count as integers, as in JavaScript).
func (t *Tape) Int(n int) (int64, bool) {
	if n < 0 || t.Nodes[n].Kind != KindNumber {
		return 0, false
	}
	raw := t.Raw(n)
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return v, true
	}
	f, ok := t.Float(n)
	if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// unescape appends the decoded form of the raw JSON string body s to dst.
// The body has been validated by the scanner. Lone surrogates are kept
// distinct, encoded as WTF-8 (see below).
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				return append(dst, s[i:]...)
			}
			dst = append(dst, s[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+6 > len(s) {
				return dst
			}
			r := rune(hex4(s[i+2 : i+6]))
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 := rune(hex4(s[i+2 : i+6]))
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						dst = utf8.AppendRune(dst, d)
						i += 6
						continue
					}
				}
				// A lone surrogate: JavaScript keeps it as a distinct code
				// unit, so keep it distinct too, in WTF-8 (the 3-byte form
				// UTF-8 forbids). Such strings are not valid UTF-8; writers
				// that need UTF-8 replace them.
				dst = append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		i += 2
	}
	return dst
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= int(c-'A') + 10
		}
	}
	return v
}

// Valid reports whether b holds exactly one JSON value (surrounding
// whitespace allowed). It is the scanner's answer, used by tests and fuzzing
// against encoding/json.
func Valid(b []byte) bool {
	var t Tape
	t.Reset(b)
	_, end, err := t.Parse(0)
	return err == nil && skipWS(b, end) == len(b)
}
