package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // --tz works on machines without a zone database

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// Kind is what a report groups by.
type Kind string

// Report kinds (SPEC.md §5).
const (
	Daily    Kind = "daily"
	Weekly   Kind = "weekly"
	Monthly  Kind = "monthly"
	Session  Kind = "session"
	Project  Kind = "project"
	Model    Kind = "model"
	Provider Kind = "provider"
	Tools    Kind = "tools"
)

// Kinds lists every report kind in the order of the command's help.
var Kinds = []Kind{Daily, Weekly, Monthly, Session, Project, Model, Provider, Tools}

// ParseKind checks a report kind.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown report %q (want %s)", s, strings.Join(names, ", "))
}

// timeKind reports whether k groups by a period of time.
func (k Kind) timeKind() bool { return k == Daily || k == Weekly || k == Monthly }

// Sources are the built-in values Options.Source accepts (ingest.Labels);
// Labels adds others (a config file's store names).
var Sources = ingest.Labels

// Options configure [Run].
type Options struct {
	Kind Kind
	// withTools: a batch answers the tools report too (RunBatch), so
	// the ingest keeps tool_uses whatever Kind is.
	withTools bool

	// Roots are the session files to ingest before answering.
	Roots []ingest.Root
	// DBPath is the DuckDB database (see [DBPath] for the defaults).
	DBPath string
	// NoRefresh reports on the database as it is, without ingesting.
	NoRefresh bool
	// From, when set, are partitioned Parquet roots (export --partition-by)
	// to answer from instead of DBPath and Roots (export.OpenRoots: each
	// record counted once across machines). DBPath only names them in
	// errors.
	From []string
	// Managed says DBPath is one of the report's own cache databases: it is
	// ingested without content, with the bundled price table, so that
	// changing --pricing or --cost never re-reads the files. Otherwise (a
	// database given with --db) the ingest keeps the database's content
	// options and uses CostMode and Prices, as `export` would.
	Managed bool
	Workers int

	// Location is the zone days, weeks and months are taken in (nil:
	// Zone.Location, else UTC).
	Location *time.Location
	// Zone names the zone in the report (Report.Zone and ZoneName, from
	// its Label and Name) when its Location is Location; see ResolveZone.
	Zone Zone
	// Since and Until are inclusive days in Location (zero: open). Only
	// their year, month and day are used.
	Since, Until time.Time

	Source  string   // "" or one of Sources or Labels
	Labels  []string // source labels accepted beside Sources (config stores)
	Project string   // project label, path-element suffix or cwd (SPEC.md §7.5), / and \ alike
	Model   string   // case-insensitive substring of model or provider/model

	CostMode export.CostMode // "" is auto
	// Prices is the price table (nil: pricing.Default()); PricingID names it
	// the way export does ("" for the bundled table).
	Prices    *pricing.Table
	PricingID string

	Progress export.Progress // ingest progress (nil: none)

	// Order is "asc", "desc" or "" (the natural order): see applyOrder.
	Order string
}

// ParseDate reads a --since/--until day: YYYY-MM-DD or YYYYMMDD (ccusage's
// spelling). The result is midnight UTC of that day.
func ParseDate(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD or YYYYMMDD", s)
}

// check validates the options and fills defaults.
func (o *Options) check() error {
	if err := o.checkQuestion(); err != nil {
		return err
	}
	if o.Prices == nil {
		o.Prices = pricing.Default()
	}
	if o.PricingID == "" {
		o.PricingID = TablePricingID(o.Prices)
	}
	return nil
}

// checkQuestion is check without the price table: it validates the
// options and fills every default but Prices and PricingID. (The status
// line's cache hit needs only the table's id: see RunStatusCached.)
func (o *Options) checkQuestion() error {
	if _, err := ParseKind(string(o.Kind)); err != nil {
		return err
	}
	if o.DBPath == "" {
		return fmt.Errorf("report: no database path")
	}
	if o.Location == nil {
		o.Location = o.Zone.Location
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.CostMode == "" {
		o.CostMode = export.CostAuto
	}
	if _, err := export.ParseCostMode(string(o.CostMode)); err != nil {
		return err
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && o.Until.Before(o.Since) {
		return fmt.Errorf("--until %s is before --since %s", o.Until.Format(time.DateOnly), o.Since.Format(time.DateOnly))
	}
	if o.Source != "" {
		ok := false
		for _, s := range append(slices.Clone(Sources), o.Labels...) {
			ok = ok || s == o.Source
		}
		if !ok {
			return fmt.Errorf("unknown source %q (want %s)", o.Source, strings.Join(Sources, ", "))
		}
	}
	if o.Order != "" && o.Order != "asc" && o.Order != "desc" {
		return fmt.Errorf("unknown order %q (want asc or desc)", o.Order)
	}
	o.Workers = max(o.Workers, 1)
	return nil
}

// TablePricingID is the price-table fingerprint export stores for a table
// given without an explicit id (export.Options.PricingID ""): it must stay
// in step with export's rule.
func TablePricingID(t *pricing.Table) string {
	return tablePricingID(t.Source, t.Retrieved)
}

func tablePricingID(source, retrieved string) string {
	return "table:" + source + "@" + retrieved
}
