package session

import (
	"bytes"
	"encoding/json"
	"io"
)

// TitleSlotSize is the length of oh-my-pi's title slot line, its "\n"
// included (SPEC.md §7.2): omp rewrites the slot in place, so it never
// changes length.
const TitleSlotSize = 256

// CodeOmpTitleSlot is the note validate gives line 1 of a file that opens
// with an oh-my-pi title slot.
const CodeOmpTitleSlot = "omp_title_slot"

// TitleSlot is oh-my-pi's fixed-width title record, the first line of an
// omp session file, before the session header:
//
//	{"type":"title","v":1,"title":…,["source":…,]"updatedAt":…,"pad":"<spaces>"}
type TitleSlot struct {
	Title     string // the session's name
	Source    string // who set it ("" when absent)
	UpdatedAt string // when it was set (ISO-8601, as written)
}

// ParseTitleSlot reads line, the first line of a file without its "\n"
// (the caller checks that the line ends with "\n" and starts the file),
// as a title slot. It is one only in exactly omp's shape: TitleSlotSize
// bytes with the newline; an object whose members are, in this order,
// "type":"title", "v":1, "title" (string), optionally "source" (string),
// "updatedAt" (string), "pad" (a string of spaces) closing the line
// (the padding is inside it: the line ends with `"}`); no other member. omp
// refuses a file whose first line breaks this shape, and so does the
// caller (the line is then an ordinary first record, not a header).
func ParseTitleSlot(line []byte) (TitleSlot, bool) {
	var s TitleSlot
	if len(line) != TitleSlotSize-1 || line[0] != '{' || !bytes.HasSuffix(line, []byte(`"}`)) || !bytes.Contains(line, []byte(`"title"`)) {
		return s, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return s, false
	}
	keys := []string{"type", "v", "title", "source", "updatedAt", "pad"}
	k := 0
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return s, false
		}
		key, _ := kt.(string)
		for k < len(keys) && keys[k] != key && keys[k] == "source" {
			k++ // the optional member is absent
		}
		if k >= len(keys) || keys[k] != key {
			return s, false // unknown, repeated or out of order
		}
		vt, err := dec.Token()
		if err != nil {
			return s, false
		}
		str, isStr := vt.(string)
		switch key {
		case "type":
			if str != "title" {
				return s, false
			}
		case "v":
			if n, ok := vt.(json.Number); !ok || n.String() != "1" {
				return s, false
			}
		case "title":
			s.Title = str
		case "source":
			s.Source = str
		case "updatedAt":
			s.UpdatedAt = str
		case "pad":
			if len(bytes.Trim([]byte(str), " ")) != 0 {
				return s, false
			}
		}
		if key != "v" && !isStr {
			return s, false
		}
		k++
	}
	if k != len(keys) { // pad (and so every required member) seen last
		return s, false
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return s, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, false // something after the object
	}
	return s, true
}

// ReadTitleSlot reads the first TitleSlotSize bytes of r and reports
// whether they are a title slot line (ParseTitleSlot, then "\n").
func ReadTitleSlot(r io.ReaderAt) (TitleSlot, bool) {
	var buf [TitleSlotSize]byte
	if n, err := r.ReadAt(buf[:], 0); n != TitleSlotSize && err != nil {
		return TitleSlot{}, false
	}
	if buf[TitleSlotSize-1] != '\n' {
		return TitleSlot{}, false
	}
	return ParseTitleSlot(buf[:TitleSlotSize-1])
}
