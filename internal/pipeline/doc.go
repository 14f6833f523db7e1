// Package pipeline runs per-file work in parallel and hands the results back
// in input order, so output never depends on scheduling.
//
// Imports: golang.org/x/sync and the standard library only.
package pipeline
