package ingest

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e10`, `-1.5E-3`, `true`, `false`, `null`,
		`{"a":1,"b":[1,2,{"c":"d\u00e9\n"}]}`, ` {"a" : [ ] } `, "{\"a\":1}\r",
		`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `01`, `1.`, `.5`, `1e`, `-`, `"\x"`, `"\u12g4"`,
		"\"a\tb\"", `{"a":1}{"b":2}`, `{"a":1]`, `[1}`, `nul`, `tru`, `"abc`, `{"a":"b`, ``, ` `,
		`{"type":"message","id":"x", oops}`, `[[[[[[[[[[]]]]]]]]]]`, `{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}`,
		`"0123456789abcdef0123456789abcdef\"0123456789"`, `"` + strings.Repeat("x", 100) + `\\"`,
		"\"\xff\xfe\"", `1 2`, `{"a":1 "b":2}`, `[1 2]`,
	}
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestTapeFields(t *testing.T) {
	line := `{"type":"message","id":"a1","parentId":null,"n":4.0,"t\u0079pe":"dup","message":{"role":"assistant","usage":{"input":10,"cost":{"total":0.5}},"content":[{"type":"text","text":"h\"i"},{"type":"image","data":"AAAA"}]}}`
	tp := Tape{MaxDepth: 4}
	tp.Reset([]byte(line))
	root, end, err := tp.Parse(0)
	if err != nil || end != len(line) {
		t.Fatalf("Parse: %v end=%d", err, end)
	}
	if s, _ := tp.Str(tp.Get(root, "type")); s != "dup" {
		t.Errorf("type = %q, want last duplicate key (escaped) %q", s, "dup")
	}
	if k := tp.Kind(tp.Get(root, "parentId")); k != KindNull {
		t.Errorf("parentId kind = %v", k)
	}
	if v, ok := tp.Int(tp.Get(root, "n")); !ok || v != 4 {
		t.Errorf("n = %v %v", v, ok)
	}
	if v, ok := tp.Float(tp.Path(root, "message", "usage", "cost", "total")); !ok || v != 0.5 {
		t.Errorf("cost.total = %v %v", v, ok)
	}
	content := tp.Path(root, "message", "content")
	if n := tp.Len(content); n != 2 {
		t.Fatalf("content len = %d", n)
	}
	var texts []string
	tp.Children(content, func(c int) bool {
		s, _ := tp.Str(tp.Get(c, "text"))
		texts = append(texts, s)
		return true
	})
	if texts[0] != `h"i` || texts[1] != "" {
		t.Errorf("texts = %q", texts)
	}
	// depth 5 is not recorded but its container span is.
	if tp.Get(tp.Path(root, "message", "usage", "cost"), "total") < 0 {
		t.Errorf("depth-4 member missing")
	}
	shallow := Tape{MaxDepth: 1}
	shallow.Reset([]byte(line))
	r2, _, err := shallow.Parse(0)
	if err != nil {
		t.Fatal(err)
	}
	msg := shallow.Get(r2, "message")
	if shallow.Kind(msg) != KindObject || shallow.Get(msg, "role") != -1 {
		t.Errorf("MaxDepth=1 recorded children of message")
	}
	if string(shallow.Raw(msg)) != line[strings.Index(line, `{"role"`):len(line)-1] {
		t.Errorf("message span wrong: %s", shallow.Raw(msg))
	}
}

func TestIncomplete(t *testing.T) {
	for _, c := range []string{`{"type":"mess`, `{"a":[1,2`, `{"a":tr`, `{"a":-`, `{"a":1.`, `{"a":"\u00`, `{`, `{"a"`, `{"a":`} {
		var tp Tape
		tp.Reset([]byte(c))
		_, _, err := tp.Parse(0)
		if err == nil || !err.Incomplete {
			t.Errorf("%q: err=%v, want incomplete", c, err)
		}
	}
	for _, c := range []string{`{"a":1]`, `{"a" 1}`, `{x}`, `[1,,2]`} {
		var tp Tape
		tp.Reset([]byte(c))
		_, _, err := tp.Parse(0)
		if err == nil || err.Incomplete {
			t.Errorf("%q: err=%v, want a complete syntax error", c, err)
		}
	}
}

func TestDeepNestingDoesNotRecurse(t *testing.T) {
	depth := 1 << 20
	b := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	if !Valid([]byte(b)) {
		t.Fatal("deep array rejected")
	}
	if Valid([]byte(b[:len(b)-1])) {
		t.Fatal("unbalanced deep array accepted")
	}
}

func FuzzTape(f *testing.F) {
	for _, s := range []string{`{"type":"session","id":"x"}`, `[1,{"a":"\u00e9"}]`, `{"a":1}{"b":2}`, `"\ud83d\ude00"`, `1e5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		tp := Tape{MaxDepth: 3}
		tp.Reset(b)
		root, end, err := tp.Parse(0)
		if err != nil {
			return
		}
		if end > len(b) || root != 0 || tp.Nodes[0].End != end {
			t.Fatalf("bad root span")
		}
		for i, nd := range tp.Nodes {
			if nd.Start < 0 || nd.End > end || nd.Start >= nd.End {
				t.Fatalf("node %d span [%d,%d)", i, nd.Start, nd.End)
			}
			if !json.Valid(b[nd.Start:nd.End]) {
				t.Fatalf("node %d is not a JSON value: %q", i, b[nd.Start:nd.End])
			}
			if nd.Kind == KindString {
				s, _ := tp.Str(i)
				if got := tp.StrLen(i); got != len(s) {
					t.Fatalf("node %d: StrLen %d, decoded %d bytes", i, got, len(s))
				}
				var want string
				// Raw invalid UTF-8 is kept as is (byte fidelity); compare the rest.
				if json.Unmarshal(b[nd.Start:nd.End], &want) == nil && utf8.ValidString(s) && s != want {
					t.Fatalf("node %d decoded %q, encoding/json %q", i, s, want)
				}
			}
		}
	})
}

// TestStrLen: the decoded length the scanner counts (Node.EscSaved) equals
// the length of the decoded string, for every kind of escape, surrogate
// pairs, lone and reversed surrogates, invalid UTF-8, in a root string and
// in a member value.
func TestStrLen(t *testing.T) {
	pieces := []string{`a`, `é`, "\xff", `\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u0041`, `\u00e9`, `\u20ac`,
		`\u07ff`, `\u0800`, `\u007f`, `\u0080`, `\uffff`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\ude00\ud83d`, `\ud83dx`,
		`\ud83d\u0041`, `\uDBFF\uDFFF`, `\uD800\uDC00`, `\ud83d\ud83d\ude00`, `xyz`, ` `}
	rng := rand.New(rand.NewPCG(1, 2))
	tape := Tape{MaxDepth: 4}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		body := b.String()
		for _, doc := range []string{`"` + body + `"`, `{"k":{"t":"` + body + `"}}`} {
			tape.Reset([]byte(doc))
			root, _, perr := tape.Parse(0)
			if perr != nil {
				t.Fatalf("%s: %v", doc, perr)
			}
			n := root
			if doc[0] == '{' {
				n = tape.Path(root, "k", "t")
			}
			dec, ok := tape.StrBytes(n)
			if !ok {
				t.Fatalf("%s: not a string", doc)
			}
			if got := tape.StrLen(n); got != len(dec) {
				t.Fatalf("%s: StrLen %d, decoded %d bytes %q", doc, got, len(dec), dec)
			}
		}
	}
	tape.Reset([]byte(`"ab\u00e9\ud83d\ude00\n"`))
	root, _, _ := tape.Parse(0)
	if got := tape.StrLen(root); got != 2+2+4+1 {
		t.Errorf("StrLen = %d, want 9", got)
	}
}
