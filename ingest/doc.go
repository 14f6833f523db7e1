// Package ingest finds session files and reads them: the roots of the
// stores an agent keeps (SPEC.md §7.1) and the paths a user names,
// discovery that never leaves its roots or follows a link out of them,
// archives (.tar, .tar.gz, .tar.zst, .zip) read as if unpacked, and the
// line reader with its own JSON scanner (a tape of one line's values,
// without building maps), which every stage uses so that a line means the
// same thing to validate, migrate, import, export and report.
//
// Imports: internal/fstx (opening regular files safely on every platform),
// the archive and compression libraries and the standard library; never a
// pipeline stage.
package ingest
