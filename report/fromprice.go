package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/export"
	"github.com/sessions-etl/sessions-etl/pricing"
)

// fromPricing prepares the cache of report --from's roots
// (export.OpenRootsCached) for o's price table: the usage rows'
// calculated costs are those of o.Prices, computed as the export does
// (each record priced at its instant), and the database records the
// table's id, so that the reports aggregate in SQL (usageCellsSQL) instead
// of pricing every record in Go (usageCellsGo: 412 336 records of a 5 GB
// team took seconds and 600 MB; BENCHMARKS.md, issue 15). The counted
// records and the recorded costs are the roots' own.
func fromPricing(o *Options) *export.FromPrep {
	prices, id := o.Prices, o.PricingID
	return &export.FromPrep{ID: "pricing " + id, Apply: func(ctx context.Context, db *sql.DB) error {
		if err := repriceUsage(ctx, db, prices); err != nil {
			return fmt.Errorf("price the roots' usage: %w", err)
		}
		return export.SetState(ctx, db, "pricing", id)
	}}
}

// repriceUsage sets the calculated_cost_* columns of every usage row from
// prices: NULL when the row names no provider and model or the table has
// no price for them.
func repriceUsage(ctx context.Context, db *sql.DB, prices *pricing.Table) error {
	type priced struct {
		rid  int64
		cost pricing.Cost
		ok   bool
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid, timestamp, provider, model, input, output, cache_read, cache_write, cache_write_1h
FROM usage WHERE provider <> '' AND model <> ''`)
	if err != nil {
		return err
	}
	var out []priced
	for rows.Next() {
		var (
			p      priced
			ts     sql.NullTime
			pv, md string
			t      pricing.Tokens
		)
		if err := rows.Scan(&p.rid, &ts, &pv, &md, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &t.CacheWrite1h); err != nil {
			rows.Close()
			return err
		}
		var at time.Time
		if ts.Valid {
			at = ts.Time.UTC()
		}
		if price, ok := prices.LookupAt(pv, md, at); ok {
			p.cost, p.ok = price.Cost(t), true
		}
		out = append(out, p)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	const tmp = "_from_prices"
	for _, q := range []string{
		"CREATE OR REPLACE TABLE " + tmp + " (rid BIGINT, ci DOUBLE, co DOUBLE, ccr DOUBLE, ccw DOUBLE, ct DOUBLE)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	err = conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", tmp)
		if err != nil {
			return err
		}
		for _, p := range out {
			var err error
			if p.ok {
				err = a.AppendRow(p.rid, p.cost.Input, p.cost.Output, p.cost.CacheRead, p.cost.CacheWrite, p.cost.Total)
			} else {
				err = a.AppendRow(p.rid, nil, nil, nil, nil, nil)
			}
			if err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// A new table rather than an UPDATE of five columns of every row
	// (twice the time); the columns keep their order.
	for _, q := range []string{
		`CREATE TABLE _usage_priced AS SELECT u.* REPLACE (p.ci AS calculated_cost_input, p.co AS calculated_cost_output,
  p.ccr AS calculated_cost_cache_read, p.ccw AS calculated_cost_cache_write, p.ct AS calculated_cost_total)
FROM usage u LEFT JOIN ` + tmp + ` p ON p.rid = u.rowid`,
		"DROP TABLE usage",
		"ALTER TABLE _usage_priced RENAME TO usage",
		"DROP TABLE " + tmp,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
