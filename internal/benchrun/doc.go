// Command benchrun is `make bench`: it generates (once) a ~1 GB session home
// with `sessions-etl synth`, then times each stage of sessions-etl as a real
// process — wall time, MB/s over the home's session bytes and peak RSS —
// side by side with DuckDB doing comparable work through duckdb-go in a
// child process of its own. Results are printed as a Markdown table, which
// BENCHMARKS.md records.
//
//	go run ./internal/benchrun -bin bin/sessions-etl -home .bench/home -size 1073741824
//
// Imports: export (its DuckDB connections), ingest, pricing and synth (and
// the sessions-etl binary and ccusage, run as processes).
package main
