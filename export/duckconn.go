package export

import (
	"context"
	"database/sql"
	"database/sql/driver"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// SessionTimeZone is the DuckDB TimeZone setting of every connection the
// tool opens. The exported timestamps are TIMESTAMPTZ (UTC instants,
// SPEC.md §7.7); DuckDB takes the date parts, casts to DATE and
// date_trunc of such a value in the session's time zone, which defaults to
// the machine's. Reports group by day in --tz themselves, from UTC.
const SessionTimeZone = "UTC"

// setTimeZone is run on every new connection, before anything else.
const setTimeZone = "SET TimeZone='" + SessionTimeZone + "'"

// NewConnector is duckdb.NewConnector whose connections run in UTC
// (SessionTimeZone): every DuckDB connection of the tool comes from here
// (or OpenDB), so that no answer depends on the machine's zone. init, when
// not nil, runs after the time zone is set.
func NewConnector(dsn string, init func(driver.ExecerContext) error) (*duckdb.Connector, error) {
	return duckdb.NewConnector(dsn, func(e driver.ExecerContext) error {
		if _, err := e.ExecContext(context.Background(), setTimeZone, nil); err != nil {
			return err
		}
		if init != nil {
			return init(e)
		}
		return nil
	})
}

// OpenDB opens a DuckDB database (dsn as for sql.Open("duckdb", dsn)) whose
// connections run in UTC. Closing the *sql.DB closes the connector.
func OpenDB(dsn string) (*sql.DB, error) {
	c, err := NewConnector(dsn, nil)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}
