//go:build mingw_ucrt_shim

package main

// Linked only by `make cross-windows` (Debian's MinGW-w64): see
// internal/ucrtshim.
import _ "github.com/sessions-etl/sessions-etl/internal/ucrtshim"
