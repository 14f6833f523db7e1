package report

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ProblemFile is a session file (or a path) the report could not use whole
// (SPEC.md §7.6): rejected (not used at all: not a session, an unknown
// version, unreadable) or salvaged (damaged, its complete records used:
// torn, corrupt, a header behind a byte-order mark).
type ProblemFile struct {
	Path   string
	Status string
	// Codes are the distinct error codes of the file, in the order of
	// their first line; Lines the distinct 1-based lines of those errors
	// (0: the whole file), ascending.
	Codes []string
	Lines []int
}

// Files are the files a report left out or used only in part.
type Files struct {
	Rejected []ProblemFile
	Salvaged []ProblemFile
}

// problemSQL lists, with every error issue, the rejected files and paths
// (rejected true: the rows of the rejected_files view — files not empty
// with no session row, and the paths discovery could not read) and the
// salvaged files (rejected false: session rows, but a damaged status). One
// query over the tables (not the view): a warm report pays for it.
const problemSQL = `SELECT f.status IN ('current', 'needs_upgrade') OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.file_id = f.file_id),
       f.path, f.status, i.code, i.line_no
FROM files f
LEFT JOIN ingest_issues i ON i.file_id = f.file_id AND i.severity = 'error'
WHERE f.status NOT IN ('current', 'needs_upgrade', 'empty')
   OR (f.status <> 'empty' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.file_id = f.file_id))
UNION ALL
SELECT true, path, 'unreadable', code, line_no FROM ingest_issues WHERE file_id IS NULL AND severity = 'error'
ORDER BY 2, 5 NULLS FIRST, 4`

// problemFiles reads the rejected and salvaged files of the database.
func problemFiles(ctx context.Context, db *sql.DB) (Files, error) {
	fs := Files{Rejected: []ProblemFile{}, Salvaged: []ProblemFile{}}
	rows, err := db.QueryContext(ctx, problemSQL)
	if err != nil {
		return fs, fmt.Errorf("rejected and salvaged files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rejected bool
		var path, status string
		var code sql.NullString
		var line sql.NullInt64
		if err := rows.Scan(&rejected, &path, &status, &code, &line); err != nil {
			return fs, err
		}
		list := &fs.Salvaged
		if rejected {
			list = &fs.Rejected
		}
		out := *list
		if n := len(out); n == 0 || out[n-1].Path != path {
			out = append(out, ProblemFile{Path: path, Status: status, Codes: []string{}, Lines: []int{}})
		}
		f := &out[len(out)-1]
		if code.Valid && !slices.Contains(f.Codes, code.String) {
			f.Codes = append(f.Codes, code.String)
		}
		if code.Valid && !slices.Contains(f.Lines, int(line.Int64)) {
			f.Lines = append(f.Lines, int(line.Int64))
		}
		*list = out
	}
	return fs, rows.Err()
}

// Summary is the stderr note of SPEC.md §7.6: one line per kind of
// problem, e.g. "3 files not used (2 future_version, 1 not_session) — see:
// sessions-etl validate" and "2 damaged files used in part (1 torn, 1
// corrupt) — see: sessions-etl validate"; none when every file was used.
// prog is how the user runs the tool ("" is "sessions-etl"; e.g.
// "bin/sessions-etl" when it is not on PATH), so that the hint works as
// printed.
func (fs Files) Summary(prog string) []string {
	if prog == "" {
		prog = "sessions-etl"
	}
	var out []string
	if n := len(fs.Rejected); n > 0 {
		out = append(out, fmt.Sprintf("%d %s not used (%s) — see: %s validate", n, filesWord(n), byStatus(fs.Rejected), prog))
	}
	if n := len(fs.Salvaged); n > 0 {
		out = append(out, fmt.Sprintf("%d damaged %s used in part (%s) — see: %s validate", n, filesWord(n), byStatus(fs.Salvaged), prog))
	}
	return out
}

func filesWord(n int) string {
	if n == 1 {
		return "file"
	}
	return "files"
}

// statusOrder is the order of statuses in the summary lines (SPEC.md
// §7.6's examples: "2 future_version, 1 not_session", "1 torn, 1
// corrupt"); other statuses follow by name.
var statusOrder = []string{"future_version", "unrecognized_version", "not_session", "unreadable", "torn", "corrupt"}

// byStatus counts files per status: "1 torn, 2 corrupt".
func byStatus(fs []ProblemFile) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Status]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	rank := func(s string) int {
		if i := slices.Index(statusOrder, s); i >= 0 {
			return i
		}
		return len(statusOrder)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := rank(keys[i]), rank(keys[j]); a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}
