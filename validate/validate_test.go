package validate

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

func check(t *testing.T, content string) Result {
	t.Helper()
	c := NewChecker()
	r := ingest.Reader{MaxDepth: 1}
	if _, err := r.Read(context.Background(), strings.NewReader(content), c); err != nil {
		t.Fatal(err)
	}
	return c.Finish()
}

const (
	msgA = `{"type":"message","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	msgB = `{"type":"message","id":"b","parentId":"a","timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"user","content":"hi","timestamp":2}}`
)

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		content string
		status  Status
		version int
		codes   []string
	}{
		{"v3 ok", `{"type":"session","version":3,"id":"s","timestamp":"2025-06-01T10:00:00.000Z"}` + "\n" + msgA + "\n" + msgB + "\n", StatusNeedsUpgrade, 3, nil},
		{"v4 current", `{"type":"session","version":4,"id":"s","createdAt":"2025-06-01T10:00:00.000Z"}` + "\n" + msgA + "\n", StatusCurrent, 4, nil},
		{"v4 float spelling", `{"type":"session","version":4.0,"id":"s","createdAt":"x"}` + "\n", StatusCurrent, 4, nil},
		{"v4 exponent spelling", `{"type":"session","version":4e0,"id":"s","createdAt":"x"}` + "\n", StatusCurrent, 4, nil},
		{"early v4 timestamp", `{"type":"session","version":4,"id":"s","timestamp":"2025-06-01T10:00:00.000Z"}` + "\n", StatusNeedsUpgrade, 4, nil},
		{"early v4 parentSession", `{"type":"session","version":4,"id":"s","createdAt":"x","parentSession":"/p.jsonl"}` + "\n", StatusNeedsUpgrade, 4, nil},
		{"v4 without any time", `{"type":"session","version":4,"id":"s"}` + "\n", StatusCurrent, 4, []string{ingest.CodeMissingCreatedAt}},
		{"absent version is v1", `{"type":"session","id":"s","timestamp":"t"}` + "\n" + `{"type":"message","timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user"}}` + "\n", StatusNeedsUpgrade, 1, nil},
		{"future", `{"type":"session","version":7,"id":"s"}` + "\n", StatusFutureVersion, 0, []string{ingest.CodeFutureVersion}},
		{"huge future", `{"type":"session","version":1e30,"id":"s"}` + "\n", StatusFutureVersion, 0, []string{ingest.CodeFutureVersion}},
		{"negative", `{"type":"session","version":-1,"id":"s"}` + "\n", StatusUnrecognizedVersion, 0, []string{ingest.CodeUnrecognizedVersion}},
		{"bool", `{"type":"session","version":true,"id":"s"}` + "\n", StatusUnrecognizedVersion, 0, []string{ingest.CodeUnrecognizedVersion}},
		{"infinite", `{"type":"session","version":1e400,"id":"s"}` + "\n", StatusUnrecognizedVersion, 0, []string{ingest.CodeUnrecognizedVersion}},
		{"not an object", `[1,2]` + "\n", StatusNotSession, 0, []string{ingest.CodeNotSession}},
		{"wrong type", `{"type":"message","id":"s"}` + "\n", StatusNotSession, 0, []string{ingest.CodeNotSession}},
		{"empty id", `{"type":"session","id":""}` + "\n", StatusNotSession, 0, []string{ingest.CodeNotSession}},
		{"numeric id", `{"type":"session","id":5}` + "\n", StatusNotSession, 0, []string{ingest.CodeNotSession}},
		{"first line garbage", "hello\n" + msgA + "\n", StatusNotSession, 0, []string{ingest.CodeCorruptLine, ingest.CodeNotSession}},
		{"torn header", `{"type":"session","id":"s`, StatusNotSession, 0, []string{ingest.CodeTornFinalRecord, ingest.CodeNotSession}},
		{"only blanks", "\n\n  \n", StatusEmpty, 0, nil},
		{"missing id v3", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"message","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user"}}` + "\n", StatusCorrupt, 3, []string{ingest.CodeMissingID}},
		{"missing parentId v3", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"message","id":"a","timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user"}}` + "\n", StatusCorrupt, 3, []string{ingest.CodeInvalidParentID}},
		{"entry not object", `{"type":"session","version":3,"id":"s"}` + "\n" + `[1]` + "\n", StatusCorrupt, 3, []string{ingest.CodeInvalidEntry}},
		{"entry without type", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"id":"a","parentId":null}` + "\n", StatusCorrupt, 3, []string{ingest.CodeInvalidEntry}},
		{"self parent cycle", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"label","id":"a","parentId":"a","timestamp":"2025-06-01T10:00:01.000Z"}` + "\n", StatusCorrupt, 3, []string{ingest.CodeParentCycle}},
		{"forward reference is fine", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"label","id":"b","parentId":"a","timestamp":"2025-06-01T10:00:01.000Z"}` + "\n" + `{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}` + "\n", StatusNeedsUpgrade, 3, nil},
		{"bad timestamp is a warning", `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"label","id":"a","parentId":null,"timestamp":"yesterday"}` + "\n", StatusNeedsUpgrade, 3, []string{ingest.CodeBadTimestamp}},
		{"torn beats corrupt", `{"type":"session","version":3,"id":"s"}` + "\n" + "oops\n" + msgA + "\n" + `{"type":"mess`, StatusTorn, 3, []string{ingest.CodeCorruptLine, ingest.CodeTornFinalRecord}},
		{"v1 bad compaction index", `{"type":"session","id":"s"}` + "\n" + `{"type":"compaction","timestamp":"2025-06-01T10:00:01.000Z","firstKeptEntryIndex":9}` + "\n", StatusNeedsUpgrade, 1, []string{ingest.CodeBadFirstKept}},
		{"v1 duplicate ids", `{"type":"session","id":"s"}` + "\n" + `{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}` + "\n" + `{"type":"label","id":"a","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z"}` + "\n", StatusCorrupt, 1, []string{ingest.CodeMixedV1, ingest.CodeDuplicateID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.content)
			if res.Status != tt.status {
				t.Errorf("status = %s, want %s (%v)", res.Status, tt.status, res.Issues)
			}
			if res.FormatVersion != tt.version {
				t.Errorf("version = %d, want %d", res.FormatVersion, tt.version)
			}
			var codes []string
			for _, is := range res.Issues {
				codes = append(codes, is.Code)
			}
			if !slices.Equal(codes, tt.codes) {
				t.Errorf("codes = %v, want %v", codes, tt.codes)
			}
		})
	}
}

func TestIssueCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s"}` + "\n")
	for i := 0; i < 500; i++ {
		b.WriteString("garbage\n")
	}
	res := check(t, b.String())
	if len(res.Issues) != MaxListedIssues+1 || res.Issues[len(res.Issues)-1].Code != ingest.CodeTooManyIssues {
		t.Fatalf("issues = %d, last %v", len(res.Issues), res.Issues[len(res.Issues)-1])
	}
	if res.Errors != 500 || res.Status != StatusCorrupt {
		t.Fatalf("errors = %d status %s", res.Errors, res.Status)
	}
}

func FuzzChecker(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":3,"id":"s"}` + "\n" + msgA + "\n" + msgB + "\n"))
	f.Add([]byte(`{"type":"session","id":"s"}` + "\n" + `{"type":"compaction","firstKeptEntryIndex":1}` + "\n"))
	f.Add([]byte(`{"type":"session","version":4,"id":"s","createdAt":"x"}` + "\n" + `{"type":"label","id":"a","parentId":"b"}{"type":"label","id":"b","parentId":"a"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewChecker()
		r := ingest.Reader{MaxDepth: 1}
		st, err := r.Read(context.Background(), strings.NewReader(string(b)), c)
		if err != nil {
			t.Fatal(err)
		}
		res := c.Finish()
		if !slices.Contains(Statuses, res.Status) {
			t.Fatalf("status %q", res.Status)
		}
		if res.Status.IsError() != (res.Errors > 0) {
			t.Fatalf("status %s with %d errors: %v", res.Status, res.Errors, res.Issues)
		}
		for _, is := range res.Issues {
			if is.Line < 0 || is.Line > st.Lines {
				t.Fatalf("issue line %d of %d", is.Line, st.Lines)
			}
		}
	})
}

// TestISOTimeFastPath: the fast path agrees with ParseTime.
func TestISOTimeFastPath(t *testing.T) {
	for _, s := range []string{
		"2025-06-01T10:00:01.000Z", "2025-02-29T10:00:01.000Z", "2024-02-29T10:00:01.000Z", "2025-13-01T10:00:01.000Z",
		"2025-06-31T10:00:01.000Z", "2025-06-30T24:00:01.000Z", "2025-06-01T10:60:01.000Z", "2025-06-01T10:00:61.000Z",
		"2025-06-01T10:00:01.00xZ", "2025-06-01 10:00:01.000Z", "2025-06-01T10:00:01Z", "2025-06-01T10:00:01.000+02:00",
		"2025-00-10T10:00:01.000Z", "2025-06-00T10:00:01.000Z", "yesterday", "",
	} {
		_, err := ParseTime(s)
		if got := isISOTime([]byte(s)); got != (err == nil) {
			t.Errorf("isISOTime(%q) = %v, ParseTime error %v", s, got, err)
		}
	}
}
