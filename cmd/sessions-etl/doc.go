// Command sessions-etl validates, migrates, exports and reports on the JSONL
// session logs of pi-agent, Atomic and Prime Agent. See README.md.
//
// Each command is cli/cli's shape: an options struct (xOptions), a
// constructor newXCmd(ios, g, runF) whose RunE only copies what cobra
// knows (arguments, which flags were given, the context) into the options,
// applies the configuration file's defaults to the flags not given and
// checks flags, and a run function runX(ctx, opts, ios) that never sees
// cobra. Tests call the run functions directly with an IO of buffers
// (run_test.go), and pass their own runF to see what the flags filled in
// (flags_test.go). Run maps every error to an exit code in one place.
//
// Imports: every package of the module but internal/testkit: it is the one
// place that parses flags and writes to the terminal; the packages it
// calls expose plain functions and types.
package main
