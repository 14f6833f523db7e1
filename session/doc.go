// Package session is the format's vocabulary: header and dialects.
//
// It holds what sessions-etl knows of the session file format beyond the
// line reader (package ingest): the shapes of the records that open a
// file, and the dialects of the agents that write the format (oh-my-pi's
// title slot, SPEC.md §7.2). Packages that read headers ask it rather
// than repeating the rules.
package session
