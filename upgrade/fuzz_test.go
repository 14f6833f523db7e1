package upgrade

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/validate"
)

// casesDir holds the shared cases.
const casesDir = "../testdata/cases"

// FuzzPlan plans and applies a migration of arbitrary bytes: it must never
// panic, a plan must produce a file that validates as current v4 with the
// same entries, and migrating that result again must change nothing.
func FuzzPlan(f *testing.F) {
	for _, c := range []string{"c05-v1-linear-with-compaction-index/session.jsonl", "c06-v2-hook-message/session.jsonl",
		"c16-concatenated-records/session.jsonl", "c18-mixed-v1/session.jsonl", "c09-crlf-line-endings/session.jsonl",
		"c01-torn-final-record/session.jsonl", "c02-final-record-without-newline/session.jsonl"} {
		b, err := os.ReadFile(filepath.Join(casesDir, c))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
	}
	f.Add([]byte(`{"type":"session","version":4,"id":"s","timestamp":"t","createdAt":"t","parentSession":"/x/a_b.jsonl"}`+"\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, repair bool) {
		opts := PlanOptions{Repair: repair, ResolveParent: func(p string) (string, bool) { return "parent-id", p != "" }}
		plan, err := PlanFile(context.Background(), bytes.NewReader(data), int64(len(data)), opts)
		var se *SkipError
		if errors.As(err, &se) {
			return
		}
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		var out bytes.Buffer
		if err := Apply(&out, bytes.NewReader(data), plan); err != nil {
			t.Fatalf("apply: %v", err)
		}
		if !plan.NeedsWrite() {
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("a plan without edits changed the bytes")
			}
			return
		}
		c := validate.NewChecker()
		rd := ingest.Reader{MaxDepth: 1}
		if _, err := rd.Read(context.Background(), bytes.NewReader(out.Bytes()), c); err != nil {
			t.Fatal(err)
		}
		res := c.Finish()
		if res.Status != validate.StatusCurrent || res.Entries != plan.Entries {
			t.Fatalf("migrated file is %s with %d entries (want current, %d): %v\n%q", res.Status, res.Entries, plan.Entries, res.Issues, out.Bytes())
		}
		again, err := PlanFile(context.Background(), bytes.NewReader(out.Bytes()), int64(out.Len()), opts)
		if err != nil || again.NeedsWrite() {
			t.Fatalf("second migration not a no-op: %v %+v", err, again)
		}
	})
}
