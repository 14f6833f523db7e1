// Package validate gives every session file one verdict (SPEC.md §1.5): the
// status the agent's loader would reach, and the issues that explain it, each
// with a line number and a stable code.
//
// Imports: ingest (discovery and the line reader), session (the header and
// the format's vocabulary) and internal/pipeline; never a package that
// writes.
package validate
