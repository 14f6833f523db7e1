package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// SchemaVersion is the version of the exported tables. It is stored in the
// DuckDB database (table _sessions_etl) and in every Parquet file's
// key-value metadata under SchemaVersionKey. A database of another version
// is rebuilt from the session files. It also changes when the rules that
// fill the tables do, so that old rows are made again: 2 counts distinct
// entries with equal timestamps and tokens apart and leaves session_summary
// usage without a model; 3 identifies entries with migration-derived ids as
// v1 entries (a migrated v1 fork's copies count once); 4 adds content_key to
// entries and tool_uses (fork copies by id or, for v1 entries, by content)
// and prices child usage as its target's model; 5 adds files.archived and
// files.compression (SPEC.md §7.2); 6 bills pi usage entries and
// oh-my-pi model_usage entries (usage.sub_kind) and keeps the tool call id,
// name and isError of every toolResult (entries.tool_call_id, tool_name,
// is_error; a tool_uses row for a result without content blocks), prices
// and groups records by message.responseModel (usage.requested_model keeps
// message.model) and prices 1-hour cache writes (usage.cache_write_1h); 7
// recognises roll-ups naming several children and roll-ups named only by
// their tool call (usage.rollup_link; SPEC.md §7.3); 8 splits a roll-up
// naming several children into one row per child (usage.rollup_part, from
// pi-subagents' details.results[].usage) and a rest row, so that a roll-up
// whose children were read only in part counts each spend once
// (usage.rollup_covered), and adds tool_uses.fork_copy, derived at ingest
// (queries/export.sql derive_tool_uses_fork_copy) instead of at every
// tools report, and stores UTC-aware timestamps (DuckDB TIMESTAMPTZ,
// Parquet isAdjustedToUTC=true; §7.7) with a machine column in every table.
const SchemaVersion = 8

// SchemaVersionKey is the Parquet key-value metadata key (and Arrow schema
// metadata key) holding SchemaVersion.
const SchemaVersionKey = "sessions_etl.schema_version"

// Table names (SPEC.md §3).
const (
	TableFiles         = "files"
	TableSessions      = "sessions"
	TableEntries       = "entries"
	TableContentBlocks = "content_blocks"
	TableUsage         = "usage"
	TableIngestIssues  = "ingest_issues"
	// TableToolUses is the compact table of a ModeUsage database that
	// stands in for entries and content_blocks in the tools report.
	TableToolUses = "tool_uses"
)

// Column is one column of an exported table. The same definition gives the
// Arrow field (and so the Parquet column) and the DuckDB column.
type Column struct {
	Name     string
	Type     arrow.DataType
	Nullable bool
	Doc      string
}

// Table is one exported table: its columns in order, the Arrow schema built
// from them once, and the order its rows are written to Parquet in.
type Table struct {
	Name    string
	Columns []Column
	Schema  *arrow.Schema
	OrderBy string // SQL ORDER BY list for Parquet datasets (deterministic output)
}

// Arrow types used by the tables: timestamps are UTC instants in
// microseconds, UTC-aware (DuckDB TIMESTAMPTZ, Parquet TIMESTAMP(MICROS,
// isAdjustedToUTC=true); SPEC.md §3, §7.7).
var (
	tBigint    = arrow.PrimitiveTypes.Int64
	tInt       = arrow.PrimitiveTypes.Int32
	tDouble    = arrow.PrimitiveTypes.Float64
	tBool      = arrow.FixedWidthTypes.Boolean
	tString    = arrow.BinaryTypes.String
	tTimestamp = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

func col(name string, t arrow.DataType, nullable bool, doc string) Column {
	return Column{Name: name, Type: t, Nullable: nullable, Doc: doc}
}

const (
	null    = true
	notNull = false
)

// MachineColumn is the last column of every table: the --machine name of
// the export (SPEC.md §7.7; default the host name). The rows of one export
// share it; the loader adds it (the row producers give the other columns).
const MachineColumn = "machine"

var machineCol = col(MachineColumn, tString, notNull, "the exporting machine (--machine, default the host name; SPEC.md §7.7); in a partitioned Parquet root, the machine=NAME directory instead")

func newTable(name, orderBy string, cols ...Column) *Table {
	cols = append(cols, machineCol)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	md := arrow.NewMetadata([]string{SchemaVersionKey}, []string{strconv.Itoa(SchemaVersion)})
	return &Table{Name: name, Columns: cols, Schema: arrow.NewSchema(fields, &md), OrderBy: orderBy}
}

var fileIDCol = col("file_id", tBigint, notNull, "the file's export id (files.file_id); a file that changes gets a new id")

// FilesTable: one row per discovered path (SPEC.md §3 files).
var FilesTable = newTable(TableFiles, "file_id",
	fileIDCol,
	col("path", tString, notNull, "absolute path as discovered"),
	col("source", tString, notNull, "the store's source label: pi, atomic, prime, omp, openclaw, kimchi, a config store's name, or custom"),
	col("size_bytes", tBigint, notNull, "size when read"),
	col("mtime", tTimestamp, null, "modification time when read (UTC); null for paths that could not be stat'ed"),
	col("inode", tBigint, null, "inode number when read (incremental state)"),
	col("status", tString, notNull, "SPEC.md §1.5 verdict, or unreadable"),
	col("format_version", tInt, null, "1–4; null when the header gives no known version"),
	col("issue_count", tInt, notNull, "issues of every severity found in the file (also those beyond the listing cap)"),
	col("session_id", tString, null, "the header's session id, when it has one"),
	col("archived", tBool, notNull, "an OpenClaw archive beside the live file (<name>.jsonl.reset.<ts>, .deleted.<ts>; SPEC.md §7.2)"),
	col("compression", tString, null, "zstd or gzip when the file is compressed (read decompressed); null otherwise"),
)

// SessionsTable: one row per session file whose records are used (SPEC.md §3 sessions).
var SessionsTable = newTable(TableSessions, "file_id",
	fileIDCol,
	col("session_id", tString, notNull, "header id"),
	col("source", tString, notNull, "pi, atomic, prime or custom"),
	col("path", tString, notNull, "the file"),
	col("cwd", tString, null, "header cwd"),
	col("project", tString, null, "last path element of cwd"),
	col("created_at", tTimestamp, null, "header createdAt (v4) or timestamp; null when missing or not ISO-8601"),
	col("parent_session_id", tString, null, "header parentSessionId, else the session id resolved from parentSession / branchedFrom"),
	col("parent_session_path", tString, null, "header parentSession (or v1 branchedFrom) path, verbatim"),
	col("parent_resolved_by", tString, null, "how parent_session_id was found: header, path, file_name, id_in_file_name; null when unresolved"),
	col("name", tString, null, "name of the latest session_info entry; null when never named or cleared"),
	col("internal", tBool, notNull, "workflow-owned: internal is exactly true and the workflow linkage is complete"),
	col("workflow_run_id", tString, null, "header workflow.runId"),
	col("workflow_stage_id", tString, null, "header workflow.stageId"),
	col("workflow_stage_name", tString, null, "header workflow.stageName"),
	col("format_version", tInt, notNull, "1–4"),
	col("entry_count", tBigint, notNull, "entries exported for the file"),
	col("message_count", tBigint, notNull, "message entries"),
	col("user_messages", tBigint, notNull, "messages with role user"),
	col("assistant_messages", tBigint, notNull, "messages with role assistant"),
	col("tool_result_messages", tBigint, notNull, "messages with role toolResult"),
	col("other_messages", tBigint, notNull, "messages with any other role (bashExecution, custom, hookMessage, branchSummary, compactionSummary, system, …)"),
	col("first_activity", tTimestamp, null, "earliest entry instant"),
	col("last_activity", tTimestamp, null, "latest entry instant"),
	col("active_leaf_id", tString, null, "id of the last entry (the active leaf)"),
	col("torn", tBool, notNull, "the file's final record is torn (its complete records are used)"),
)

// EntriesTable: one row per entry (every complete record after the header).
var EntriesTable = newTable(TableEntries, "file_id, entry_index",
	fileIDCol,
	col("session_id", tString, notNull, "header id of the file"),
	col("entry_index", tInt, notNull, "0-based position among the file's entries (unique per file; also for v1 entries without id)"),
	col("entry_id", tString, null, "entry id; null for v1 entries"),
	col("parent_id", tString, null, "parentId"),
	col("line_no", tInt, notNull, "1-based line of the record (records of a concatenated line share it)"),
	col("type", tString, null, "entry type; null when not a string"),
	col("timestamp", tTimestamp, null, "entry ISO timestamp, else message.timestamp (Unix ms)"),
	col("role", tString, null, "message.role of message entries"),
	col("custom_type", tString, null, "customType of custom entries and messages"),
	col("provider", tString, null, "assistant message provider; model_change provider"),
	col("model_id", tString, null, "assistant message model; model_change modelId"),
	col("thinking_level", tString, null, "thinking_level_change thinkingLevel"),
	col("tool_call_id", tString, null, "toolCallId of toolResult messages (kept whatever their content: [], missing or a string)"),
	col("tool_name", tString, null, "toolName of toolResult messages"),
	col("is_error", tBool, null, "isError of toolResult messages"),
	col("on_active_branch", tBool, notNull, "on the path from the active leaf (last entry) to the root"),
	col("fork_copy_of", tString, null, "session id of the oldest session holding the same entry when that is another file (SPEC.md §4)"),
	col("copy_key", tBigint, notNull, "64-bit hash of (entry id, entry timestamp), for an entry without id of the id migration gives it; fork_copy_of compares it"),
	col("content_key", tBigint, null, "for a v1 entry (no id, or one migration derived), 64-bit hash of its members other than id, parentId and firstKeptEntryIndex/Id; fork_copy_of compares it too"),
	col("raw_json", tString, null, "the record's JSON text (only with --with-raw)"),
)

// ContentBlocksTable: one row per content block of message and custom_message entries.
var ContentBlocksTable = newTable(TableContentBlocks, "file_id, entry_index, block_index",
	fileIDCol,
	col("session_id", tString, notNull, "header id of the file"),
	col("entry_index", tInt, notNull, "entries.entry_index of the entry"),
	col("entry_id", tString, null, "entries.entry_id"),
	col("block_index", tInt, notNull, "0-based position in the content array (0 for string content)"),
	col("block_type", tString, null, "text, thinking, image, toolCall, …"),
	col("text", tString, null, "text of text blocks, thinking of thinking blocks (null with --no-content)"),
	col("tool_call_id", tString, null, "toolCall id; toolCallId of tool results"),
	col("tool_name", tString, null, "toolCall name; toolName of tool results"),
	col("arguments_json", tString, null, "toolCall arguments as JSON text (null with --no-content)"),
	col("mime_type", tString, null, "image mimeType"),
	col("byte_size", tBigint, null, "UTF-8 bytes of text/thinking, bytes of arguments_json, decoded bytes of image data"),
	col("is_error", tBool, null, "isError of tool results"),
)

// UsageTable: one row per billed record (SPEC.md §3 usage, §4).
var UsageTable = newTable(TableUsage, "file_id, entry_index, rollup_part NULLS FIRST",
	fileIDCol,
	col("session_id", tString, notNull, "header id of the file"),
	col("entry_index", tInt, notNull, "entries.entry_index of the billed entry"),
	col("entry_id", tString, null, "entry id; null for v1 entries"),
	col("line_no", tInt, notNull, "1-based line of the record"),
	col("timestamp", tTimestamp, null, "entry ISO timestamp, else message.timestamp"),
	col("kind", tString, notNull, "assistant, tool_result, compaction, branch_summary, session_summary, child_usage, usage_entry, model_usage"),
	col("sub_kind", tString, null, "usage_entry: the usage entry's own kind (e.g. cache_warm); model_usage: its purpose (e.g. title)"),
	col("provider", tString, null, "the message's provider, else that of the nearest preceding assistant, last model_change or v1 header; null for session_summary (no model recorded)"),
	col("api", tString, null, "assistant message api"),
	col("model", tString, null, "the model that served the record (message.responseModel when present, SPEC.md §7.4), else the message's model, else as for provider"),
	col("requested_model", tString, null, "assistant messages: the model asked for (message.model); model differs from it when message.responseModel names the model that served the request (a router alias such as openrouter/auto)"),
	col("stop_reason", tString, null, "assistant message stopReason"),
	col("input", tBigint, notNull, "uncached input tokens"),
	col("output", tBigint, notNull, "output tokens"),
	col("cache_read", tBigint, notNull, "cache read tokens"),
	col("cache_write", tBigint, notNull, "cache write tokens (5-minute and 1-hour)"),
	col("cache_write_1h", tBigint, notNull, "the part of cache_write written to the 1-hour cache: usage.cacheWrite1h (pi) or usage.cttl.ephemeral1h (oh-my-pi); priced at the 1-hour rate (SPEC.md §7.4)"),
	col("total_tokens", tBigint, notNull, "usage.totalTokens when valid, else the sum of the four"),
	col("recorded_cost_input", tDouble, null, "usage.cost.input (USD)"),
	col("recorded_cost_output", tDouble, null, "usage.cost.output (USD)"),
	col("recorded_cost_cache_read", tDouble, null, "usage.cost.cacheRead (USD)"),
	col("recorded_cost_cache_write", tDouble, null, "usage.cost.cacheWrite (USD)"),
	col("recorded_cost_total", tDouble, null, "usage.cost.total (USD); null when absent"),
	col("calculated_cost_input", tDouble, null, "priced from the table (USD); null when the model has no price"),
	col("calculated_cost_output", tDouble, null, "as calculated_cost_input"),
	col("calculated_cost_cache_read", tDouble, null, "as calculated_cost_input"),
	col("calculated_cost_cache_write", tDouble, null, "as calculated_cost_input"),
	col("calculated_cost_total", tDouble, null, "as calculated_cost_input"),
	col("cost_input", tDouble, null, "cost of the export's --cost mode (USD); null when unpriced"),
	col("cost_output", tDouble, null, "as cost_input"),
	col("cost_cache_read", tDouble, null, "as cost_input"),
	col("cost_cache_write", tDouble, null, "as cost_input"),
	col("cost_total", tDouble, null, "as cost_input"),
	col("cost_source", tString, notNull, "recorded, calculated or unpriced"),
	col("counted", tBool, notNull, "false for a copy of a record counted in an older session (SPEC.md §4) and for a row whose spend is counted elsewhere (rollup_covered: a subagent roll-up whose child sessions were read, §7.3)"),
	col("duplicate_of_session_id", tString, null, "for copies: the session the record is counted in"),
	col("copy_key_a", tBigint, null, "64-bit hash of (entry id, entry timestamp); null for a v1 record: no entry id, or the id migration derived for it"),
	col("copy_key_b", tBigint, notNull, "64-bit hash of (kind, entry timestamp, message timestamp, input, output, cache_read, cache_write)"),
	col("rollup_child_id", tString, null, "tool_result rows: the child session id a subagent roll-up names (details.childSessionId, sessionId or session.id; the same in each details.results[] / children[] item, one line per child, aligned with rollup_child_path; or the tool call's arguments)"),
	col("rollup_child_path", tString, null, "tool_result rows: the child session file a subagent roll-up names (details.childSessionFile, sessionFile, sessionPath or session.path; one line per child, as rollup_child_id)"),
	col("rollup_of_session_id", tString, null, "a subagent roll-up (and its rest row) whose child sessions are in the export, all or some: those found (one line each, in the order named); a part row: its child, when found (SPEC.md §7.3)"),
	col("rollup_link", tString, null, "how the roll-up names its children: details, or tool_call (only the tool call's arguments; such a child must point back at this session)"),
	col("rollup_part", tInt, null, "a roll-up naming several children is also split (SPEC.md §7.3): k ≥ 1 for the part of its k-th child (pi-subagents' details.results[].usage; only when given), 0 for the rest row (the roll-up less the parts and the children read that have none, never below 0); null for every other row, the roll-up itself included"),
	col("rollup_covered", tBool, notNull, "the row's spend is counted elsewhere, so the row is not (SPEC.md §7.3): a roll-up with one child or more read (then the children's records, its parts and its rest row stand for it), a part whose child was read, a part or rest row of a roll-up whose children were all read or none were (the roll-up itself then counts, or nothing does), a rest row with nothing left"),
)

// IngestIssuesTable: one row per issue found reading a file or a path.
var IngestIssuesTable = newTable(TableIngestIssues, "file_id, line_no NULLS FIRST, code, message",
	col("file_id", tBigint, null, "files.file_id; null for path-level issues (broken links, link cycles, unreadable paths)"),
	col("path", tString, notNull, "the file or path"),
	col("line_no", tInt, null, "1-based line; null when the issue concerns the whole file"),
	col("severity", tString, notNull, "error, warning or note"),
	col("code", tString, notNull, "stable issue code (README.md)"),
	col("message", tString, notNull, "what is wrong"),
)

// ToolUsesTable: in a ModeUsage database, one row per block the tools
// report reads — every toolCall block (a call) and every block of a
// toolResult message that has a tool call id (part of a result) — with
// what it needs of the block's entry (sessions and files join by file_id).
// Its rows are those content_blocks rows joined with their entries'
// columns, so the tool_calls view and `report tools` give the same answers
// on both kinds of database.
// Which blocks belong to fork copies (fork_copy) is worked out once per
// ingest that changes the files (queries/export.sql
// derive_tool_uses_fork_copy), as entries.fork_copy_of is in ModeFull; the
// tools report and the tool_calls view only filter on it.
var ToolUsesTable = newTable(TableToolUses, "file_id, entry_index, block_index",
	fileIDCol,
	col("entry_index", tInt, notNull, "entries.entry_index of the block's entry"),
	col("block_index", tInt, notNull, "content_blocks.block_index"),
	col("timestamp", tTimestamp, null, "the entry's timestamp (entries.timestamp)"),
	col("is_call", tBool, notNull, "a toolCall block (content_blocks.block_type = 'toolCall')"),
	col("is_result", tBool, notNull, "a block of a toolResult message with a tool call id (entries.role = 'toolResult'); a toolResult without content blocks ([], missing) has one row of its own, block_index -1"),
	col("tool_call_id", tString, null, "content_blocks.tool_call_id"),
	col("tool_name", tString, null, "content_blocks.tool_name"),
	col("provider", tString, null, "the entry's provider (entries.provider)"),
	col("model_id", tString, null, "the entry's model (entries.model_id)"),
	col("byte_size", tBigint, null, "content_blocks.byte_size"),
	col("is_error", tBool, null, "content_blocks.is_error"),
	col("copy_key", tBigint, notNull, "entries.copy_key: blocks of entries an older session holds too are fork copies (fork_copy), as entries.fork_copy_of decides"),
	col("content_key", tBigint, null, "entries.content_key, compared like copy_key"),
	col("fork_copy", tBool, notNull, "the block's entry is a fork copy: an older session (in session order) holds an entry with tool blocks and the same copy_key or content_key (as entries.fork_copy_of decides for all entries); the tools report and the tool_calls view leave these rows out"),
)

// Tables lists every exported table in load order (the tables of a
// ModeFull export, SPEC.md §3).
var Tables = []*Table{FilesTable, SessionsTable, EntriesTable, ContentBlocksTable, UsageTable, IngestIssuesTable}

// UsageTables lists the tables of a ModeUsage database in load order.
var UsageTables = []*Table{FilesTable, SessionsTable, UsageTable, IngestIssuesTable, ToolUsesTable}

// allTables is every table either mode creates.
var allTables = append(append([]*Table(nil), Tables...), ToolUsesTable)

// TableByName returns the table called name, or nil.
func TableByName(name string) *Table {
	for _, t := range allTables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// duckType is the DuckDB type of an Arrow type used by the tables.
func duckType(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT64:
		return "BIGINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.STRING:
		return "VARCHAR"
	case arrow.TIMESTAMP:
		return "TIMESTAMP WITH TIME ZONE" // TIMESTAMPTZ
	}
	panic(fmt.Sprintf("export: no DuckDB type for Arrow %s", t))
}

// CreateSQL returns the DuckDB DDL of the table.
func (t *Table) CreateSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", t.Name)
	for i, c := range t.Columns {
		fmt.Fprintf(&b, "  %s %s", c.Name, duckType(c.Type))
		if !c.Nullable {
			b.WriteString(" NOT NULL")
		}
		if i < len(t.Columns)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(")")
	return b.String()
}

// dataColumns is how many values a row producer gives: every column but
// the machine.
func (t *Table) dataColumns() int { return len(t.Columns) - 1 }

// ColumnList returns the column names joined by ", ".
func (t *Table) ColumnList() string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
