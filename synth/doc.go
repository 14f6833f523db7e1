// Package synth generates deterministic, realistic homes of agent session
// files (pi-agent, Atomic, Prime Agent) for demos, tests and benchmarks,
// together with a manifest that says what every reader must find in them.
//
// # What a home holds
//
// Files follow SPEC.md §1.1: pi sessions under .pi/agent/sessions/--<cwd>--/,
// legacy flat v1 files in .pi/agent/, Atomic sessions under
// .atomic/agent/sessions/--<cwd>--/, Prime sessions flat in
// .prime/agent/sessions/ plus a few in older per-project directories. The
// versions mix pi v1 (no ids; some "mixed" v1 files whose first entries have
// ids), v2 (hookMessage), v3, Atomic v3, early v4 and v4, and Prime v3.
// Entries are written byte for byte as JSON.stringify writes them, in the
// key order of the format documents. Each home also contains:
//
//   - forks that copy their parent's entries verbatim (a fork whose parent
//     moved from .pi to .atomic, a branch extraction whose header is later
//     than every entry, a fork of a fork, an early-v4 fork next to its v3
//     parent, a v1 branchedFrom copy, and generic forks);
//   - the same session under .pi and .atomic, and a prefix snapshot (the
//     first part of a session under .atomic, same header);
//   - damaged files of every SPEC.md §1.5 kind (torn, corrupt line,
//     concatenated records, duplicate header, duplicate id, dangling parent,
//     parent cycle, future and unrecognized versions, BOM, empty, header
//     only, no final newline, CRLF, invalid UTF-8, unknown entry type, and a
//     JSONL file that is not a session);
//   - a *.jsonl.lock directory and a few non-session files (Manifest.Extras);
//   - with Options.Subagents only, pi sessions running subagents: roll-ups on
//     the parent's toolResult, child files pointing back, some left out
//     (subagents.go; Manifest.SubagentRuns).
//
// # Determinism
//
// The same Options give byte-identical files, mtimes and manifest on every
// run and platform: the generator uses its own integer-only random source,
// each family of files (a root session and the files derived from it) has
// its own seed, and families are written in parallel but merged in order.
// A file's mtime is the instant of its last entry (or of its header, when
// that is later). Forks name their parent with the absolute path of the
// generated parent file, so the bytes also depend on Out.
//
// # Usage bookkeeping (the manifest's "usage")
//
// Billed records follow SPEC.md §4: every assistant message usage,
// toolResult usage, compaction and branch_summary usage, session_summary
// usage, one child_usage record per child_usage_attributed entry, and the
// usage of pi "usage" entries (usage_entry: a cache warm) and oh-my-pi
// "model_usage" entries (a title side call), which every session with an
// assistant message gets once, naming that message's model. A
// record's identity is its entry id and entry timestamp (v1 entries without
// an id: entry timestamp, message timestamp and usage). Within the files
// that are counted (not not_session — except BOM files, which export reads
// with the BOM dropped (SPEC.md §1.5) — future_version, unrecognized_version
// or empty), files are taken in order of header instant, ties broken by more
// entries first and then by path; the first occurrence of an identity is
// counted, later ones are copies. Complete records of torn and corrupt
// files count (both records of a concatenated line); a torn fragment does
// not.
//
// Every record is attributed, for Usage.ByModel, to the provider/model of
// the nearest preceding assistant message in the same file (file order;
// assistant records to their own model), except session_summary records,
// which have no model and are keyed "unknown/unknown". Model changes never
// happen inside a branch that is later abandoned, so the nearest assistant
// in file order and in tree order agree. Records without a recorded
// non-zero cost (v1 usage, session_summary usage, local/llama-custom) are
// also summed under Uncosted; every record's prompt (input + cacheRead +
// cacheWrite) stays below 200 000 tokens. Daily sums use the entry
// timestamp's day in UTC, America/Los_Angeles and Asia/Tokyo.
//
// Costs are list prices rounded to the micro-dollar per component; the
// manifest gives dollar sums and exact micro-dollar sums.
//
// # Size
//
// With Options.Size the plan scales every file's byte target so the total
// of session files is close to Size (within a few percent); tool outputs are
// sized from what is left of each file's budget, so the content stays
// realistic: more and larger read/bash outputs, up to 8 MiB per line.
// Sizes below the natural minimum of the planned sessions are not reached.
package synth
