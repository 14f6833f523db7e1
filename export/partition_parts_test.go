package export

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestSharedRootPublishParts: a machine whose tables are bigger than
// publishPartBytes is published by several sorted COPYs over file id
// ranges (part files of their own in the same partition directories).
// The root then holds the same rows as a publish in one COPY per table,
// every part file is in its table's order, and the usage totals are the
// home's.
func TestSharedRootPublishParts(t *testing.T) {
	home := t.TempDir()
	// Five sessions: session k has k+2 records, one in March 2026 and
	// k+1 in April (machineHome's shape, five files).
	for k := range 5 {
		stamps := []string{"2026-03-15T12:00:00.000Z"}
		for i := 0; i <= k; i++ {
			stamps = append(stamps, fmt.Sprintf("2026-04-%02dT08:00:00.000Z", i+1))
		}
		writeFile(t, filepath.Join(home, fmt.Sprintf("s%d.jsonl", k)), teamSession(fmt.Sprintf("%08d-0000-4000-8000-000000000000", k), stamps...))
	}
	wantIn := int64(0)
	for k := range 5 {
		wantIn += 100
		for i := 1; i <= k+1; i++ {
			wantIn += int64(100 + i)
		}
	}
	for _, by := range []string{PartitionMonth, PartitionMachine} {
		t.Run(by, func(t *testing.T) {
			whole, parts := t.TempDir(), t.TempDir()
			if err := exportMachine(t, whole, t.TempDir(), "a", by, home, nil); err != nil {
				t.Fatal(err)
			}
			old := publishPartBytes
			publishPartBytes = 1 // every table: one COPY per file
			defer func() { publishPartBytes = old }()
			if err := exportMachine(t, parts, t.TempDir(), "a", by, home, nil); err != nil {
				t.Fatal(err)
			}
			db := rawDuckDB(t)
			rowsOf := func(root, table string) string {
				return fmt.Sprintf("FROM read_parquet('%s', hive_partitioning = true, union_by_name = true) t",
					filepath.Join(root, table, "**", "*.parquet"))
			}
			for _, tb := range Tables {
				var n1, n2 int64
				var h1, h2 string
				q := "SELECT count(*), coalesce(md5(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR))), '') "
				queryOne(t, db, q+rowsOf(whole, tb.Name), &n1, &h1)
				queryOne(t, db, q+rowsOf(parts, tb.Name), &n2, &h2)
				if n1 != n2 || h1 != h2 {
					t.Errorf("%s: %d rows (%s) published in parts; %d (%s) in one COPY", tb.Name, n2, h2, n1, h1)
				}
				files, _ := filepath.Glob(filepath.Join(parts, tb.Name, "machine=a", "*.parquet"))
				more, _ := filepath.Glob(filepath.Join(parts, tb.Name, "machine=a", "*", "*.parquet"))
				files = append(files, more...)
				if tb == UsageTable && len(files) < 5 {
					t.Errorf("usage published in %d files; want one per session file (5) at least", len(files))
				}
				// Each part file is in the table's order (file ids
				// increase from one row to the next or stay).
				for _, f := range files {
					var unordered int64
					queryOne(t, db, fmt.Sprintf(`SELECT count(*) FROM (SELECT file_id, lag(file_id) OVER (ORDER BY file_row_number) AS prev
						FROM read_parquet('%s', file_row_number = true)) WHERE file_id < prev`, f), &unordered)
					if unordered != 0 {
						t.Errorf("%s: %d rows out of file id order", f, unordered)
					}
				}
			}
			// Every part file carries the export's one id, and
			// OpenRoots (which checks them) reads the root.
			ids := map[string]bool{}
			for _, tb := range Tables {
				files, _ := filepath.Glob(filepath.Join(parts, tb.Name, "machine=a", "*.parquet"))
				more, _ := filepath.Glob(filepath.Join(parts, tb.Name, "machine=a", "*", "*.parquet"))
				for _, f := range append(files, more...) {
					id, ok := ExportIDOf(filepath.Base(f))
					if !ok || id == "" {
						t.Errorf("%s: no export id in the name", f)
					}
					ids[id] = true
				}
			}
			if len(ids) != 1 {
				t.Errorf("export ids %v; want one", ids)
			}
			rdb, err := OpenRoots(t.Context(), []string{parts}, "")
			if err != nil {
				t.Fatalf("OpenRoots: %v", err)
			}
			var counted int64
			queryOne(t, rdb, "SELECT count(*) FROM usage WHERE counted", &counted)
			rdb.Close()
			if counted != 5+(1+2+3+4+5) {
				t.Errorf("OpenRoots: %d counted records; want %d", counted, 5+15)
			}
			var n, in int64
			queryOne(t, db, "SELECT count(*), sum(input) "+rowsOf(parts, "usage"), &n, &in)
			if n != 5+(1+2+3+4+5) || in != wantIn {
				t.Errorf("usage: %d records, input %d; want %d, %d", n, in, 5+15, wantIn)
			}
		})
	}
}
