package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sessions-etl/sessions-etl/ingest"
)

func init() { registerCommand(newSourcesCmd) }

func newSourcesCmd(ios *IO, g *globalOptions, runF runFunc[globalOptions]) *cobra.Command {
	run := orDefault(runF, runSources)
	return &cobra.Command{
		Use:   "sources",
		Short: "List every store the commands read with no PATH: label, root, what chose it, files found",
		Long: `sources lists every store of session files that validate, export, report,
migrate and import read when given no PATH, one row each:

  label        the source label of its files (pi, atomic, prime, omp, openclaw,
               kimchi, or a config store's name); --source takes it
  selected_by  default, variable (which one: PI_CODING_AGENT_DIR, …) or config
  exists       whether the root is there (a moved store that is not is also
               named on stderr by the commands that read it)
  files, bytes the session files found under it and their size

pi's row also covers its legacy flat files (<agent dir>/*.jsonl). OpenClaw has
one row per agent directory (<state>/agents/<agent>/sessions).

--json writes one JSON object per store (JSON Lines): label, root, selected_by,
variable, config, exists, state (present, missing, unreadable), files, bytes.`,
		Example: `  sessions-etl sources
  sessions-etl sources --json
  sessions-etl sources --json | jq -r 'select(.exists) | .root'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), g, ios)
		},
	}
}

// sourceRow is one line of `sources --json`.
type sourceRow struct {
	Label      string `json:"label"`
	Kind       string `json:"kind,omitempty"`
	Root       string `json:"root"`
	Flat       string `json:"flat,omitempty"`
	SelectedBy string `json:"selected_by"`
	Variable   string `json:"variable,omitempty"`
	Config     string `json:"config,omitempty"`
	Exists     bool   `json:"exists"`
	State      string `json:"state"`
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
}

// runSources is sources' run: it takes the global options only.
func runSources(ctx context.Context, g *globalOptions, ios *IO) error {
	if ios.Home == "" {
		return usagef("no home directory to find the stores")
	}
	rows, err := sourceRows(ctx, ios)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(ios.Out)
	defer out.Flush()
	if g.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	return printSources(out, ios, rows)
}

// sourceRows is one row per store, with the session files found under it.
func sourceRows(ctx context.Context, ios *IO) ([]sourceRow, error) {
	var rows []sourceRow
	for _, s := range stores(ios) {
		st := s.State()
		row := sourceRow{Label: s.Label, Kind: s.Kind, Root: s.Root, Flat: s.Flat, SelectedBy: s.SelectedBy,
			Variable: s.Variable, Config: s.Config, Exists: st == ingest.RootPresent, State: st.String()}
		rts := ingest.StoreRoots([]ingest.Store{s})
		for i := range rts {
			rts[i].Skip = []string{stateDir(ios)}
		}
		err := ingest.Discover(ctx, rts, func(f ingest.File) error {
			row.Files++
			row.Bytes += f.Size
			return nil
		}, nil)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// printSources writes the rows as an aligned table.
func printSources(out *bufio.Writer, ios *IO, rows []sourceRow) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "label\tselected by\texists\tfiles\tsize\troot")
	for _, r := range rows {
		by := r.SelectedBy
		switch {
		case r.Variable != "":
			by = r.Variable
		case r.Config != "":
			by = "config"
		}
		exists := "yes"
		if !r.Exists {
			exists = "no"
			if r.State == ingest.RootUnreadable.String() {
				exists = "unreadable"
			}
		}
		root := tildePath(ios, r.Root)
		if r.Flat != "" {
			root += " (+ " + tildePath(ios, r.Flat) + "/*.jsonl)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.Label, by, exists, r.Files, humanBytes(r.Bytes), root)
	}
	return tw.Flush()
}
