package export

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// utcHome is one session whose single billed record was made at
// 2026-03-01T03:22:00Z: 04:22 in Paris (CET, UTC+1 before 29 March),
// 2026-02-28 19:22 in Los Angeles (PST, UTC-8).
func utcHome(t *testing.T) string {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "s.jsonl"),
		`{"type":"session","version":3,"id":"30000000-0000-4000-8000-000000000001","timestamp":"2026-03-01T03:00:00.000Z","cwd":"/w"}`+"\n"+
			assistantLine("a1", "null", "2026-03-01T03:22:00.000Z", 100, 10)+"\n")
	return home
}

// openZone opens db through duckdb-go's own connector (not this package's
// NewConnector) with the session TimeZone zone, as a user's DuckDB would.
func openZone(t *testing.T, dsn, zone string) *sql.DB {
	t.Helper()
	c, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET TimeZone='" + zone + "'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestTimestampsAreUTCAware: both sinks store UTC-aware timestamps
// (DuckDB TIMESTAMP WITH TIME ZONE; Parquet TIMESTAMP(MICROS,
// isAdjustedToUTC=true)), so DuckDB's AT TIME ZONE gives the right local
// hour, and the daily_usage view's day is the UTC day whatever the
// session's zone (SPEC.md §7.7).
func TestTimestampsAreUTCAware(t *testing.T) {
	home := utcHome(t)
	out := t.TempDir()
	runExport(t, sinks[0], out, []string{home}, func(o *Options) { o.ParquetDir = filepath.Join(out, "parquet") })

	for _, zone := range []string{"UTC", "Europe/Paris", "America/Los_Angeles"} {
		db := openZone(t, filepath.Join(out, "export.duckdb")+"?access_mode=READ_ONLY", zone)
		var typ string
		queryOne(t, db, "SELECT data_type FROM information_schema.columns WHERE table_name = 'usage' AND column_name = 'timestamp'", &typ)
		if typ != "TIMESTAMP WITH TIME ZONE" {
			t.Errorf("%s: usage.timestamp is %s in DuckDB; want TIMESTAMP WITH TIME ZONE", zone, typ)
		}
		for name, from := range map[string]string{
			"duckdb":  "usage",
			"parquet": "read_parquet('" + filepath.Join(out, "parquet", "usage", "*.parquet") + "')",
		} {
			var paris, la, utc string
			queryOne(t, db, "SELECT strftime(timestamp AT TIME ZONE 'Europe/Paris', '%Y-%m-%d %H:%M'), "+
				"strftime(timestamp AT TIME ZONE 'America/Los_Angeles', '%Y-%m-%d %H:%M'), "+
				"strftime(timestamp AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') FROM "+from, &paris, &la, &utc)
			if paris != "2026-03-01 04:22" || la != "2026-02-28 19:22" || utc != "2026-03-01 03:22" {
				t.Errorf("%s, session zone %s: AT TIME ZONE gives Paris %s, Los Angeles %s, UTC %s; want 2026-03-01 04:22, 2026-02-28 19:22, 2026-03-01 03:22",
					name, zone, paris, la, utc)
			}
		}
		var day string
		queryOne(t, db, "SELECT CAST(day AS VARCHAR) FROM daily_usage", &day)
		if day != "2026-03-01" {
			t.Errorf("session zone %s: daily_usage day %s; want the UTC day 2026-03-01", zone, day)
		}
	}

	parts, err := filepath.Glob(filepath.Join(out, "parquet", "*", "*.parquet"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("no parquet parts (%v)", err)
	}
	seen := 0
	for _, p := range parts {
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		sc := rdr.MetaData().Schema
		for i := 0; i < sc.NumColumns(); i++ {
			c := sc.Column(i)
			ts, ok := c.LogicalType().(schema.TimestampLogicalType)
			if !ok {
				continue
			}
			seen++
			if !ts.IsAdjustedToUTC() || ts.TimeUnit() != schema.TimeUnitMicros {
				t.Errorf("%s column %s: %s; want TIMESTAMP(MICROS, isAdjustedToUTC=true)", p, c.Name(), ts)
			}
		}
		rdr.Close()
	}
	if seen == 0 {
		t.Error("no timestamp column in any Parquet file")
	}
}
