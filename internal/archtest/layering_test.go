package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sessions-etl/sessions-etl/"

// mayImport is the pipeline as the folders show it (ingest → validate →
// upgrade → migrate | import | export → report → dashboard): each package's
// allowed module-internal imports. A package not listed may import
// nothing of the module. The CLI (cmd/sessions-etl) may import anything
// but internal/testkit.
var mayImport = map[string][]string{
	"session":                       {"ingest"},
	"ingest":                        {"internal/fstx"},
	"validate":                      {"ingest", "internal/pipeline", "session"},
	"upgrade":                       {"ingest", "session", "validate"},
	"migrate":                       {"ingest", "internal/fstx", "internal/pipeline", "session", "upgrade", "validate"},
	"importer":                      {"ingest", "internal/fstx", "internal/pipeline", "session", "upgrade", "validate"},
	"export":                        {"ingest", "internal/fstx", "internal/pipeline", "internal/userdirs", "pricing", "queries", "session", "validate"},
	"report":                        {"export", "ingest", "internal/fstx", "pricing", "queries", "session", "validate"},
	"dashboard":                     {"report"},
	"pricing/internal/gen":          {"pricing"},
	"internal/benchrun":             {"export", "ingest", "pricing", "synth"},
	"internal/ucrtshim/duckdbcheck": {"internal/ucrtshim"},
}

// TestLayering: no package imports (directly) a package of the module it
// may not: importer, export and report never import migrate, nothing but
// the CLI imports a command's package, and no package's own code imports
// internal/testkit.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		seen++
		for _, imp := range f[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			switch {
			case dep == "internal/testkit":
				t.Errorf("%s imports internal/testkit (tests only)", pkg)
			case pkg == "cmd/sessions-etl":
			case !slices.Contains(mayImport[pkg], dep):
				t.Errorf("%s imports %s, which it may not (allowed: %v)", pkg, dep, mayImport[pkg])
			}
		}
	}
	if seen < 15 {
		t.Errorf("go list named %d packages; the module has more", seen)
	}
	// The rule the issue named, by transitive dependencies.
	for _, pkg := range []string{"importer", "export", "report"} {
		out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(strings.Fields(string(out)), module+"migrate") {
			t.Errorf("%s depends on migrate", pkg)
		}
	}
}
