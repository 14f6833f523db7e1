package report

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A refreshing report is answered on the ingest's own DuckDB instance
// (export.Options.Then); the same report read back from the file (NoRefresh,
// a read-only instance) must be identical, for every kind, cold and warm.
func TestAnswerOnIngestInstance(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	home, _ := synthFixture(t)
	for _, k := range append(append([]Kind{}, usageKinds...), Tools) {
		db := filepath.Join(t.TempDir(), "r.duckdb")
		cold := runOnDB(t, k, db, []string{home}, nil)
		if cold.Ingest == nil || cold.Ingest.Read == 0 {
			t.Fatalf("%s: cold run read no file: %+v", k, cold.Ingest)
		}
		warm := runOnDB(t, k, db, []string{home}, nil)
		if warm.Ingest == nil || warm.Ingest.Read != 0 {
			t.Fatalf("%s: warm run read files again: %+v", k, warm.Ingest)
		}
		read := runOnDB(t, k, db, []string{home}, func(o *Options) { o.NoRefresh = true })
		if len(read.Rows)+len(read.ToolRows) == 0 {
			t.Fatalf("%s: empty report", k)
		}
		ignore := cmp.Options{cmpopts.IgnoreFields(Report{}, "Ingest", "Pricing"), cmp.Exporter(func(reflect.Type) bool { return true })}
		if d := cmp.Diff(read, cold, ignore); d != "" {
			t.Errorf("%s: cold report differs from the file's (-file +cold):\n%s", k, d)
		}
		if d := cmp.Diff(read, warm, ignore); d != "" {
			t.Errorf("%s: warm report differs from the file's (-file +warm):\n%s", k, d)
		}
	}
}
