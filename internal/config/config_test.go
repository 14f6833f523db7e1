package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

func TestLoadValid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	src := `# sessions-etl
[defaults]
tz = "Europe/Paris"
cost = "calculate"
pricing = "prices.json"

[[stores]]
name = "work"
path = "~/work/pi-sessions"
source = "pi"

[[stores]]
name = "laptop-omp"
path = "/mnt/laptop/.omp/agent/sessions"

[budgets]
daily = 10
weekly = 50.5
monthly = 150.0

[budgets.projects."web/src"]
monthly = 40.0

[budgets.projects.api]
daily = 2
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != path || c.Defaults.TZ != "Europe/Paris" || c.Defaults.Cost != "calculate" || c.Defaults.Pricing != filepath.Join(dir, "prices.json") {
		t.Errorf("defaults: %+v (path %s)", c.Defaults, c.Path)
	}
	want := []Store{{"work", "/home/u/work/pi-sessions", "pi"}, {"laptop-omp", "/mnt/laptop/.omp/agent/sessions", ""}}
	if !slices.Equal(c.Stores, want) {
		t.Errorf("stores %+v, want %+v", c.Stores, want)
	}
	b := c.Budgets
	if *b.Daily != 10 || *b.Weekly != 50.5 || *b.Monthly != 150 {
		t.Errorf("budgets %v %v %v", *b.Daily, *b.Weekly, *b.Monthly)
	}
	if p := b.Projects["web/src"]; p.Monthly == nil || *p.Monthly != 40 || p.Daily != nil || p.Weekly != nil {
		t.Errorf("web/src budget %+v", p)
	}
	if p := b.Projects["api"]; p.Daily == nil || *p.Daily != 2 || p.Monthly != nil {
		t.Errorf("api budget %+v", p)
	}
	if len(c.Unknown) != 0 {
		t.Errorf("unknown keys %v", c.Unknown)
	}
}

func TestLoadMissing(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "nope", "config.toml"), "/h")
	if err != nil || c.Path != "" || len(c.Stores) != 0 || c.Budgets.Daily != nil || c.Defaults != (Defaults{}) {
		t.Errorf("missing file: %+v, %v; want an empty config", c, err)
	}
}

// TestUnknownKeys: keys this version does not know are listed (the CLI
// warns and goes on), not an error: a newer file stays usable.
func TestUnknownKeys(t *testing.T) {
	c, err := Parse("/c/config.toml", []byte("colour = true\n[defaults]\ntz = \"UTC\"\nzone = \"x\"\n[[stores]]\nname = \"a\"\npth = \"/x\"\npath = \"/y\"\n"), "/h")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"colour", "defaults.zone", "stores.pth"}
	if !slices.Equal(c.Unknown, want) {
		t.Errorf("unknown %q, want %q", c.Unknown, want)
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"syntax", "[defaults]\ntz = \"UTC\"\ncost = auto\n", 3, ""},
		{"unterminated", "[budgets]\ndaily = 3\n[[stores]\n", 3, ""},
		{"duplicate key", "[defaults]\ntz = \"a\"\ntz = \"b\"\n", 3, "tz"},
		{"type", "[budgets]\n\ndaily = \"ten\"\n", 3, ""},
		{"cost", "[defaults]\ncost = \"cheap\"\n", 0, "defaults.cost"},
		{"store without path", "[[stores]]\nname = \"a\"\n", 0, "stores[0].path"},
		{"store without name", "[[stores]]\npath = \"/a\"\n", 0, "stores[0].name"},
		{"store kind", "[[stores]]\nname = \"a\"\npath = \"/a\"\nsource = \"claude\"\n", 0, "stores[0].source"},
		{"negative budget", "[budgets.projects.web]\nweekly = -1\n", 0, `budgets.projects."web".weekly`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("/c/config.toml", []byte(tc.src), "/h")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *config.Error", err)
			}
			if ce.Path != "/c/config.toml" || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("error %q (line %d), want line %d mentioning %q", err, ce.Line, tc.line, tc.msg)
			}
			if tc.line > 0 && !strings.HasPrefix(err.Error(), "config /c/config.toml:"+itoa(tc.line)+": ") {
				t.Errorf("message %q does not start with the file and line", err)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDefaultPath(t *testing.T) {
	if got := DefaultPath("/h", ""); got != "/h/.config/sessions-etl/config.toml" {
		t.Errorf("no XDG: %s", got)
	}
	if got := DefaultPath("/h", "/x"); got != "/x/sessions-etl/config.toml" {
		t.Errorf("XDG: %s", got)
	}
	if got := DefaultPath("/h", "rel"); got != "/h/.config/sessions-etl/config.toml" {
		t.Errorf("relative XDG (ignored, as the spec says): %s", got)
	}
}
