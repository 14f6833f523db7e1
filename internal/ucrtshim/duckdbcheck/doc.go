// Command duckdbcheck opens an in-memory DuckDB database and runs one
// query: the smallest program that links duckdb-go's bindings. `make
// cross-windows-check` builds it for windows/amd64 with Debian's MinGW-w64
// (.ci/mingw-ucrt.sh) and runs it under wine64 when wine64 is installed,
// independently of the rest of the command.
//
// Imports: internal/ucrtshim and duckdb-go only.
package main
