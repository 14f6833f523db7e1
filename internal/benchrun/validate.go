package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/synth"
)

func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		return []stage{
			{name: "validate", compare: "duckdb read_json usage", argv: []string{bin, "validate", "--json", "--quiet", home}, okExit: []int{1}},
			{name: "duckdb read_json usage", argv: []string{"", "child:duckdb-usage", home}},
		}
	})
	childModes["duckdb-usage"] = duckdbUsage
}

// duckdbUsage is DuckDB's own pass over the home: read_json on every
// session file, summing the assistant usage (the comparison issue 2 asks for).
func duckdbUsage(args []string) error {
	db, err := export.OpenDB("")
	if err != nil {
		return err
	}
	defer db.Close()
	q := fmt.Sprintf(`SELECT count(*), sum(u.input), sum(u.output), sum(u.cacheRead), sum(u.cacheWrite), sum(u.cost.total)
FROM (SELECT message.usage AS u FROM read_json('%s/**/*.jsonl', format='newline_delimited',
  columns={'type': 'VARCHAR', 'message': 'STRUCT(role VARCHAR, usage STRUCT(input BIGINT, output BIGINT, cacheRead BIGINT, cacheWrite BIGINT, totalTokens BIGINT, cost STRUCT(total DOUBLE)))'},
  ignore_errors=true, maximum_object_size=536870912)) WHERE u IS NOT NULL`, args[0])
	var n int64
	var in, out, cr, cw sql.NullInt64
	var cost sql.NullFloat64
	if err := db.QueryRow(q).Scan(&n, &in, &out, &cr, &cw, &cost); err != nil {
		return err
	}
	fmt.Printf("records=%d input=%d output=%d cache_read=%d cache_write=%d cost=%.4f\n", n, in.Int64, out.Int64, cr.Int64, cw.Int64, cost.Float64)
	return nil
}

func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		return []stage{{name: "validate agrees with manifest", argv: []string{"", "child:check-validate", bin, home}}}
	})
	childModes["check-validate"] = checkValidate
}

// checkValidate runs `validate --json` and compares every file's status,
// format version and issue codes with the generator's manifest.
func checkValidate(args []string) error {
	bin, home := args[0], args[1]
	m, err := synth.LoadManifest(filepath.Join(home, "manifest.json"))
	if err != nil {
		return err
	}
	want := map[string]synth.File{}
	for _, f := range m.Files {
		want[filepath.Join(home, filepath.FromSlash(f.Path))] = f
	}
	out, err := exec.Command(bin, "validate", "--json", "--quiet", home).Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return err
	}
	agree, total := 0, 0
	var bad []string
	for _, line := range bytes.Split(out, []byte("\n")) {
		var v struct {
			Path          string `json:"path"`
			Status        string `json:"status"`
			FormatVersion *int   `json:"format_version"`
			Issues        []struct {
				Code string `json:"code"`
			} `json:"issues"`
		}
		if len(line) == 0 || bytes.HasPrefix(line, []byte(`{"summary"`)) {
			continue
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		total++
		f, ok := want[v.Path]
		if !ok {
			bad = append(bad, "not in manifest: "+v.Path)
			continue
		}
		codes := map[string]bool{}
		for _, is := range v.Issues {
			codes[is.Code] = true
		}
		same := v.Status == f.Status && len(codes) == len(f.Codes) && eqVersion(v.FormatVersion, f.FormatVersion)
		for _, c := range f.Codes {
			same = same && codes[c]
		}
		// pi's agent directory also holds other JSONL files: discovery
		// passes over them with a note instead of validating them.
		if v.Status == "skipped" && codes[ingest.CodeNotASessionFile] && f.Status == "not_session" {
			same = true
		}
		if same {
			agree++
		} else {
			bad = append(bad, fmt.Sprintf("%s: %s %v, manifest %s %v", f.Path, v.Status, codes, f.Status, f.Codes))
		}
	}
	if total != len(m.Files) {
		bad = append(bad, fmt.Sprintf("validate reported %d files, manifest has %d", total, len(m.Files)))
	}
	fmt.Printf("validate agrees with the manifest on %d of %d files\n", agree, len(m.Files))
	if len(bad) > 0 {
		return fmt.Errorf("%d disagreements, first: %s", len(bad), bad[0])
	}
	return nil
}

func eqVersion(a, b *int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
