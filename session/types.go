package session

// Entry types (the "type" of a record, SPEC.md §1.4). The header's is
// TypeSession; the others are entries of the tree.
const (
	TypeSession              = "session"
	TypeMessage              = "message"
	TypeModelChange          = "model_change"
	TypeThinkingLevelChange  = "thinking_level_change"
	TypeContextWindowChange  = "context_window_change"
	TypeServiceTierChange    = "service_tier_change"
	TypeCompaction           = "compaction"
	TypeContextCompaction    = "context_compaction"
	TypeContextEdit          = "context_edit"
	TypeBranchSummary        = "branch_summary"
	TypeCustom               = "custom"
	TypeCustomMessage        = "custom_message"
	TypeLabel                = "label"
	TypeSessionInfo          = "session_info"
	TypeSessionSummary       = "session_summary"
	TypeChildUsageAttributed = "child_usage_attributed"
	TypeSessionState         = "session_state"
	TypeAgentStatus          = "agent_status"
	TypeGitState             = "git_state"
	TypeUsage                = "usage"       // pi's usage entries (its cache warmer)
	TypeModelUsage           = "model_usage" // oh-my-pi's side calls
)

// KnownEntryTypes are the entry types of SPEC.md §1.4: an entry of another
// type is unknown_entry_type (a warning; the agent skips it).
var KnownEntryTypes = map[string]bool{
	TypeMessage: true, TypeModelChange: true, TypeThinkingLevelChange: true, TypeContextWindowChange: true,
	TypeServiceTierChange: true, TypeCompaction: true, TypeContextCompaction: true, TypeContextEdit: true,
	TypeBranchSummary: true, TypeCustom: true, TypeCustomMessage: true, TypeLabel: true, TypeSessionInfo: true,
	TypeSessionSummary: true, TypeChildUsageAttributed: true, TypeSessionState: true, TypeAgentStatus: true,
	TypeGitState: true, TypeUsage: true, TypeModelUsage: true,
}

// Message roles (message.role).
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	RoleSystem            = "system"
	RoleHookMessage       = "hookMessage"
)

// Format versions: the header's "version". A file without one is version
// 1; CurrentVersion is what migrate and import write.
const (
	Version1       = 1
	Version2       = 2
	Version3       = 3
	CurrentVersion = 4
)
