// Package fstx owns every durable write of sessions-etl: the atomic
// replace of a file (temporary file in the target's directory → write →
// mode, owner, special bits and extended attributes → times → fsync →
// rename → fsync of the directory), the agents' proper-lockfile lock and
// sessions-etl's own flock, the run directory with its journal, backups and
// undo, and the clean-up of stale temporary files (SPEC.md §2.3, §2.5).
//
// Platform facts (ownership, extended attributes, renames that never
// replace, directory fsync, process liveness) live in files with build
// tags; callers never see syscall.
//
// Imports: golang.org/x/sys, gofrs/flock and the standard library; no
// other package of sessions-etl, so every stage that writes can use it.
package fstx
