package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the content of the configuration file.
type Config struct {
	// Path is the file it was read from ("" when there was none).
	Path     string
	Defaults Defaults
	Stores   []Store
	Budgets  Budgets
	// Unknown lists the keys the file has that this version does not
	// know (dotted, as "stores.0.pth"): they are ignored, and the CLI warns.
	Unknown []string
}

// Defaults replace the built-in defaults of flags; a flag given on the
// command line wins.
type Defaults struct {
	TZ      string `toml:"tz"`      // --tz: an IANA zone name
	Cost    string `toml:"cost"`    // --cost: auto, recorded or calculate
	Pricing string `toml:"pricing"` // --pricing: a price table file (~ expanded, relative to the config file)
}

// Store is a named store of session files, read with no PATH beside the
// built-in ones.
type Store struct {
	Name   string `toml:"name"`   // its files' source label
	Path   string `toml:"path"`   // a directory (~ expanded, relative to the config file)
	Source string `toml:"source"` // the agent that writes it: pi, atomic, prime, omp, openclaw, kimchi, or ""
}

// Budgets are spending limits in USD (SPEC.md §7.8); nil means none.
type Budgets struct {
	Daily    *float64                 `toml:"daily"`
	Weekly   *float64                 `toml:"weekly"`
	Monthly  *float64                 `toml:"monthly"`
	Projects map[string]PeriodBudgets `toml:"projects"` // by project label, suffix or cwd
}

// PeriodBudgets are one project's limits in USD per period; nil means none.
type PeriodBudgets struct {
	Daily   *float64 `toml:"daily"`
	Weekly  *float64 `toml:"weekly"`
	Monthly *float64 `toml:"monthly"`
}

// Kinds are the values Store.Source accepts (besides "").
var Kinds = []string{"pi", "atomic", "prime", "omp", "openclaw", "kimchi"}

// Costs are the values Defaults.Cost accepts (besides "").
var Costs = []string{"auto", "recorded", "calculate"}

// DefaultPath is where the file is looked for: $XDG_CONFIG_HOME (when set
// to an absolute path) or home/.config, then sessions-etl/config.toml.
func DefaultPath(home, xdgConfigHome string) string {
	dir := filepath.Join(home, ".config")
	if filepath.IsAbs(xdgConfigHome) {
		dir = xdgConfigHome
	}
	return filepath.Join(dir, "sessions-etl", "config.toml")
}

// Error is a configuration file that cannot be used: TOML that does not
// parse, or a value out of range. Line is 0 when unknown.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config %s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("config %s: %s", e.Path, e.Msg)
}

// Load reads the file at path; home expands a leading ~ in paths. A file
// that does not exist gives an empty Config and no error.
func Load(path, home string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	return Parse(path, raw, home)
}

// decodeErr is the library's message for a value it cannot store.
var decodeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// Parse reads a configuration from raw (path names it in errors and
// anchors relative paths).
func Parse(path string, raw []byte, home string) (*Config, error) {
	c := &Config{Path: path}
	md, err := toml.Decode(string(raw), c)
	if err != nil {
		e := &Error{Path: path, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Msg = pe.Position.Line, pe.Message
			if st := pe.Position.Start; st >= 0 && st < len(raw) {
				// The line of the offending byte: a newline where a
				// delimiter was expected belongs to the line it ends.
				e.Line = 1 + bytes.Count(raw[:st], []byte("\n"))
			}
			if pe.LastKey != "" {
				e.Msg += fmt.Sprintf(" (key %s)", pe.LastKey)
			}
		} else if m := decodeErr.FindStringSubmatch(err.Error()); m != nil {
			// A value of the wrong type: "toml: line 3 (last key "x"): …".
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = m[3] + " (key " + m[2] + ")"
		}
		e.Msg = strings.TrimPrefix(e.Msg, "toml: ")
		return nil, e
	}
	for _, k := range md.Undecoded() {
		c.Unknown = append(c.Unknown, k.String())
	}
	// Path is not a key of the file: a "Path" key would be unknown.
	c.Path = path
	if err := c.check(md, home); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates the values and resolves paths.
func (c *Config) check(md toml.MetaData, home string) error {
	fail := func(msg string, key ...string) error {
		e := &Error{Path: c.Path, Msg: msg}
		if len(key) > 0 {
			// MetaData has no positions for values; name the key instead.
			e.Msg = "key " + strings.Join(key, ".") + ": " + msg
		}
		return e
	}
	if c.Defaults.Cost != "" && !slices.Contains(Costs, c.Defaults.Cost) {
		return fail(fmt.Sprintf("%q: want %s", c.Defaults.Cost, strings.Join(Costs, ", ")), "defaults", "cost")
	}
	if c.Defaults.Pricing != "" {
		c.Defaults.Pricing = c.resolve(c.Defaults.Pricing, home)
	}
	for i := range c.Stores {
		s := &c.Stores[i]
		key := fmt.Sprintf("stores[%d]", i)
		switch {
		case strings.TrimSpace(s.Name) == "":
			return fail("a store needs a name (its source label)", key, "name")
		case strings.ContainsAny(s.Name, " \t\n,"):
			return fail(fmt.Sprintf("name %q: no spaces or commas in a source label", s.Name), key, "name")
		case s.Path == "":
			return fail("a store needs a path", key, "path")
		case s.Source != "" && !slices.Contains(Kinds, s.Source):
			return fail(fmt.Sprintf("%q: want %s (or leave it out)", s.Source, strings.Join(Kinds, ", ")), key, "source")
		}
		s.Path = c.resolve(s.Path, home)
	}
	check := func(v *float64, key ...string) error {
		if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fail(fmt.Sprintf("%v: a budget is a non-negative number of USD", *v), key...)
		}
		return nil
	}
	b := c.Budgets
	for _, p := range []struct {
		v *float64
		k string
	}{{b.Daily, "daily"}, {b.Weekly, "weekly"}, {b.Monthly, "monthly"}} {
		if err := check(p.v, "budgets", p.k); err != nil {
			return err
		}
	}
	for name, pb := range b.Projects {
		for _, p := range []struct {
			v *float64
			k string
		}{{pb.Daily, "daily"}, {pb.Weekly, "weekly"}, {pb.Monthly, "monthly"}} {
			if err := check(p.v, "budgets", "projects", fmt.Sprintf("%q", name), p.k); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve expands a leading ~ and anchors a relative path at the config
// file's directory.
func (c *Config) resolve(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(filepath.Dir(c.Path), p)
	}
	return filepath.Clean(p)
}
