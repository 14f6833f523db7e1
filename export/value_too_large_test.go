package export

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValueTooLarge: a value longer than a sink can store (2 GiB − 1 bytes;
// here the limit is lowered to 1000 bytes, a 2 GiB fixture being out of
// reach) is stored as NULL in both sinks, with a value_too_large row in
// ingest_issues naming the file and the line; byte_size keeps the block's
// size, and the rest of the file — the other blocks, the usage, the later
// entries — is exported as without the limit.
func TestValueTooLarge(t *testing.T) {
	old := maxValueBytes
	maxValueBytes = 1000
	t.Cleanup(func() { maxValueBytes = old })

	long := strings.Repeat("x", 3000)
	args := `{"q":"` + strings.Repeat("y", 2000) + `"}` // 2008 bytes
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-07-01T09:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-07-01T09:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"short"},{"type":"text","text":"` + long + `"}]}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-07-01T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"calling"},{"type":"toolCall","id":"c1","name":"grep","arguments":` + args + `}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":800,"output":60,"cacheRead":0,"cacheWrite":0,"totalTokens":860}}}`,
		`{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-07-01T09:00:03.000Z","message":{"role":"user","content":"after"}}`,
	}
	root := t.TempDir()
	path := filepath.Join(root, "s.jsonl")
	writeFile(t, path, strings.Join(lines, "\n")+"\n")

	for _, s := range exportSinks(t, []string{root}, func(o *Options) { o.WithRaw = true }) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			sum := s.sum
			if sum.Rejected != 0 {
				t.Fatalf("rejected %d files, want 0", sum.Rejected)
			}
			db := s.open(t, out)
			got := queryStrings(t, db, "SELECT path, line_no, severity, code, message FROM ingest_issues ORDER BY line_no, message")
			msg := func(what string, n int) string {
				return fmt.Sprintf("%s of %d bytes is longer than the 1000 bytes a stored value can hold: stored as NULL", what, n)
			}
			want := []string{
				path + "|2|warning|value_too_large|" + msg("block 1: text", 3000),
				path + "|2|warning|value_too_large|" + msg("raw_json", len(lines[1])),
				path + "|3|warning|value_too_large|" + msg("block 1: arguments", len(args)),
				path + "|3|warning|value_too_large|" + msg("raw_json", len(lines[2])),
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("ingest_issues (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT entry_index, block_index, block_type, byte_size, text, arguments_json FROM content_blocks ORDER BY entry_index, block_index")
			want = []string{
				"0|0|text|5|short|∅",
				"0|1|text|3000|∅|∅",
				"1|0|text|7|calling|∅",
				"1|1|toolCall|2008|∅|∅",
				"2|0|text|5|after|∅",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("content_blocks (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT entry_id, raw_json IS NULL FROM entries ORDER BY entry_index")
			if d := cmp.Diff([]string{"e1|true", "e2|true", "e3|false"}, got); d != "" {
				t.Errorf("entries raw_json (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT entry_id, input, output FROM usage")
			if d := cmp.Diff([]string{"e2|800|60"}, got); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, "SELECT status, issue_count FROM files")
			if d := cmp.Diff([]string{"needs_upgrade|4"}, got); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
		})
	}
}
