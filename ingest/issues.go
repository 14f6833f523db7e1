package ingest

import "fmt"

// Severity ranks an [Issue]. Errors make a file unloadable for the agent
// (SPEC.md §1.5); warnings and notes do not.
type Severity string

// Severities, from most to least serious.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
)

// Issue is one problem found in a file, at a 1-based line (0 when the issue
// concerns the whole file). Code is one of the stable Code* strings
// documented in README.md.
type Issue struct {
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// String formats the issue as "line N: severity code: message".
func (i Issue) String() string {
	if i.Line > 0 {
		return fmt.Sprintf("line %d: %s %s: %s", i.Line, i.Severity, i.Code, i.Message)
	}
	return fmt.Sprintf("%s %s: %s", i.Severity, i.Code, i.Message)
}

// Stable issue codes. The reader (this package) emits the line-level ones;
// package validate emits the header and tree ones; discovery emits the
// path-level ones. SPEC.md §1.2–§1.5.
const (
	// Line level (reader).
	CodeTornFinalRecord     = "torn_final_record"    // error: bytes after the last newline are not one complete JSON value
	CodeCorruptLine         = "corrupt_line"         // error: a line that holds no complete JSON value
	CodeConcatenatedRecords = "concatenated_records" // error: a line holding several JSON values, or a value glued to a fragment
	CodeBOM                 = "bom"                  // error: UTF-8 byte-order mark before the header
	CodeInvalidUTF8         = "invalid_utf8"         // note: invalid UTF-8 bytes (the agent decodes them as U+FFFD)
	CodeNoTrailingNewline   = "no_trailing_newline"  // note: a complete final record without '\n'

	// Header level (validate).
	CodeNotSession          = "not_session"          // error: first record is not a session header
	CodeFutureVersion       = "future_version"       // error: header version is an integer above 4
	CodeUnrecognizedVersion = "unrecognized_version" // error: header version is not a positive integer
	CodeDuplicateHeader     = "duplicate_header"     // error: a second "type":"session" record
	CodeMissingCreatedAt    = "missing_created_at"   // warning: a v4 header with neither createdAt nor timestamp
	CodeMixedV1             = "mixed_v1"             // note: a v1 header whose entries already carry ids

	// Entry level (validate).
	CodeInvalidEntry     = "invalid_entry"        // error: an entry that is not an object with a string "type"
	CodeMissingID        = "missing_id"           // error: a v2+ entry without a non-empty string id
	CodeInvalidParentID  = "invalid_parent_id"    // error: a v2+ entry whose parentId is missing or not a string/null
	CodeDuplicateID      = "duplicate_id"         // error: an id used by an earlier entry of the file
	CodeDanglingParent   = "dangling_parent"      // error: a parentId naming no entry of the file
	CodeParentCycle      = "parent_cycle"         // error: following parentId links loops
	CodeUnknownEntryType = "unknown_entry_type"   // warning: a type this tool does not know; the entry is kept
	CodeBadTimestamp     = "bad_timestamp"        // warning: an entry timestamp that is missing or not ISO-8601
	CodeInvalidMessage   = "invalid_message"      // warning: a message entry without an object message and a string role
	CodeBadFirstKept     = "bad_first_kept_index" // warning: a v1 compaction firstKeptEntryIndex naming no entry

	// Path level (discovery, file access).
	CodeBrokenLink    = "broken_link"      // warning: a symbolic link whose target does not exist
	CodeSymlinkCycle  = "symlink_cycle"    // warning: a directory link leading back to one of its ancestors
	CodeUnreadable    = "unreadable"       // error: a file or directory that could not be read
	CodeTooManyIssues = "issues_truncated" // note: more issues than are listed
)
