// Package config reads sessions-etl's configuration file (SPEC.md §7.1):
// $XDG_CONFIG_HOME/sessions-etl/config.toml (default
// ~/.config/sessions-etl/config.toml), TOML. It holds named stores read
// beside the built-in ones, defaults for --tz, --cost and --pricing, and
// budgets (SPEC.md §7.8). A missing file is an empty configuration.
//
//	[defaults]
//	tz = "Europe/Paris"
//	cost = "auto"              # auto, recorded or calculate
//	pricing = "~/prices.json"  # a price table replacing the bundled one
//
//	[[stores]]
//	name = "work"              # the source label of its files
//	path = "~/work/pi-sessions"
//	source = "pi"              # the agent that writes it (optional)
//
//	[budgets]                  # USD per period
//	daily = 10.0
//	weekly = 50.0
//	monthly = 150.0
//
//	[budgets.projects."web/src"]  # a project label, suffix or cwd
//	monthly = 40.0
//
// The package only parses and checks; the CLI applies the values.
//
// Imports: the TOML parser and the standard library; no other package of
// sessions-etl, so every stage can be configured without a cycle.
package config
