package export

import (
	"database/sql/driver"
	"time"
)

// Optional values: the zero value is SQL NULL.
type (
	optStr struct {
		v  string
		ok bool
	}
	optInt struct {
		v  int64
		ok bool
	}
	optFloat struct {
		v  float64
		ok bool
	}
	optTime struct {
		v  time.Time
		ok bool
	}
	optBool struct {
		v  bool
		ok bool
	}
)

func someStr(s string) optStr       { return optStr{s, true} }
func someInt(v int64) optInt        { return optInt{v, true} }
func someFloat(v float64) optFloat  { return optFloat{v, true} }
func someTime(t time.Time) optTime  { return optTime{t, true} }
func someBool(v bool) optBool       { return optBool{v, true} }
func (o optStr) val() driver.Value  { return nullable(o.v, o.ok) }
func (o optInt) val() driver.Value  { return nullable(o.v, o.ok) }
func (o optTime) val() driver.Value { return nullable(o.v, o.ok) }
func (o optBool) val() driver.Value { return nullable(o.v, o.ok) }
func (o optFloat) val() driver.Value {
	return nullable(o.v, o.ok)
}

// int32Val narrows an int64 value to the INTEGER columns' driver type.
func (o optInt) int32Val() driver.Value {
	if !o.ok {
		return nil
	}
	return int32(o.v)
}

// The values methods of the per-file rows take the file's id and session
// id already boxed, so that a row costs no allocation for them.

func nullable[T any](v T, ok bool) driver.Value {
	if !ok {
		return nil
	}
	return v
}

// fileRow is a row of FilesTable.
type fileRow struct {
	fileID        int64
	path, source  string
	size          int64
	mtime         optTime
	inode         optInt
	status        string
	formatVersion optInt
	issueCount    int
	sessionID     optStr
	archived      bool
	compression   optStr
}

func (r *fileRow) values(dst []driver.Value) []driver.Value {
	return append(dst, r.fileID, r.path, r.source, r.size, r.mtime.val(), r.inode.val(), r.status,
		r.formatVersion.int32Val(), int32(r.issueCount), r.sessionID.val(), r.archived, r.compression.val())
}

// sessionRow is a row of SessionsTable.
type sessionRow struct {
	fileID                                    int64
	sessionID, source, path                   string
	cwd, project                              optStr
	createdAt                                 optTime
	parentID, parentPath, parentResolvedBy    optStr
	name                                      optStr
	internal                                  bool
	wfRun, wfStageID, wfStageName             optStr
	formatVersion                             int
	entries, messages, user, assistant, tools int64
	otherMessages                             int64
	firstActivity, lastActivity               optTime
	activeLeaf                                optStr
	torn                                      bool
}

func (r *sessionRow) values(dst []driver.Value) []driver.Value {
	return append(dst, r.fileID, r.sessionID, r.source, r.path, r.cwd.val(), r.project.val(), r.createdAt.val(),
		r.parentID.val(), r.parentPath.val(), r.parentResolvedBy.val(), r.name.val(), r.internal,
		r.wfRun.val(), r.wfStageID.val(), r.wfStageName.val(), int32(r.formatVersion),
		r.entries, r.messages, r.user, r.assistant, r.tools, r.otherMessages,
		r.firstActivity.val(), r.lastActivity.val(), r.activeLeaf.val(), r.torn)
}

// entryRow is a row of EntriesTable.
type entryRow struct {
	entryIndex      int
	entryID         optStr
	parentID        optStr
	lineNo          int
	typ             optStr
	timestamp       optTime
	role            optStr
	customType      optStr
	provider, model optStr
	thinkingLevel   optStr
	toolCallID      optStr  // toolResult messages
	toolName        optStr  // toolResult messages
	isError         optBool // toolResult messages
	onActiveBranch  bool
	copyKey         int64
	contentKey      optInt // v1 entries only (keyV1)
	v1              bool   // a v1 entry: no id, or one migration derived (content_key, no copy_key_a)
	raw             optStr
}

func (r *entryRow) values(dst []driver.Value, fileID, sessionID driver.Value) []driver.Value {
	return append(dst, fileID, sessionID, int32(r.entryIndex), r.entryID.val(), r.parentID.val(), int32(r.lineNo),
		r.typ.val(), r.timestamp.val(), r.role.val(), r.customType.val(), r.provider.val(), r.model.val(),
		r.thinkingLevel.val(), r.toolCallID.val(), r.toolName.val(), r.isError.val(), r.onActiveBranch, nil, r.copyKey, r.contentKey.val(), r.raw.val())
}

// blockRow is a row of ContentBlocksTable.
type blockRow struct {
	entryIndex int
	entryID    optStr
	blockIndex int
	blockType  optStr
	text       optStr
	toolCallID optStr
	toolName   optStr
	arguments  optStr
	mimeType   optStr
	byteSize   optInt
	isError    optBool
}

func (r *blockRow) values(dst []driver.Value, fileID, sessionID driver.Value) []driver.Value {
	return append(dst, fileID, sessionID, int32(r.entryIndex), r.entryID.val(), int32(r.blockIndex), r.blockType.val(),
		r.text.val(), r.toolCallID.val(), r.toolName.val(), r.arguments.val(), r.mimeType.val(), r.byteSize.val(), r.isError.val())
}

// costParts are the four cost components and their total, in USD.
type costParts struct {
	input, output, cacheRead, cacheWrite, total optFloat
}

// usageRow is a row of UsageTable. counted and duplicate_of_session_id are
// filled in by SQL (queries/export.sql derive_counted).
type usageRow struct {
	entryIndex                           int
	entryID                              optStr
	lineNo                               int
	timestamp                            optTime
	kind                                 string
	subKind                              optStr // usage_entry: the entry's kind; model_usage: its purpose
	provider, api, model, stopReason     optStr
	requestedModel                       optStr // message.model when responseModel served the record
	input, output, cacheRead, cacheWrite int64
	cacheWrite1h                         int64 // the 1-hour part of cacheWrite
	totalTokens                          int64
	recorded, calculated                 costParts
	cost                                 costParts // of the run's cost mode (costOf)
	costSource                           string
	copyKeyA                             optInt
	copyKeyB                             int64
	childID, childPath                   optStr // the child sessions a subagent roll-up names (rollupLink), one per line
	rollupLink                           optStr // how: "details" or "tool_call"
	rollupPart                           optInt // k ≥ 1: the part of the k-th child; 0: the rest row (splitRollup)
}

func (r *usageRow) values(dst []driver.Value, fileID, sessionID driver.Value) []driver.Value {
	return append(dst, fileID, sessionID, int32(r.entryIndex), r.entryID.val(), int32(r.lineNo), r.timestamp.val(), r.kind, r.subKind.val(),
		r.provider.val(), r.api.val(), r.model.val(), r.requestedModel.val(), r.stopReason.val(),
		r.input, r.output, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.totalTokens,
		r.recorded.input.val(), r.recorded.output.val(), r.recorded.cacheRead.val(), r.recorded.cacheWrite.val(), r.recorded.total.val(),
		r.calculated.input.val(), r.calculated.output.val(), r.calculated.cacheRead.val(), r.calculated.cacheWrite.val(), r.calculated.total.val(),
		r.cost.input.val(), r.cost.output.val(), r.cost.cacheRead.val(), r.cost.cacheWrite.val(), r.cost.total.val(),
		r.costSource, true, nil, r.copyKeyA.val(), r.copyKeyB, r.childID.val(), r.childPath.val(), nil, r.rollupLink.val(),
		r.rollupPart.int32Val(), false)
}

// toolRow is a row of ToolUsesTable: a content block the tools report
// reads, with its entry's columns.
type toolRow struct {
	entryIndex      int
	blockIndex      int
	timestamp       optTime
	isCall          bool
	isResult        bool
	toolCallID      optStr
	toolName        optStr
	provider, model optStr
	byteSize        optInt
	isError         optBool
	copyKey         int64
	contentKey      optInt
}

func (r *toolRow) values(dst []driver.Value, fileID driver.Value) []driver.Value {
	return append(dst, fileID, int32(r.entryIndex), int32(r.blockIndex), r.timestamp.val(), r.isCall, r.isResult,
		r.toolCallID.val(), r.toolName.val(), r.provider.val(), r.model.val(), r.byteSize.val(), r.isError.val(), r.copyKey, r.contentKey.val(),
		false) // fork_copy: queries/export.sql derive_tool_uses_fork_copy sets it
}

// issueRow is a row of IngestIssuesTable.
type issueRow struct {
	lineNo                  int
	severity, code, message string
}

func (r *issueRow) values(dst []driver.Value, fileID optInt, path string) []driver.Value {
	line := optInt{int64(r.lineNo), r.lineNo > 0}
	return append(dst, fileID.val(), path, line.int32Val(), r.severity, r.code, r.message)
}

// activity widens the session's first and last activity to take in an
// entry's instant (none: unchanged).
func (r *sessionRow) activity(instant optTime) {
	if !instant.ok {
		return
	}
	if !r.firstActivity.ok || instant.v.Before(r.firstActivity.v) {
		r.firstActivity = instant
	}
	if !r.lastActivity.ok || instant.v.After(r.lastActivity.v) {
		r.lastActivity = instant
	}
}
