// Package dashboard writes one self-contained HTML page of charts and
// tables over the report database: daily cost stacked by model, cost by
// project, model and provider, billing blocks, top sessions, tool calls
// and error rates, the unpriced usage, and the same totals as `report`
// (every number comes from the report package's counted usage). The page
// loads nothing at view time — no script, stylesheet, font or image from
// anywhere — works with JavaScript off and prints.
//
// Imports: report (every number comes from it) and the standard library;
// never export, ingest or the write paths. Only the CLI writes the page to a
// file or the terminal.
package dashboard
