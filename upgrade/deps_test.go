package upgrade

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRules: the package graph issue 12 asks for, from `go list
// -deps` (the packages each one links, its imports' imports included):
// importer and export upgrade or write sessions without migrate, and the
// planner depends on no pipeline stage (doc.go of each package). On the
// tree before package upgrade existed, importer imported migrate.
func TestDependencyRules(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: the dependency rules need `go list`")
	}
	const mod = "github.com/sessions-etl/sessions-etl/"
	for _, rule := range []struct {
		pkg       string
		forbidden []string
	}{
		{"importer", []string{"migrate"}},
		{"export", []string{"migrate", "importer"}},
		{"upgrade", []string{"migrate", "importer", "export", "report"}},
	} {
		out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", mod+rule.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", rule.pkg, err)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[p] = true
		}
		if !deps[mod+rule.pkg] {
			t.Fatalf("go list -deps %s does not list the package itself:\n%s", rule.pkg, out)
		}
		for _, f := range rule.forbidden {
			if deps[mod+f] {
				t.Errorf("%s depends on %s", rule.pkg, f)
			}
		}
	}
}
