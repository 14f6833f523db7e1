package session

import (
	"strings"
	"testing"
)

// slot pads a title record's pad string so the line is TitleSlotSize
// bytes with its newline (returned without it).
func slot(t *testing.T, head, tail string) string {
	t.Helper()
	n := TitleSlotSize - 1 - len(head) - len(tail)
	if n < 0 {
		t.Fatalf("slot too long: %s…%s", head, tail)
	}
	return head + strings.Repeat(" ", n) + tail
}

func TestParseTitleSlot(t *testing.T) {
	good := slot(t, `{"type":"title","v":1,"title":"Fix flaky login test","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, `"}`)
	s, ok := ParseTitleSlot([]byte(good))
	if !ok || s.Title != "Fix flaky login test" || s.UpdatedAt != "2025-12-05T14:05:00.000Z" || s.Source != "" {
		t.Errorf("the case's slot: %+v, %v", s, ok)
	}
	withSource := slot(t, `{"type":"title","v":1,"title":"T \u00e9","source":"auto","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, `"}`)
	if s, ok := ParseTitleSlot([]byte(withSource)); !ok || s.Title != "T é" || s.Source != "auto" {
		t.Errorf("with source: %+v, %v", s, ok)
	}
	bad := map[string]string{
		"short":            `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":""}`,
		"long":             good + " ",
		"v2":               slot(t, `{"type":"title","v":2,"title":"x","updatedAt":"2025","pad":"`, `"}`),
		"v string":         slot(t, `{"type":"title","v":"1","title":"x","updatedAt":"2025","pad":"`, `"}`),
		"v 1.0":            slot(t, `{"type":"title","v":1.0,"title":"x","updatedAt":"2025","pad":"`, `"}`),
		"no pad":           `{"type":"title","v":1,"title":"x","updatedAt":"2025","other":"` + strings.Repeat(" ", 255-61) + `"}`,
		"no updatedAt":     slot(t, `{"type":"title","v":1,"title":"x","pad":"`, `"}`),
		"pad not last":     slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":"`, `","source":"a"}`),
		"source after":     slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","source":"a","pad":"`, `"}`),
		"extra member":     slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","z":1,"pad":"`, `"}`),
		"pad not spaces":   slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":"x`, `"}`),
		"title not string": slot(t, `{"type":"title","v":1,"title":7,"updatedAt":"2025","pad":"`, `"}`),
		"type session":     slot(t, `{"type":"session","v":1,"title":"x","updatedAt":"2025","pad":"`, `"}`),
		"type not first":   slot(t, `{"v":1,"type":"title","title":"x","updatedAt":"2025","pad":"`, `"}`),
		"padding outside":  slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":""`, `}`),
		"trailing value":   slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":"`, `"}{}`),
		"duplicate title":  slot(t, `{"type":"title","v":1,"title":"x","title":"y","updatedAt":"2025","pad":"`, `"}`),
		"not json":         slot(t, `{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":"`, `"`),
	}
	for name, line := range bad {
		if s, ok := ParseTitleSlot([]byte(line)); ok {
			t.Errorf("%s: parsed as a slot: %+v", name, s)
		}
	}
}

func FuzzParseTitleSlot(f *testing.F) {
	f.Add([]byte(`{"type":"title","v":1,"title":"x","updatedAt":"2025","pad":"` + strings.Repeat(" ", 191) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, ok := ParseTitleSlot(b); ok && len(b) != TitleSlotSize-1 {
			t.Errorf("slot of %d bytes: %+v", len(b), s)
		}
	})
}
