// Package export turns a home of session files into the tables of SPEC.md
// §3 — files, sessions, entries, content_blocks, usage, ingest_issues — in
// a DuckDB database (with the views of queries/views.sql) and/or Parquet
// datasets (one directory per table), incrementally.
//
// # Tables
//
// The columns are defined once, in schema.go (Tables), which gives both the
// Arrow/Parquet schema and the DuckDB DDL; `sessions-etl export --help` and
// the Column.Doc strings describe each column. Beyond SPEC.md §3:
//
//   - Every table has file_id (files.file_id; ingest_issues: NULL for path
//     issues such as broken links). A file that changes is read again under
//     a new file_id, so ids of unchanged files are stable across runs.
//   - files: inode and mtime (the incremental state: a file whose path,
//     size, mtime and inode are unchanged is not read again) and session_id.
//   - sessions: one row per session file whose records are used, so a
//     session id can have several rows (a backup, the same session under
//     ~/.pi and ~/.atomic). message_count is split into message_count (all),
//     user_messages, assistant_messages, tool_result_messages and
//     other_messages (every other role). parent_session_path keeps the
//     header's parentSession / branchedFrom path and parent_resolved_by says
//     how parent_session_id was found (header, path, file_name,
//     id_in_file_name).
//   - entries: entry_index (position among the file's entries; unique per
//     file, also for v1 entries without id), copy_key and content_key (the
//     identities fork_copy_of is computed from: copy_key hashes the entry
//     id and timestamp — for an entry without id, the id migration will
//     give it; content_key, for a v1 entry only — no id, or a derived one,
//     see Counted once — hashes its members other than id, parentId and
//     firstKeptEntryIndex/Id).
//   - content_blocks: entry_index joins entries. byte_size is the UTF-8 size
//     of text and thinking, the size of arguments_json for tool calls, and
//     the decoded size of an image's base64 data (c08: 3 145 728 bytes).
//     Blocks of toolResult messages carry the message's toolCallId,
//     toolName and isError.
//   - usage: entry_index, line_no; recorded_cost_* (usage.cost.*, NULL when
//     absent) and calculated_cost_* (from the price table, NULL when the
//     model has no price) next to SPEC's cost_* / cost_source, which follow
//     the export's --cost mode; copy_key_a and copy_key_b, 64-bit hashes of
//     the record identities counted uses.
//
// # Modes
//
// Options.Mode says which tables a database keeps. ModeFull (the default,
// `sessions-etl export`) keeps every table above. ModeUsage is how `report`
// ingests: files, sessions, usage and ingest_issues exactly as ModeFull
// has them, and instead of entries and content_blocks the compact
// tool_uses (ToolUsesTable): one row per toolCall block and per block of a
// toolResult message with a tool call id, with the columns of its entry
// the tools report reads (timestamp, provider, model, copy_key). Nothing
// else of an entry or a block is built, measured or stored, and no
// fork_copy_of is derived: instead, which tool blocks belong to fork copies
// (tool_uses.fork_copy) is derived among the entries that have tool blocks,
// by the same rule, in the same transaction as the other cross-file
// columns (queries/export.sql derive_tool_uses_fork_copy; a fork copies
// entries verbatim, so this gives the same answer), and the tools report
// and tool_calls only filter on it. Every view of queries/views.sql
// exists in both modes (tool_calls over tool_uses in ModeUsage).
// Options.SkipToolUses makes a ModeUsage database with tool_uses left empty
// (no_tool_uses in its state: ReadsSkippedToolUses), until a run without
// it rebuilds the database. A ModeUsage database writes no Parquet. The mode is stored in the database
// (ReadMode); a run in the other mode rebuilds it from the files
// (Summary.Rebuilt says why a run read every file).
//
// Timestamps are UTC instants in microseconds, UTC-aware (DuckDB
// TIMESTAMPTZ, Parquet TIMESTAMP(MICROS, isAdjustedToUTC=true), SPEC.md
// §7.7). Every DuckDB connection the tool opens (NewConnector, OpenDB)
// runs with TimeZone UTC, so that DuckDB's casts to DATE and date parts do
// not depend on the machine's zone. Strings
// are valid UTF-8: invalid bytes read as U+FFFD, as the agents read them.
//
// # What a file gives
//
// Files whose status is not_session (except a BOM before a good header,
// read with the BOM dropped), future_version, unrecognized_version, empty
// or unreadable give a files row and their issues only; the view
// rejected_files lists them (empty files aside) with their first error, and
// Summary.RejectedFiles the first RejectedListed. A path that cannot be
// read at all (a directory without permission, a FIFO or device named as a
// PATH) gives no files row, only an ingest_issues row with a NULL file_id;
// rejected_files lists it with status unreadable and it counts in
// Summary.Rejected and Summary.RejectedPaths. The complete
// records of torn and corrupt files are used, each record of a concatenated
// line too; sessions.torn flags the torn ones. Usage rows follow SPEC.md §4
// (see the Kind* constants): an assistant message's usage, a toolResult's,
// compaction, branch_summary and session_summary usage, and one
// child_usage row per child_usage_attributed record, priced as the model of
// its target assistant message (the child's usage is folded into it) when
// the target is in the file; pi "usage" entries (usage_entry, sub_kind
// their kind) and oh-my-pi "model_usage" entries (sub_kind their purpose),
// priced as the provider and model they name. Other usage without its own model is
// attributed to the nearest preceding assistant message of the file, else
// the last model_change, else the v1 header — except
// session_summary usage: the format records no model for the summary call,
// so its provider and model are NULL and it is priced only from a recorded
// cost (otherwise unpriced, listed by unpriced_models), as `report` does.
//
// # Counted once
//
// Sessions are ordered by header instant (createdAt or timestamp; missing
// or unparseable last), then session id, then path; rows of a file by
// entry_index. A billed record is identified by its entry id and entry
// timestamp (copy_key_a); a v1 record, which has no id, by its kind, entry
// timestamp, message timestamp and tokens (copy_key_b). A record whose id
// is the one migration derives for a v1 entry of its session (or of its
// parent session: a fork of a migrated session copies its ids), at its
// position (session.IsDerivedEntryID), is a v1 record too: migrating a v1
// session and a fork of it gives their shared records different ids, so
// the ids identify nothing (such rows have no copy_key_a). A usage row with
// copy_key_a is a copy when an earlier row has its copy_key_a, or an
// earlier v1 row has its copy_key_b (a v1 original of an imported copy
// that has ids of its own); rows with copy_key_a are never matched with
// each other by copy_key_b, so distinct entries with equal timestamps and
// tokens all count. A v1 row is a copy when any earlier row has its
// copy_key_b. A copy has counted = false and
// duplicate_of_session_id = the session of the earliest row that makes it
// one (queries/export.sql derive_counted).
// entries.fork_copy_of names the first session holding the same entry
// (the same copy_key, or for v1 entries the same content_key) when that is
// another file (queries/export.sql derive_fork_copies). Neither uses parentSession or
// a fork's header time, so moved parents and late headers do not matter.
// A subagent roll-up (SPEC.md §7.3) whose children were read is not
// counted either (rollup_covered; derive_rollups). One naming several
// children is also stored split (splitRollup): a part per child whose
// details.results[] item carries its usage (rollup_part k) and a rest row
// (rollup_part 0). Read in part, it counts the parts of the children not
// read and the rest, which derive_rollup_rest reduces to the roll-up less
// the parts and the children read without one, so each spend counts once
// (its calculated cost: its tokens at the roll-up's rates, so a rest with
// no token and no recorded cost left is nothing and does not count).
// These columns are recomputed with SQL (queries/export.sql) after every
// run that changed a file.
//
// # How a run works
//
// The DuckDB database is the state of every export (without a DuckDB sink,
// ParquetDir/_state.duckdb); it also records the roots of the last run,
// which ReadInfo returns (`query` lists report databases by them). A run stats the files, reads the new and
// changed ones in parallel — one ingest.Reader feeding both a
// validate.Checker and the extractor, so each file is read once — and
// appends their rows through DuckDB's appender, deletes the rows of changed
// and deleted files, recomputes the derived columns and commits, all in one
// transaction: a failed run leaves the previous export. The cost columns
// of a usage row are set as it is read (the export's --cost mode); the SQL
// of queries/export.sql apply_cost_mode re-costs every row only when the
// mode changes, and the rest rows of roll-ups when they are derived again. Parquet datasets are then rewritten for the tables that
// changed, each into a new directory swapped in whole (renameat2
// RENAME_EXCHANGE on Linux), then the marker file _sessions_etl.json.
// content_blocks, most of the bytes, is written straight from the rows read
// and updated part by part (content.go; one goroutine gathers a row group
// while another encodes, compresses and writes the one before); the other
// tables are read back from DuckDB in slices of files, into zstd Parquet
// files of row groups of at most RowGroupRows rows or about RowGroupBytes,
// split into several files past PartFileBytes, each with
// sessions_etl.schema_version in its key-value metadata.
//
// # Memory
//
// Peak memory is bounded by the largest line and fixed buffers, not by the
// home: DuckDB's memory_limit (DefaultMemoryLimit); the appender handed to
// DuckDB every appenderFlushBytes of strings (DuckDB's memory outside its
// buffer pool grows with each flush); DuckDB row groups of
// exportRowGroupRows rows in a ModeFull database (DuckDB keeps a row group
// in memory until it is full: at its default size, hundreds of MB of
// message text, spilled to disk and read back); Parquet row groups of
// about RowGroupBytes, their string buffers reserved once per row group;
// Zstd page encoders with a 2 MiB window (zstd.go). The command also sets
// a soft limit on the Go heap.
//
// A value larger than a Parquet row group (one 200 MB tool output) is held
// about once: decoded from the line into memory of its exact size
// (ingest.Tape.Str), written to Parquet as a row group of its own whose
// Arrow column points at that string (no builder copy), in version 2 data
// pages (compressed where the encoder put them) without min/max statistics
// for the text columns (copies of whole values no reader uses); DuckDB's
// memory limit is raised to hold it (a string larger than DuckDB's blocks
// takes one buffer of its pool: under a smaller limit the append failed).
// Measured in BENCHMARKS.md: 1.1 GB peak RSS for a 187 MB block to both
// sinks, 2.3 GB and three runs before.
// A value longer than any sink can hold (MaxValueBytes, 2 GiB − 1: Arrow
// and Parquet lengths are 32-bit) is not decoded: it is stored as NULL,
// with a value_too_large row in ingest_issues at its line.
package export
