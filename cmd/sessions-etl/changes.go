package main

import (
	"fmt"
	"io"

	"github.com/sessions-etl/sessions-etl/upgrade"
)

// printChanges writes the edits of one migrated or imported file under its
// result line: repairs and notes always (a repair changes content beyond
// the format upgrade), the upgrade's changes with details (--dry-run,
// --verbose).
func printChanges(w io.Writer, repairs, changes, notes []upgrade.Change, details bool) {
	for _, c := range repairs {
		fmt.Fprintf(w, "    line %d: repair: %s\n", c.Line, c.What)
	}
	if details {
		for _, c := range changes {
			fmt.Fprintf(w, "    line %d: %s\n", c.Line, c.What)
		}
	}
	for _, c := range notes {
		if c.Line > 0 {
			fmt.Fprintf(w, "    line %d: note: %s\n", c.Line, c.What)
		} else {
			fmt.Fprintf(w, "    note: %s\n", c.What)
		}
	}
}
