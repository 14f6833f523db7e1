package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestC23OpenClawSidecars is case c23: the live file, a checkpoint and a
// .bak copy, a reset archive and a zstd-compressed deleted archive are
// read (archived and compressed flagged in files), the trajectory file is
// not (a not_a_session_file note); each file's records and which of them
// are copies are as expected.json says, in both sinks.
func TestC23OpenClawSidecars(t *testing.T) {
	dir := filepath.Join(casesDir, "c23-openclaw-sidecars")
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Files map[string]struct {
			Read       bool   `json:"read"`
			Archived   bool   `json:"archived"`
			Compressed string `json:"compressed"`
			Records    *int   `json:"records"`
			Counted    *int   `json:"counted"`
			CopyOf     string `json:"copy_of"`
			Code       string `json:"code"`
			Severity   string `json:"severity"`
		} `json:"files"`
		Group struct {
			Files      []string `json:"files"`
			Rows       int      `json:"rows"`
			Counted    int      `json:"counted"`
			NotCounted int      `json:"not_counted"`
		} `json:"same_header_group"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.Files) != 6 {
		t.Fatalf("expected.json: %d files", len(exp.Files))
	}
	for _, s := range exportSinks(t, []string{dir}, nil) {
		t.Run(s.name, func(t *testing.T) {
			out := s.out
			db := s.open(t, out)
			for rel, want := range exp.Files {
				path := filepath.Join(abs, rel)
				var n int
				queryOne(t, db, "SELECT count(*) FROM files WHERE path = '"+path+"'", &n)
				if !want.Read {
					var code, sev string
					queryOne(t, db, "SELECT count(*) FROM files WHERE path = '"+path+"'", &n)
					queryOne(t, db, "SELECT code, severity FROM ingest_issues WHERE path = '"+path+"' AND file_id IS NULL", &code, &sev)
					if n != 0 || code != want.Code || sev != want.Severity {
						t.Errorf("%s: %d files rows, issue %s %s; want none and %s %s", rel, n, code, sev, want.Code, want.Severity)
					}
					continue
				}
				var archived bool
				var compression *string
				queryOne(t, db, "SELECT archived, compression FROM files WHERE path = '"+path+"'", &archived, &compression)
				gotComp := ""
				if compression != nil {
					gotComp = *compression
				}
				if archived != want.Archived || gotComp != want.Compressed {
					t.Errorf("%s: archived %v compression %q, want %v %q", rel, archived, gotComp, want.Archived, want.Compressed)
				}
				var rows, counted, copies int
				var dupOf *string
				queryOne(t, db, `SELECT count(*), count(*) FILTER (WHERE u.counted), count(*) FILTER (WHERE NOT u.counted), any_value(u.duplicate_of_session_id)
					FROM usage u JOIN files f USING (file_id) WHERE f.path = '`+path+"'", &rows, &counted, &copies, &dupOf)
				if want.Records != nil && rows != *want.Records {
					t.Errorf("%s: %d usage rows, want %d", rel, rows, *want.Records)
				}
				if want.Counted != nil && counted != *want.Counted {
					t.Errorf("%s: %d counted, want %d", rel, counted, *want.Counted)
				}
				if want.CopyOf != "" && copies > 0 && (dupOf == nil || *dupOf != want.CopyOf) {
					t.Errorf("%s: copies of %v, want %s", rel, dupOf, want.CopyOf)
				}
			}
			var rows, counted, notCounted int
			in := ""
			for i, rel := range exp.Group.Files {
				if i > 0 {
					in += ","
				}
				in += "'" + filepath.Join(abs, rel) + "'"
			}
			queryOne(t, db, `SELECT count(*), count(*) FILTER (WHERE u.counted), count(*) FILTER (WHERE NOT u.counted)
				FROM usage u JOIN files f USING (file_id) WHERE f.path IN (`+in+")", &rows, &counted, &notCounted)
			if rows != exp.Group.Rows || counted != exp.Group.Counted || notCounted != exp.Group.NotCounted {
				t.Errorf("same-header group: rows %d counted %d not %d, want %d %d %d", rows, counted, notCounted,
					exp.Group.Rows, exp.Group.Counted, exp.Group.NotCounted)
			}
			var ids int
			queryOne(t, db, `SELECT count(DISTINCT entry_id) FROM usage u JOIN files f USING (file_id) WHERE u.counted AND f.path IN (`+in+")", &ids)
			if ids != exp.Group.Counted {
				t.Errorf("same-header group: %d distinct counted entries, want %d (each once)", ids, exp.Group.Counted)
			}
		})
	}
}
