package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/internal/buildinfo"
	"github.com/sessions-etl/sessions-etl/pricing"
	"github.com/sessions-etl/sessions-etl/report"
)

func init() { registerCommand(newVersionCmd) }

// commandExamples are the Examples: of every command's help, by command
// path without the program name. Each is a real invocation.
var commandExamples = map[string]string{
	"": `  sessions-etl report daily                  # today's habit: usage and cost per day of ~/.pi, ~/.atomic, ~/.prime
  sessions-etl validate                      # which session files would the agents fail to load?
  sessions-etl migrate --dry-run             # what an upgrade to format v4 would change
  sessions-etl export --duckdb usage.duckdb  # every table, to query with any DuckDB client
  sessions-etl synth --out /tmp/sessions-demo && sessions-etl report daily /tmp/sessions-demo`,
	"validate": `  sessions-etl validate
  sessions-etl validate ~/.pi/agent/sessions
  sessions-etl validate --json ~/.atomic | jq -c 'select(.status == "torn")'
  sessions-etl validate --quiet && echo "all session files load"`,
	"migrate": `  sessions-etl migrate --dry-run
  sessions-etl migrate
  sessions-etl migrate --repair --lock-wait 30s ~/.pi/agent/sessions
  sessions-etl migrate --undo 20261202T101500Z-1a2b`,
	"import": `  sessions-etl import --dry-run
  sessions-etl import
  sessions-etl import ~/.prime/agent/sessions --to ~/.atomic/agent/sessions --flat
  sessions-etl import --undo 20261202T101500Z-1a2b`,
	"export": `  sessions-etl export --duckdb usage.duckdb
  sessions-etl export --parquet out/ --no-content
  sessions-etl export --duckdb usage.duckdb --cost calculate ~/.pi
  sessions-etl export --json --duckdb usage.duckdb | jq .tables`,
	"query": `  sessions-etl query 'SELECT * FROM daily_usage ORDER BY day DESC LIMIT 7'
  sessions-etl query --csv 'SELECT * FROM model_usage' > models.csv
  sessions-etl query --duckdb usage.duckdb 'SELECT path, status, code FROM rejected_files'
  sessions-etl query 'SELECT * FROM unpriced_models' /tmp/sessions-demo`,
	"synth": `  sessions-etl synth --out /tmp/sessions-demo
  sessions-etl synth --out /tmp/big --sessions 2000 --seed 7
  sessions-etl synth --out /tmp/home-1g --size 1GB`,
	"report": `  sessions-etl report daily
  sessions-etl report monthly --since 2026-01-01 --tz Europe/Paris
  sessions-etl report session --last 7d --compact
  sessions-etl report model --json | jq '.totals.totalCost'
  sessions-etl report daily --strict --quiet > /dev/null || echo "some files were not used"`,
	"report daily": `  sessions-etl report daily
  sessions-etl report daily --since 7d --breakdown
  sessions-etl report daily --last 2w --order desc
  sessions-etl report daily --json | jq '[.daily[].totalCost] | add'`,
	"report weekly": `  sessions-etl report weekly
  sessions-etl report weekly --last 8
  sessions-etl report weekly --tz America/New_York --csv`,
	"report monthly": `  sessions-etl report monthly
  sessions-etl report monthly --last 6m --breakdown
  sessions-etl report monthly --md > usage.md`,
	"report session": `  sessions-etl report session
  sessions-etl report session --last 3d --order desc
  sessions-etl report session --project web --json`,
	"report project": `  sessions-etl report project
  sessions-etl report project --since 2026-11-01 --breakdown
  sessions-etl report project --source pi --csv`,
	"report model": `  sessions-etl report model
  sessions-etl report model --model sonnet --last 30d
  sessions-etl report model --cost calculate --json`,
	"report provider": `  sessions-etl report provider
  sessions-etl report provider --breakdown
  sessions-etl report provider --color never --md`,
	"report tools": `  sessions-etl report tools
  sessions-etl report tools --breakdown
  sessions-etl report tools --json | jq '.tools[] | select(.errorRate > 0.1)'`,
	"version": `  sessions-etl version
  sessions-etl --version
  sessions-etl version --json`,
}

// setupConventions gives every command of root the conventions of a
// command-line tool: --version, Examples: in each help page, suggestions
// for mistyped commands, completion of flag values.
func setupConventions(root *cobra.Command) {
	root.Version = buildinfo.Get().Version
	root.SetVersionTemplate("{{versionText}}")
	cobra.AddTemplateFunc("versionText", func() string { return versionText() })
	root.InitDefaultVersionFlag()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2 // "report dialy": did you mean daily?
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if ex, ok := commandExamples[path]; ok && c.Example == "" {
			c.Example = ex
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	completeFlag(root, "cost", fixedValues("auto", "recorded", "calculate"))
	completeFlag(root, "source", fixedValues(report.Sources...))
	completeFlag(root, "tz", completeZones)
	completeFlag(root, "color", fixedValues(colorModes...))
	completeFlag(root, "order", fixedValues("asc", "desc"))
}

type completer = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// completeFlag registers comp for the flag name on every command that has
// it (as its own or persistent flag).
func completeFlag(root *cobra.Command, name string, comp completer) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.LocalNonPersistentFlags().Lookup(name); f != nil {
			_ = c.RegisterFlagCompletionFunc(name, comp)
		} else if f := c.PersistentFlags().Lookup(name); f != nil {
			_ = c.RegisterFlagCompletionFunc(name, comp)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func fixedValues(vals ...string) completer {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vals, cobra.ShellCompDirectiveNoFileComp
	}
}

// commonZones complete --tz when no zone database is found on disk (the
// binary embeds one, which Go cannot list).
var commonZones = []string{"UTC", "America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York",
	"America/Sao_Paulo", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Moscow", "Africa/Johannesburg",
	"Asia/Dubai", "Asia/Kolkata", "Asia/Shanghai", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney", "Pacific/Auckland"}

// completeZones lists the IANA zone names of the system's zone database
// ($ZONEINFO or /usr/share/zoneinfo) that start with what was typed.
func completeZones(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
	var zones []string
	for _, dir := range []string{os.Getenv("ZONEINFO"), "/usr/share/zoneinfo"} {
		if dir == "" {
			continue
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			name, _ := filepath.Rel(dir, p)
			name = filepath.ToSlash(name)
			first := name[0]
			if d.IsDir() {
				if p != dir && (first < 'A' || first > 'Z') {
					return fs.SkipDir
				}
				return nil
			}
			if first >= 'A' && first <= 'Z' && !strings.Contains(name, ".") && strings.HasPrefix(name, typed) {
				zones = append(zones, name)
			}
			return nil
		})
		if len(zones) > 0 {
			break
		}
	}
	if len(zones) == 0 {
		for _, z := range commonZones {
			if strings.HasPrefix(z, typed) {
				zones = append(zones, z)
			}
		}
	}
	sort.Strings(zones)
	return zones, cobra.ShellCompDirectiveNoFileComp
}

// versionJSON is `version --json`.
type versionJSON struct {
	buildinfo.Info
	Prices struct {
		Source    string `json:"source"`
		License   string `json:"license"`
		Retrieved string `json:"retrieved"`
	} `json:"prices"`
}

func versionInfo() versionJSON {
	v := versionJSON{Info: buildinfo.Get()}
	t := pricing.Default()
	v.Prices.Source, v.Prices.License, v.Prices.Retrieved = t.Source, t.License, t.Retrieved
	return v
}

// versionText is the output of --version and `version`.
func versionText() string {
	v := versionInfo()
	commit := v.Short()
	if commit == "" {
		commit = "(unknown)"
	}
	date := v.Date
	if date == "" {
		date = "(unknown)"
	}
	return fmt.Sprintf("sessions-etl %s\ncommit:      %s\nbuilt:       %s\ngo:          %s %s\nprice table: %s, retrieved %s (%s)\n",
		v.Version, commit, date, v.GoVersion, v.Platform, v.Prices.Source, v.Prices.Retrieved, v.Prices.License)
}

func newVersionCmd(ios *IO, g *globalOptions, runF runFunc[globalOptions]) *cobra.Command {
	run := orDefault(runF, runVersion)
	return &cobra.Command{
		Use:   "version",
		Short: "The version, commit and build date of this binary, and the date of its price table",
		Long: `version prints the module version, the git commit and the build date of this
binary, the Go version and platform it was built with, and the source, licence
and retrieval date of the bundled price table (the prices --cost calculate and
auto use). --json prints the same as one JSON object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), g, ios)
		},
	}
}

// runVersion is version's run.
func runVersion(_ context.Context, g *globalOptions, ios *IO) error {
	return writeVersion(ios.Out, g.JSON)
}

func writeVersion(w io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(versionInfo())
	}
	_, err := io.WriteString(w, versionText())
	return err
}
