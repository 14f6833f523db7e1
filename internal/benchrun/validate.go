package main

import (
	"database/sql"
	"fmt"

	_ "github.com/duckdb/duckdb-go/v2"
)

func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		return []stage{
			{name: "validate", compare: "duckdb read_json usage", argv: []string{bin, "validate", "--json", "--quiet", home}, okExit: []int{1}},
			{name: "duckdb read_json usage", argv: []string{"", "child:duckdb-usage", home}},
		}
	})
	childModes["duckdb-usage"] = duckdbUsage
}

// duckdbUsage is DuckDB's own pass over the home: read_json on every
// session file, summing the assistant usage (the comparison issue 2 asks for).
func duckdbUsage(args []string) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	q := fmt.Sprintf(`SELECT count(*), sum(u.input), sum(u.output), sum(u.cacheRead), sum(u.cacheWrite), sum(u.cost.total)
FROM (SELECT message.usage AS u FROM read_json('%s/**/*.jsonl', format='newline_delimited',
  columns={'type': 'VARCHAR', 'message': 'STRUCT(role VARCHAR, usage STRUCT(input BIGINT, output BIGINT, cacheRead BIGINT, cacheWrite BIGINT, totalTokens BIGINT, cost STRUCT(total DOUBLE)))'},
  ignore_errors=true, maximum_object_size=536870912)) WHERE u IS NOT NULL`, args[0])
	var n int64
	var in, out, cr, cw sql.NullInt64
	var cost sql.NullFloat64
	if err := db.QueryRow(q).Scan(&n, &in, &out, &cr, &cw, &cost); err != nil {
		return err
	}
	fmt.Printf("records=%d input=%d output=%d cache_read=%d cache_write=%d cost=%.4f\n", n, in.Int64, out.Int64, cr.Int64, cw.Int64, cost.Float64)
	return nil
}
