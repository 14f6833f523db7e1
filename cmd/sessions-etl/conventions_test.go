package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/pricing"
)

func testRoot(t *testing.T) *cobra.Command {
	t.Helper()
	started := false
	ios := &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Now: time.Now, Home: t.TempDir()}
	return newRootCmd(ios, &started)
}

// visible lists the commands a user sees (not help or completion).
func visible(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.HasParent() && c.Parent().Name() == "completion") {
			return
		}
		out = append(out, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return out
}

// exampleArgs splits an example line into the arguments of its first
// sessions-etl invocation (up to a comment, pipe, redirection or &&).
func exampleArgs(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := byte(0), false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			} else {
				cur.WriteByte(c)
			}
			continue
		case c == '\'' || c == '"':
			inQuote, have = c, true
			continue
		case c == '#' || c == '|' || c == '>' || c == '&':
			i = len(line)
			continue
		case c == ' ':
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
			continue
		}
		cur.WriteByte(c)
		have = true
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// TestExamples: every command's help has 3 to 5 examples (the root's and
// report's own included), each a sessions-etl invocation whose command
// and flags exist.
func TestExamples(t *testing.T) {
	root := testRoot(t)
	for _, c := range visible(root) {
		lines := strings.Split(strings.TrimRight(c.Example, "\n"), "\n")
		if c.Example == "" || len(lines) < 3 || len(lines) > 5 {
			t.Errorf("%s: %d examples, want 3 to 5:\n%s", c.CommandPath(), len(lines), c.Example)
			continue
		}
		for _, l := range lines {
			args := exampleArgs(strings.TrimSpace(l))
			if len(args) == 0 || args[0] != "sessions-etl" {
				t.Errorf("%s: example %q is not a sessions-etl invocation", c.CommandPath(), l)
				continue
			}
			found, rest, err := testRoot(t).Find(args[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), l, err)
				continue
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), l, err)
			}
			if found.Name() == "report" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
				t.Errorf("%s: example %q: no report kind %q", c.CommandPath(), l, rest[0])
			}
		}
	}
}

// TestHelpSaysTheRule: help texts state rules, not references to files a
// user of the binary does not have (SPEC.md, source files).
func TestHelpSaysTheRule(t *testing.T) {
	for _, c := range visible(testRoot(t)) {
		var b bytes.Buffer
		c.SetOut(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"SPEC", "§", ".go", "queries/", "package pricing"} {
			if strings.Contains(b.String(), bad) {
				t.Errorf("%s --help mentions %q:\n%s", c.CommandPath(), bad, b.String())
			}
		}
	}
}

// TestVersion: --version and `version` name the version, commit, build
// date and the bundled price table's date; --json is one object.
func TestVersion(t *testing.T) {
	retrieved := pricing.Default().Retrieved
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := runCLI(t, t.TempDir(), args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, want := range []string{"sessions-etl ", "commit:", "built:", "price table:", "retrieved " + retrieved, "MIT"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in:\n%s", args, want, out)
			}
		}
	}
	code, out, _ := runCLI(t, t.TempDir(), "version", "--json")
	var v struct {
		Version string `json:"version"`
		Prices  struct {
			Retrieved string `json:"retrieved"`
		} `json:"prices"`
	}
	if err := json.Unmarshal([]byte(out), &v); code != ExitOK || err != nil || v.Version == "" || v.Prices.Retrieved != retrieved {
		t.Errorf("version --json: exit %d, %v, %+v", code, err, v)
	}
}

// TestReportKindSuggestion: a mistyped report kind is a usage error that
// suggests the right one.
func TestReportKindSuggestion(t *testing.T) {
	for typed, want := range map[string]string{"dialy": "did you mean daily?", "wekly": "did you mean weekly?", "sesion": "did you mean session?"} {
		code, _, errOut := runCLI(t, t.TempDir(), "report", typed)
		if code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("report %s: exit %d, stderr %q; want 2 and %q", typed, code, errOut, want)
		}
	}
}

// TestFlagCompletion: --cost, --source and --tz complete their values.
func TestFlagCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", "daily", "--cost", ""}, []string{"auto", "recorded", "calculate"}},
		{[]string{"export", "--cost", "re"}, []string{"recorded"}},
		{[]string{"report", "daily", "--source", ""}, []string{"pi", "atomic", "prime", "omp", "openclaw", "kimchi", "custom"}},
		{[]string{"report", "daily", "--tz", "Europe/Par"}, []string{"Europe/Paris"}},
	} {
		var out bytes.Buffer
		ios := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}, Now: time.Now, Home: t.TempDir()}
		runWith(context.Background(), ios, append([]string{cobra.ShellCompRequestCmd}, c.args...))
		var got []string
		for _, l := range strings.Split(out.String(), "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, l)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") && !(len(c.want) == 1 && strings.Contains(strings.Join(got, ","), c.want[0])) {
			t.Errorf("%v: completions %q, want %q", c.args, got, c.want)
		}
	}
}

// TestProgName: hints name the program as the user ran it when that was
// a path, so that they work as printed.
func TestProgName(t *testing.T) {
	for arg0, want := range map[string]string{"bin/sessions-etl": "bin/sessions-etl", "./sessions-etl": "./sessions-etl",
		"sessions-etl": "sessions-etl", "/tmp/go-build1/b001/sessions-etl.test": "sessions-etl", "/usr/local/bin/other": "sessions-etl"} {
		if got := progName(arg0); got != want {
			t.Errorf("progName(%q) = %q, want %q", arg0, got, want)
		}
	}
}
