// Command sessions-etl validates, migrates, exports and reports on the JSONL
// session logs of pi-agent, Atomic and Prime Agent. See README.md.
//
// Imports: every package of the module but internal/testkit: it is the one
// place that parses flags and writes to the terminal; the packages it
// calls expose plain functions and types.
package main
