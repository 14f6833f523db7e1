// Package ucrtshim fills the gaps between Debian's MinGW-w64 (GCC 12,
// mingw-w64 10, whose libstdc++ and libwinpthread were built for msvcrt)
// and DuckDB's Windows library in duckdb-go's bindings (built by a UCRT
// toolchain), so that `make cross-windows` links on a Debian machine. It is
// compiled only with the build tag mingw_ucrt_shim (.ci/mingw-ucrt.sh sets
// it); native Windows builds with a UCRT toolchain (MSYS2 UCRT64) do not
// need it and never see it.
package ucrtshim
