// Package upgrade plans and applies the upgrade of one session file's bytes
// to format v4 (SPEC.md §2): byte-faithful edits of the raw lines (key-only
// edits that keep the file's separators, ids for v1 entries, the header's
// new keys), with the repairs --repair allows, computed from the bytes
// alone and checked as current v4 before anything is written ([PlanFile],
// [Apply]). It also resolves parentSession paths to session ids
// ([ParentIndex]) and names the per-cwd directories of a store
// ([EncodeCwd]).
//
// It writes nothing: migrate (upgrades in place) and importer (upgrades
// on the way into an Atomic store) take its plans and write them through
// internal/fstx.
//
// Imports: ingest (the line reader), session (the header and the format's
// vocabulary), validate (the verdict a plan is checked against) and the
// standard library; never migrate, importer or a package that writes.
package upgrade
