// Package importer copies legacy pi-agent and Prime Agent sessions into an
// Atomic v4 store (SPEC.md §2.5, issue "import"): each valid source session
// is upgraded on the way by the planner of package upgrade and written to
// the store as a v4 file, keeping its session id. Sources are only read.
//
// Identity and idempotence come from comparing records, not file names: the
// store's headers are scanned once (session id → file), and a source whose
// id is already there is compared entry by entry with the stored copy
// (equal: already_imported; the store's copy a strict prefix: the copy is
// replaced, updated; anything else: conflict, never overwritten). The same
// session found in several sources is imported once. Every file written
// goes through the temp → fsync → rename → directory fsync recipe with the
// source's permission bits and mtime, and is journaled in a run directory
// so that [Undo] can take the import back.
//
// Imports: upgrade (the plan of each copy), ingest, validate, session,
// internal/fstx and internal/pipeline; never migrate.
package importer
