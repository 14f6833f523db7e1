package report

import (
	"path/filepath"
	"testing"
)

// TestC30SessionReport: usage and model_usage entries are in the session
// report's records and costs (their sessions' totals include them, as pi's
// own session totals do).
func TestC30SessionReport(t *testing.T) {
	dir := filepath.Join(casesDir, "c30-usage-entries")
	r := runOnDB(t, Session, filepath.Join(t.TempDir(), "r.duckdb"), []string{dir}, nil)
	want := map[string]struct {
		records int64
		cost    float64
	}{
		"30a0c001-4e5f-4a6b-8c7d-30a000000001": {3, 0.016812},
		"30a0c002-4e5f-4a6b-8c7d-30a000000002": {2, 0.0111},
	}
	if len(r.Rows) != len(want) {
		t.Fatalf("%d session rows, want %d", len(r.Rows), len(want))
	}
	for _, row := range r.Rows {
		w, ok := want[row.Key]
		if !ok {
			t.Errorf("unexpected session %q", row.Key)
			continue
		}
		if row.Records != w.records || relDiff(row.Cost, w.cost) > 1e-9 || !row.Complete() {
			t.Errorf("session %s: %d records $%v (complete %v), want %d records $%v", row.Key, row.Records, row.Cost, row.Complete(), w.records, w.cost)
		}
	}
}
