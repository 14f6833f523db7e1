package export

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestC30UsageEntries: pi "usage" entries (appendUsage, kind cache_warm)
// and oh-my-pi "model_usage" entries are billed records of kinds
// usage_entry and model_usage, their own kind (purpose) kept in sub_kind,
// in both sinks (SPEC.md §1.4, §4).
func TestC30UsageEntries(t *testing.T) {
	dir := filepath.Join(casesDir, "c30-usage-entries")
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			out := t.TempDir()
			runExport(t, s, out, []string{dir}, nil)
			db := s.open(t, out)
			got := queryStrings(t, db, `SELECT kind, sub_kind, count(*) FROM usage WHERE counted GROUP BY ALL ORDER BY ALL`)
			want := []string{"assistant|∅|2", "model_usage|title|1", "usage_entry|cache_warm|2"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("usage kinds (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, `SELECT session_id, count(*), round(sum(cost_total), 9) FROM usage WHERE counted GROUP BY ALL ORDER BY ALL`)
			want = []string{
				"30a0c001-4e5f-4a6b-8c7d-30a000000001|3|0.016812",
				"30a0c002-4e5f-4a6b-8c7d-30a000000002|2|0.0111",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("per session (-want +got):\n%s", d)
			}
			got = queryStrings(t, db, `SELECT entry_id, provider, model, api, stop_reason FROM usage WHERE kind <> 'assistant' ORDER BY entry_id`)
			want = []string{
				"30a00003|anthropic|claude-sonnet-4-5|∅|∅",
				"30a00004|anthropic|claude-sonnet-4-5|∅|∅",
				"30b00002|anthropic|claude-haiku-4-5|anthropic-messages|stop",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("attribution (-want +got):\n%s", d)
			}
			var unknown int
			queryOne(t, db, `SELECT count(*) FROM ingest_issues WHERE code = 'unknown_entry_type'`, &unknown)
			if unknown != 0 {
				t.Errorf("%d unknown_entry_type issues, want none", unknown)
			}
		})
	}
}
