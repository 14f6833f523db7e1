// Package report answers the usage and cost questions of SPEC.md §4 and §5
// ("what did my agents cost, per day, week, month, session, project, model,
// provider; which tools did they call") from the DuckDB database written by
// package export.
//
// # Where the numbers come from
//
// [Run] first brings the database up to date with export.Run (incremental:
// unchanged files are not read again), then aggregates the export's usage
// table. The report's own databases are ingested in export.ModeUsage: the
// files, sessions, usage and ingest_issues tables of an export and, for the
// tools report, tool_uses (the tool call and result blocks), but no entries
// or content_blocks, which would be most of the work of a first report.
// tool_uses is filled only once a tools report (alone or in a batch) needs
// it: a cache first made by another report is made without them
// (export.Options.SkipToolUses) and rebuilt by the first tools report. A
// database given with --db keeps the mode it has (a new one is made in
// ModeUsage); the reports read either kind. Only rows with counted = true are used: a billed record copied into
// a fork, a backup or the same session under two roots is counted once, in
// the session where it first appeared (the export decides, SPEC.md §4).
// Every billed kind is included: assistant, tool_result, compaction,
// branch_summary, session_summary and child_usage, on every branch.
//
// Tokens are summed exactly. totalTokens is the record's own totalTokens
// when it has a valid one, else input + output + cacheRead + cacheWrite.
//
// # Time
//
// A record's instant is its entry timestamp (else message.timestamp), a UTC
// instant. Days, ISO weeks (starting on Monday) and months are taken in the
// report's time zone (Options.Location; the command's default is the local
// zone, honouring TZ). The zone's UTC offsets are taken from Go's time zone
// database (with time/tzdata embedded, so zones work on machines without
// one) and handed to DuckDB as a list of [start, offset) spans, so daylight
// saving changes and zones with 30- and 45-minute offsets are exact. Records
// without any timestamp are reported on a row of their own with no date, and
// are left out when Since or Until is set. Since and Until are days in the
// report's zone, both inclusive.
//
// # Cost
//
// The cost of a record follows SPEC.md §4 and the mode (Options.CostMode):
//
//   - recorded: the record's usage.cost.total; none ⇒ unpriced;
//   - calculate: its tokens priced from the price table (pricing.LookupAt at
//     the record's instant, long-context tiers included); no price ⇒
//     unpriced;
//   - auto (default): the recorded cost when present and non-zero for
//     non-zero tokens, else calculated, else unpriced.
//
// session_summary records name no model (the format has none: the summary
// call may use another model than the session), so they are never priced
// from the table: their recorded cost is used when present, else they are
// unpriced and listed under "(no model)". The export stores them the same
// way (provider and model NULL), so `query` over its views (daily_usage,
// unpriced_models, …) gives the report's numbers; the report also ignores
// any model a database from an older sessions-etl gave them.
//
// An unpriced record contributes its tokens but no cost. It is never shown
// as $0: rows and totals that include unpriced records say so
// ("costIncomplete" in JSON, "+ unpriced" in tables), a row with only
// unpriced records has no cost at all (null / "unpriced"), and every report
// lists the unpriced usage by provider and model.
//
// The database holds, for each record, the recorded cost and the cost
// calculated from the table the export used. When that is the table the
// report asks for (the bundled one, unless Options.Prices says otherwise),
// costs are computed in SQL from those columns; otherwise every record is
// priced again in Go with Options.Prices. Both ways give the same result
// (tested).
//
// # Filters
//
//   - Source: the source of the file the record is counted in (pi, atomic,
//     prime, custom).
//   - Project: the session's project (last element of its cwd) or its full
//     cwd, compared exactly.
//   - Model: a case-insensitive substring of the model id or of
//     "provider/model" ("sonnet", "anthropic/", "gpt-5-codex"); records
//     without a model (session_summary) never match.
//
// # Tools
//
// The tools report counts the toolCall blocks of assistant messages per tool
// name, the toolResult messages that answer them (same file, same tool call
// id), how many of those are errors (isError) and the bytes they returned.
// Entries copied from an older session (fork copies) are left out, so a
// forked call is counted once: in a full export, by entries.fork_copy_of;
// in a usage-mode database, by tool_uses.fork_copy, which the ingest derives
// by the same rule among the entries that have tool blocks.
package report
