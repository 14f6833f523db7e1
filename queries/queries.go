package queries

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

//go:embed views.sql export.sql rules.sql report.sql
var files embed.FS

// Statement is one named SQL statement.
type Statement struct {
	Name string // identifier after `-- name:`
	Doc  string // the comment lines right after the name line, without "-- "
	SQL  string // the statement, without a trailing semicolon
	File string // the .sql file it comes from
	Line int    // 1-based line of its `-- name:` line
}

var nameLine = regexp.MustCompile(`^--\s*name:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// Parse splits src (the contents of file) into named statements. Text before
// the first name line must be comments or blank. Names must be unique.
// {{name}} includes the SQL of an earlier statement of the file.
func Parse(file string, src string) ([]Statement, error) {
	return ParseWith(file, src, nil)
}

// ParseWith is Parse where {{name}} may also include one of shared (the
// rules of another file, e.g. rules.sql). The result holds src's
// statements only.
func ParseWith(file string, src string, shared []Statement) ([]Statement, error) {
	var out []Statement
	var cur *Statement
	var body []string
	inDoc := false
	seen := map[string]int{}
	finish := func() error {
		if cur == nil {
			return nil
		}
		sql := strings.TrimSpace(strings.Join(body, "\n"))
		sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
		if sql == "" {
			return fmt.Errorf("%s:%d: statement %s is empty", file, cur.Line, cur.Name)
		}
		if strings.Contains(stripComments(sql), ";") {
			return fmt.Errorf("%s:%d: statement %s holds more than one statement", file, cur.Line, cur.Name)
		}
		cur.SQL = sql
		out = append(out, *cur)
		return nil
	}
	for i, line := range strings.Split(src, "\n") {
		if strings.Contains(line, "{{") {
			var err error
			if line, err = expandIncludes(line, append(append([]Statement(nil), shared...), out...), cur); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
			}
		}
		if m := nameLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if err := finish(); err != nil {
				return nil, err
			}
			if prev, dup := seen[m[1]]; dup {
				return nil, fmt.Errorf("%s:%d: statement %s already defined on line %d", file, i+1, m[1], prev)
			}
			seen[m[1]] = i + 1
			cur = &Statement{Name: m[1], File: file, Line: i + 1}
			body = body[:0]
			inDoc = true
			continue
		}
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				return nil, fmt.Errorf("%s:%d: SQL before the first `-- name:` line", file, i+1)
			}
			continue
		}
		if inDoc && strings.HasPrefix(trimmed, "--") {
			d := strings.TrimSpace(strings.TrimPrefix(trimmed, "--"))
			if cur.Doc != "" {
				cur.Doc += " "
			}
			cur.Doc += d
			continue
		}
		inDoc = false
		body = append(body, line)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

var include = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// expandIncludes replaces each {{name}} of line with the SQL of the
// statement called name among done (the statements finished before cur).
func expandIncludes(line string, done []Statement, cur *Statement) (string, error) {
	var err error
	out := include.ReplaceAllStringFunc(line, func(m string) string {
		name := include.FindStringSubmatch(m)[1]
		for _, s := range done {
			if s.Name == name {
				return s.SQL
			}
		}
		if err == nil {
			err = fmt.Errorf("{{%s}}: no statement of that name before this one", name)
			if cur != nil && cur.Name == name {
				err = fmt.Errorf("{{%s}}: a statement cannot include itself", name)
			}
		}
		return m
	})
	return out, err
}

// stripComments removes `--` line comments and string literals, so that a
// semicolon inside them is not taken for a statement separator.
func stripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		inStr := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c == '\'' {
				inStr = !inStr
				continue
			}
			if inStr {
				continue
			}
			if c == '-' && i+1 < len(line) && line[i+1] == '-' {
				break
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func mustParse(file string, shared []Statement) []Statement {
	src, err := files.ReadFile(file)
	if err != nil {
		panic("queries: embedded " + file + " missing: " + err.Error())
	}
	st, err := ParseWith(file, string(src), shared)
	if err != nil {
		panic("queries: " + err.Error())
	}
	return st
}

// The files are parsed on first use, not at program start: every command
// of the binary pays for package initialisation, and the status line must
// start fast (issue 14).
var (
	views  = sync.OnceValue(func() []Statement { return mustParse("views.sql", rules()) })
	export = sync.OnceValue(func() []Statement { return mustParse("export.sql", rules()) })
	rules  = sync.OnceValue(func() []Statement { return mustParse("rules.sql", nil) })
	report = sync.OnceValue(func() []Statement { return mustParse("report.sql", rules()) })
)

func find(st []Statement, kind, name string) Statement {
	for _, s := range st {
		if s.Name == name {
			return s
		}
	}
	panic("queries: no " + kind + " " + name)
}

// Rule returns the SQL expression of rules.sql called name (e.g.
// "cost_source_auto"). It panics when there is none, as Export does.
func Rule(name string) string { return find(rules(), "rule", name).SQL }

// Rules returns every rule of rules.sql in file order.
func Rules() []Statement { return append([]Statement(nil), rules()...) }

// Report returns the fragment of report.sql called name: a piece of the
// report's queries (a CTE body, a select list). It panics when there is
// none, as Export does.
func Report(name string) string { return find(report(), "report fragment", name).SQL }

// ReportFragments returns every fragment of report.sql in file order.
func ReportFragments() []Statement { return append([]Statement(nil), report()...) }

// Views returns the views of views.sql in file order. Each Statement's SQL
// is the view's SELECT; CreateView turns it into DDL.
func Views() []Statement { return append([]Statement(nil), views()...) }

// CreateView returns the DDL that creates (or replaces) the view.
func CreateView(v Statement) string {
	return fmt.Sprintf("CREATE OR REPLACE VIEW %s AS\n%s", v.Name, v.SQL)
}

// Export returns the export maintenance statement called name. It panics
// when there is none: names are compile-time constants of package export,
// checked by its tests.
func Export(name string) string { return find(export(), "export statement", name).SQL }

// ExportStatement returns the export statement called name, with its
// documentation and position. It panics when there is none, as Export does.
func ExportStatement(name string) Statement { return find(export(), "export statement", name) }

// ExportStatements returns every statement of export.sql in file order.
func ExportStatements() []Statement { return append([]Statement(nil), export()...) }
