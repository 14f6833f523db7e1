package session

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/uuid"
)

// TestDerivedEntryID pins the v1→v2 ids to their definition (SPEC.md §2.1):
// the first 8 hex digits of the name-based SHA-1 UUID of "session/seq" (or
// "session/seq/attempt"); files migrated by earlier versions must keep
// matching. IsDerivedEntryID recognizes first attempts only.
func TestDerivedEntryID(t *testing.T) {
	for _, sid := range []string{"s1", "0f3c2a1e-aaaa-bbbb-cccc-000000000000", "", "é/\x00"} {
		for seq := 0; seq < 300; seq++ {
			for attempt := 0; attempt < 3; attempt++ {
				name := sid + "/" + strconv.Itoa(seq)
				if attempt > 0 {
					name += "/" + strconv.Itoa(attempt)
				}
				u := uuid.NewSHA1(entryIDNamespace, []byte(name))
				want := fmt.Sprintf("%x", u[:4])
				got := DerivedEntryID(sid, seq, attempt)
				if got != want {
					t.Fatalf("DerivedEntryID(%q, %d, %d) = %s, want %s", sid, seq, attempt, got, want)
				}
				if is := IsDerivedEntryID(got, sid, seq); is != (attempt == 0) {
					t.Fatalf("IsDerivedEntryID(%s, %q, %d) = %v for attempt %d", got, sid, seq, is, attempt)
				}
			}
			if IsDerivedEntryID(DerivedEntryID(sid, seq, 0), sid, seq+1) || IsDerivedEntryID(DerivedEntryID(sid, seq, 0), sid+"x", seq) {
				t.Fatalf("IsDerivedEntryID accepts the id of another position or session")
			}
		}
	}
	for _, id := range []string{"", "1234567", "123456789", "ABCDEF01"} {
		if IsDerivedEntryID(id, "abc", 1) {
			t.Errorf("IsDerivedEntryID(%q) = true", id)
		}
	}
}
