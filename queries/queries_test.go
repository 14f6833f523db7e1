package queries

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	src := `-- file comment

-- name: first
-- What the first one does,
-- on two lines.
SELECT 1 -- a comment; with a semicolon
FROM t WHERE s = 'a;b';

-- name: second
SELECT 2

-- name: third
SELECT * FROM ({{second}}) s JOIN ({{second}}) u
`
	got, err := Parse("x.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		{Name: "first", Doc: "What the first one does, on two lines.", SQL: "SELECT 1 -- a comment; with a semicolon\nFROM t WHERE s = 'a;b'", File: "x.sql", Line: 3},
		{Name: "second", SQL: "SELECT 2", File: "x.sql", Line: 9},
		{Name: "third", SQL: "SELECT * FROM (SELECT 2) s JOIN (SELECT 2) u", File: "x.sql", Line: 12},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseErrors(t *testing.T) {
	for name, src := range map[string]string{
		"sql before a name": "SELECT 1\n-- name: a\nSELECT 2",
		"duplicate name":    "-- name: a\nSELECT 1\n-- name: a\nSELECT 2",
		"empty statement":   "-- name: a\n-- only a comment\n",
		"two statements":    "-- name: a\nSELECT 1; SELECT 2",
		"unknown include":   "-- name: a\nSELECT * FROM ({{b}})\n-- name: b\nSELECT 1",
		"self include":      "-- name: a\nSELECT * FROM ({{a}})",
	} {
		if _, err := Parse("x.sql", src); err == nil || !strings.Contains(err.Error(), "x.sql:") {
			t.Errorf("%s: err = %v, want an error naming x.sql and a line", name, err)
		}
	}
}

func TestEmbeddedFiles(t *testing.T) {
	var names []string
	for _, v := range Views() {
		names = append(names, v.Name)
		if v.Doc == "" {
			t.Errorf("view %s has no documentation comment", v.Name)
		}
		if !strings.HasPrefix(CreateView(v), "CREATE OR REPLACE VIEW "+v.Name+" AS\n") {
			t.Errorf("CreateView(%s) = %q", v.Name, CreateView(v))
		}
	}
	for _, required := range []string{"counted_usage", "daily_usage", "session_usage", "model_usage", "unpriced_models", "tool_calls", "rejected_files"} {
		if !contains(names, required) {
			t.Errorf("views.sql lacks %s (has %v)", required, names)
		}
	}
	for _, r := range []string{"cost_source_auto", "cost_source_recorded", "cost_source_calculate"} {
		if !strings.HasPrefix(Rule(r), "CASE WHEN ") || (r == "cost_source_auto" && !strings.Contains(Rule(r), Rule("auto_uses_recorded"))) {
			t.Errorf("rule %s = %q, want a CASE expression", r, Rule(r))
		}
		if !strings.Contains(Export("apply_cost_mode"), Rule(r)) {
			t.Errorf("apply_cost_mode does not apply rules.sql %s", r)
		}
	}
	for _, name := range []string{"report_base", "usage_aggregates"} {
		if Report(name) == "" || strings.Contains(Report(name), "{{") {
			t.Errorf("report fragment %s = %q", name, Report(name))
		}
	}
	for _, s := range ExportStatements() {
		if Export(s.Name) != s.SQL {
			t.Errorf("Export(%s) differs from its statement", s.Name)
		}
		if strings.Contains(s.SQL, "{{") {
			t.Errorf("%s keeps an include: %q", s.Name, s.SQL)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
