package ingest_test

import (
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// TestTempPrefixMatchesIngest: discovery skips exactly the temporary files
// this package makes.
func TestTempPrefixMatchesIngest(t *testing.T) {
	if fstx.TempPrefix != ingest.TempPrefix {
		t.Fatalf("fstx.TempPrefix %q, ingest.TempPrefix %q", fstx.TempPrefix, ingest.TempPrefix)
	}
}
