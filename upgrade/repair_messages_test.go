package upgrade

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func repairsOf(t *testing.T, data string, opts PlanOptions) []string {
	t.Helper()
	opts.Repair = true
	plan, err := PlanFile(context.Background(), bytes.NewReader([]byte(data)), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range plan.Repairs {
		out = append(out, r.What)
	}
	return out
}

const (
	rmHdr = `{"type":"session","version":3,"id":"s","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/w"}` + "\n"
	rmE1  = `{"type":"message","id":"e1","parentId":null,"timestamp":"2025-09-01T10:00:01.000Z","message":{"role":"user","content":"a"}}`
	rmE2  = `{"type":"message","id":"e2","parentId":"e1","timestamp":"2025-09-01T10:00:02.000Z","message":{"role":"user","content":"b"}}`
)

// TestRepairWhitespaceGapIsNotAFragment: whitespace between two glued
// records is not "an unrecoverable fragment"; a real fragment still is.
func TestRepairWhitespaceGapIsNotAFragment(t *testing.T) {
	got := repairsOf(t, rmHdr+rmE1+" \t  "+rmE2+"\n", PlanOptions{})
	if len(got) != 1 || strings.Contains(got[0], "fragment") {
		t.Errorf("whitespace gap: %q, want one split without a dropped fragment", got)
	}
	got = repairsOf(t, rmHdr+rmE1+` {"type":"mes `+rmE2+"\n", PlanOptions{})
	if len(got) != 1 || !strings.Contains(got[0], "dropped an unrecoverable fragment (kept in the backup)") {
		t.Errorf("fragment gap: %q, want a dropped fragment", got)
	}
}

// TestRepairMessagesSayWhereRemovedBytesAre: the messages of repairs that
// remove bytes name where those bytes remain (PlanOptions.RemovedKept), and
// a torn fragment names its line.
func TestRepairMessagesSayWhereRemovedBytesAre(t *testing.T) {
	torn := rmHdr + rmE1 + "\n" + `{"type":"message","id":"e2"`
	plan, err := PlanFile(context.Background(), strings.NewReader(torn), int64(len(torn)), PlanOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Repairs) != 1 || plan.Repairs[0].Line != 3 || !strings.Contains(plan.Repairs[0].What, "kept in the backup") {
		t.Errorf("torn tail: %+v, want line 3, kept in the backup", plan.Repairs)
	}
	got := repairsOf(t, torn, PlanOptions{RemovedKept: "the source file keeps it"})
	if len(got) != 1 || !strings.Contains(got[0], "(27 bytes, the source file keeps it)") || strings.Contains(got[0], "backup") {
		t.Errorf("torn tail, import: %q", got)
	}
	got = repairsOf(t, rmHdr+rmE1+`{"type":"mes`+"\n"+rmE2+"\n", PlanOptions{RemovedKept: "the source file keeps it"})
	if len(got) != 1 || !strings.HasSuffix(got[0], "(the source file keeps it)") {
		t.Errorf("glued fragment, import: %q", got)
	}
}
