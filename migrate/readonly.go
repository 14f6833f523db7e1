package migrate

import (
	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/session"
)

// Reasons a file is never rewritten, whatever its status (SPEC.md §7.2).
const (
	ReasonArchived   = "archived"   // an OpenClaw <name>.jsonl.reset.<ts> / .deleted.<ts> archive
	ReasonSnapshot   = "snapshot"   // a <name>.jsonl.bak* or <name>.checkpoint.<id>.jsonl copy
	ReasonCompressed = "compressed" // a .zst or .gz file: read-only
	// ReasonForeignDialect: an oh-my-pi file (it opens with a title slot,
	// or lies in an omp store): omp reads its own versions and rewrites
	// its files itself (SPEC.md §2.3a, §7.2).
	ReasonForeignDialect = "foreign_dialect"
)

// hasTitleSlot reports whether the file at path opens with oh-my-pi's
// title slot.
func hasTitleSlot(path string) bool {
	f, err := ingest.OpenRegular(path)
	if err != nil {
		return false // the transaction reports it
	}
	defer f.Close()
	_, ok := session.ReadTitleSlot(f)
	return ok
}

// readOnly returns the result of a file migrate never rewrites nor moves,
// by its name (ingest.NameKind.ReadOnly): skipped, with the reason. ok is
// false for the other files.
func readOnly(f ingest.File, res FileResult) (FileResult, bool) {
	k := f.Kind
	switch {
	case k.Archived:
		res.Reason, res.Detail = ReasonArchived, "an OpenClaw reset/deleted archive: never rewritten"
	case k.Snapshot:
		res.Reason, res.Detail = ReasonSnapshot, "a backup or checkpoint copy: never rewritten"
	case k.Compression != "":
		res.Reason, res.Detail = ReasonCompressed, "a compressed file: never rewritten"
	case f.Source == ingest.SourceOmp || hasTitleSlot(f.Path):
		res.Reason, res.Detail = ReasonForeignDialect, "an oh-my-pi session: omp upgrades its own files; never rewritten in place"
	default:
		return res, false
	}
	res.Result = ResultSkipped
	return res, true
}
