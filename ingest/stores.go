package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// More source labels: the pi derivatives of SPEC.md §7.1.
const (
	SourceOmp      = "omp"      // oh-my-pi
	SourceOpenClaw = "openclaw" // OpenClaw, one store per agent directory
	SourceKimchi   = "kimchi"
)

// Labels are the built-in source labels, in the order of SPEC.md §7.1's
// table, then custom. A config file's stores add their own names.
var Labels = []string{SourcePi, SourceAtomic, SourcePrime, SourceOmp, SourceOpenClaw, SourceKimchi, SourceCustom}

// How a store was chosen (Store.SelectedBy).
const (
	SelectedDefault  = "default"
	SelectedVariable = "variable"
	SelectedConfig   = "config"
)

// The environment variables that move stores (SPEC.md §7.1).
const (
	EnvPiSessionDir    = "PI_CODING_AGENT_SESSION_DIR" // pi's sessions root itself
	EnvPiAgentDir      = "PI_CODING_AGENT_DIR"         // pi's agent dir; sessions in <dir>/sessions
	EnvPrimeSessionDir = "PRIME_AGENT_SESSION_DIR"
	EnvOmpSessionDir   = "OMP_CODING_AGENT_SESSION_DIR"
	EnvOmpAgentDir     = "OMP_CODING_AGENT_DIR"
	EnvOpenClawState   = "OPENCLAW_STATE_DIR" // replaces ~/.openclaw
	EnvXDGConfigHome   = "XDG_CONFIG_HOME"    // kimchi's store is under it
)

// StoreVariables are the variables of SPEC.md §7.1's table, for messages
// and tests.
var StoreVariables = []string{EnvPiSessionDir, EnvPiAgentDir, EnvPrimeSessionDir, EnvOmpSessionDir, EnvOmpAgentDir, EnvOpenClawState}

// Store is one place an agent keeps session files (SPEC.md §7.1): a row of
// `sessions-etl sources`. Every file found under it gets its Label.
type Store struct {
	Label string // source label of its files: pi, atomic, …, or a config store's name
	// Kind is the agent whose format the store holds (pi, atomic, prime,
	// omp, openclaw, kimchi; "" when a config store does not say). Rules
	// that depend on the writer (which stores migrate upgrades in place)
	// look at Kind, not at Label, which a config file may choose.
	Kind string
	Root string // the sessions root (a directory)
	// Flat is pi's agent directory, whose own *.jsonl files are legacy
	// flat sessions (SPEC.md §1.1); "" for the other stores.
	Flat       string
	SelectedBy string // SelectedDefault, SelectedVariable or SelectedConfig
	Variable   string // the variable that chose Root (SelectedBy == SelectedVariable)
	Value      string // its value as set, before ~ expansion
	Config     string // the config file that named the store (SelectedBy == SelectedConfig)
}

// State says whether the store's root is there (see [DefaultRootState]).
func (s Store) State() RootState { return DefaultRootState(s.Root) }

// Roots are the discovery roots of the store: Root (recursive) and, for
// pi, the legacy flat agent directory (its own files only).
func (s Store) Roots() []Root {
	out := []Root{{Path: s.Root, Recursive: true, Source: s.Label}}
	if s.Flat != "" {
		out = append(out, Root{Path: s.Flat, Recursive: false, Source: s.Label, AgentDir: true})
	}
	return out
}

// StoreEnv is what store discovery reads of the process: the home
// directory and the environment (Lookup nil: os.LookupEnv).
type StoreEnv struct {
	Home   string
	Lookup func(string) (string, bool)
}

// Get returns a variable's value when it is set to something other than
// the empty string (an empty variable counts as unset, as in the agents).
func (e StoreEnv) Get(name string) (string, bool) {
	look := e.Lookup
	if look == nil {
		look = os.LookupEnv
	}
	v, ok := look(name)
	return v, ok && v != ""
}

// expand turns a variable's value into an absolute path: a leading ~ is
// the home directory, a relative path is taken from the working directory.
func (e StoreEnv) expand(v string) string {
	if v == "~" {
		return e.Home
	}
	if rest, ok := strings.CutPrefix(v, "~/"); ok {
		return filepath.Join(e.Home, rest)
	}
	if abs, err := filepath.Abs(v); err == nil {
		return abs
	}
	return filepath.Clean(v)
}

// DefaultStores returns every store of SPEC.md §7.1 under env, whether its
// root exists or not, in the table's order: pi (with its legacy flat
// agent directory), atomic, prime, omp, one openclaw store per agent
// directory, kimchi. A variable that is set replaces its store's default
// root (pi: PI_CODING_AGENT_SESSION_DIR, else PI_CODING_AGENT_DIR +
// /sessions; the legacy flat files are those of the agent directory,
// PI_CODING_AGENT_DIR or ~/.pi/agent; omp likewise). OpenClaw's agents
// are the subdirectories of <state>/agents (OPENCLAW_STATE_DIR or
// ~/.openclaw), each a store <state>/agents/<agent>/sessions; with none,
// one store <state>/agents/*/sessions that does not exist. kimchi's root
// is under $XDG_CONFIG_HOME (default ~/.config).
func DefaultStores(env StoreEnv) []Store {
	home := env.Home
	var out []Store
	add := func(label, def, sub string, vars ...string) *Store {
		s := Store{Label: label, Kind: label, Root: def, SelectedBy: SelectedDefault}
		for i, v := range vars {
			if val, ok := env.Get(v); ok {
				s.Root, s.SelectedBy, s.Variable, s.Value = env.expand(val), SelectedVariable, v, val
				if i > 0 { // an agent directory: sessions beneath it
					s.Root = filepath.Join(s.Root, sub)
				}
				break
			}
		}
		out = append(out, s)
		return &out[len(out)-1]
	}
	pi := add(SourcePi, filepath.Join(home, ".pi", "agent", "sessions"), "sessions", EnvPiSessionDir, EnvPiAgentDir)
	pi.Flat = filepath.Join(home, ".pi", "agent")
	if v, ok := env.Get(EnvPiAgentDir); ok {
		pi.Flat = env.expand(v)
	}
	add(SourceAtomic, filepath.Join(home, ".atomic", "agent", "sessions"), "")
	add(SourcePrime, filepath.Join(home, ".prime", "agent", "sessions"), "", EnvPrimeSessionDir)
	add(SourceOmp, filepath.Join(home, ".omp", "agent", "sessions"), "sessions", EnvOmpSessionDir, EnvOmpAgentDir)
	out = append(out, openClawStores(env)...)
	cfg := filepath.Join(home, ".config")
	if v, ok := env.Get(EnvXDGConfigHome); ok && filepath.IsAbs(v) {
		cfg = v
	}
	add(SourceKimchi, filepath.Join(cfg, "kimchi", "harness", "sessions"), "")
	return out
}

// openClawStores lists one store per agent directory of OpenClaw's state
// directory, in name order.
func openClawStores(env StoreEnv) []Store {
	base := Store{Label: SourceOpenClaw, Kind: SourceOpenClaw, SelectedBy: SelectedDefault}
	state := filepath.Join(env.Home, ".openclaw")
	if v, ok := env.Get(EnvOpenClawState); ok {
		state, base.SelectedBy, base.Variable, base.Value = env.expand(v), SelectedVariable, EnvOpenClawState, v
	}
	agents := filepath.Join(state, "agents")
	var names []string
	if ents, err := os.ReadDir(agents); err == nil {
		for _, e := range ents {
			if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
				if fi, err := os.Stat(filepath.Join(agents, e.Name())); err == nil && fi.IsDir() {
					names = append(names, e.Name())
				}
			}
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		base.Root = filepath.Join(agents, "*", "sessions")
		return []Store{base}
	}
	out := make([]Store, len(names))
	for i, n := range names {
		out[i] = base
		out[i].Root = filepath.Join(agents, n, "sessions")
	}
	return out
}

// StoreRoots returns the discovery roots of the stores that are not
// missing (present, or unreadable: [Discover] reports an unreadable root
// as an error), in order.
func StoreRoots(stores []Store) []Root {
	var out []Root
	for _, s := range stores {
		for _, r := range s.Roots() {
			if DefaultRootState(r.Path) != RootMissing {
				out = append(out, r)
			}
		}
	}
	return out
}

// MissingMoved returns the stores chosen by a variable (or a config
// file) whose root is not there: SPEC.md §7.1 has them reported, never
// silently ignored. OpenClaw's agents directory counts: a state directory
// without agents is reported too.
func MissingMoved(stores []Store) []Store {
	var out []Store
	for _, s := range stores {
		if s.SelectedBy != SelectedDefault && s.State() != RootPresent {
			out = append(out, s)
		}
	}
	return out
}
