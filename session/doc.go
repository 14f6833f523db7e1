// Package session is the format's vocabulary: entry types and roles, format
// versions, the header's id and the dialects.
//
// It holds what sessions-etl knows of the session file format beyond the
// line reader (package ingest): the entry types of SPEC.md §1.4 and the
// message roles, the format versions, the session id a header gives
// (HeaderID, ReadHeaderID: the one reader of it), the rule for the ids
// sessions-etl derives for entries it writes, and the dialects of the
// agents that write the format (oh-my-pi's title slot, SPEC.md §7.2).
// Packages that read headers ask it rather than repeating the rules.
//
// Imports: ingest (the line reader) and the standard library.
package session
