package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/session"
)

// TestOmpTitleSlot: a first line in the exact shape of oh-my-pi's title
// slot makes the next line the header (the note omp_title_slot on line
// 1); a "type":"title" line of any other shape, or a slot that does not
// open the file, is not one: not_session, as omp itself refuses it.
func TestOmpTitleSlot(t *testing.T) {
	hdr := `{"type":"session","version":3,"id":"s1","timestamp":"2025-12-05T14:00:00.000Z","cwd":"/x"}` + "\n"
	entry := `{"type":"message","id":"e1","parentId":null,"timestamp":"2025-12-05T14:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	slotLine := func(head string, size int) string {
		return head + strings.Repeat(" ", size-1-len(head)-2) + `"}` + "\n"
	}
	good := slotLine(`{"type":"title","v":1,"title":"T","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, session.TitleSlotSize)
	tests := []struct {
		name, content string
		status        Status
		codes         []string
		title         string
	}{
		{"slot", good + hdr + entry, StatusNeedsUpgrade, []string{session.CodeOmpTitleSlot}, "T"},
		{"slot, header only", good + hdr, StatusNeedsUpgrade, []string{session.CodeOmpTitleSlot}, "T"},
		{"255 bytes", slotLine(`{"type":"title","v":1,"title":"T","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, 255) + hdr, StatusNotSession, []string{ingest.CodeNotSession}, ""},
		{"v 2", slotLine(`{"type":"title","v":2,"title":"T","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, session.TitleSlotSize) + hdr, StatusNotSession, []string{ingest.CodeNotSession}, ""},
		{"CRLF", strings.TrimSuffix(slotLine(`{"type":"title","v":1,"title":"T","updatedAt":"2025-12-05T14:05:00.000Z","pad":"`, session.TitleSlotSize-1), "\n") + "\r\n" + hdr, StatusNotSession, []string{ingest.CodeNotSession}, ""},
		{"slot on line 2", hdr + good + entry, StatusCorrupt, nil, ""},
		{"slot only", good, StatusEmpty, nil, "T"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		p := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := File(context.Background(), &ingest.Reader{MaxDepth: 1}, NewChecker(), p)
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, is := range res.Issues {
			codes = append(codes, is.Code)
		}
		title := ""
		if res.TitleSlot != nil {
			title = res.TitleSlot.Title
		}
		if res.Status != tc.status || (tc.codes != nil && strings.Join(codes, ",") != strings.Join(tc.codes, ",")) || title != tc.title {
			t.Errorf("%s: status %s codes %v title %q; want %s %v %q", tc.name, res.Status, codes, title, tc.status, tc.codes, tc.title)
		}
		if tc.name == "slot" && (res.Entries != 1 || res.Header.ID != "s1" || res.Issues[0].Line != 1) {
			t.Errorf("slot: entries %d, header %q, note line %d", res.Entries, res.Header.ID, res.Issues[0].Line)
		}
	}
}
