// Package queries holds the SQL of sessions-etl as named statements in
// embedded .sql files, so the SQL is read, reviewed and tested as SQL:
//
//   - views.sql: the views created in every exported DuckDB database
//     (SPEC.md §3 "plus the views from queries/"), one `-- name: X` block
//     per view holding the view's SELECT;
//   - export.sql: the statements the export uses to maintain its derived
//     columns (fork copies, counted usage, parent sessions, cost columns);
//   - rules.sql: rules more than one file applies, as SQL expressions (the
//     cost rule of SPEC.md §4 in each --cost mode), written once;
//   - report.sql: the named fragments package report builds its queries
//     from (the counted base records, the aggregates of a usage group).
//
// A block starts with a line `-- name: <identifier>`; the comment lines that
// follow it are its documentation; the rest, up to the next `-- name:` line,
// is one SQL statement (a trailing semicolon is dropped). `{{name}}` in a
// statement stands for the SQL of the earlier statement of that name in the
// same file, or for a rule of rules.sql (a shared subquery or rule written
// once).
//
// Imports: the standard library only (embed). The Go code that runs these
// statements lives in export and report; a statement is never assembled
// from user input.
package queries
