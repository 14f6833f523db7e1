// Package migrate upgrades session files of format v1, v2, v3 and early v4
// to v4 in place (SPEC.md §2): the plans of package upgrade, applied
// atomically under the agent's proper-lockfile lock, with backups, a
// journal and undo (internal/fstx), and --relayout's moves.
//
// Imports: upgrade, ingest, validate, session, internal/fstx and
// internal/pipeline; no other pipeline stage imports migrate.
package migrate
