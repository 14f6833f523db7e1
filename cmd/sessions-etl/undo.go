package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/fstx"
)

// printUndo runs undo (migrate's or import's), printing one line per file
// (or JSON Lines) and a summary; it returns errFailed when some file could
// not be restored.
func printUndo(ios *IO, asJSON, verbose bool, dir string, undo func(emit func(fstx.UndoResult) error) error) error {
	out := bufio.NewWriter(ios.Out)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	counts := map[string]int{}
	problems, backups, dirs := 0, 0, 0
	err := undo(func(r fstx.UndoResult) error {
		if r.Op == fstx.OpMkdir {
			dirs++
		} else {
			counts[r.Result]++
		}
		if r.Result == fstx.UndoFailed || r.Result == fstx.UndoChanged {
			problems++
			if r.Backup != "" {
				backups++
			}
		}
		if asJSON {
			return enc.Encode(struct {
				fstx.UndoResult
				PathBytes string `json:"path_bytes,omitempty"`
			}{r, pathBytes(r.Path)})
		}
		if r.Op == fstx.OpMkdir && !verbose {
			return nil
		}
		if r.Detail != "" {
			fmt.Fprintf(out, "%-16s %s: %s\n", r.Result, showPath(r.Path), r.Detail)
		} else {
			fmt.Fprintf(out, "%-16s %s\n", r.Result, showPath(r.Path))
		}
		return nil
	})
	if errors.Is(err, fstx.ErrWrongRun) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := enc.Encode(map[string]any{"summary": map[string]any{"run_dir": dir, "by_result": counts, "directories_removed": dirs}}); err != nil {
			return err
		}
		if problems > 0 {
			return errFailed // the same exit status as the human output
		}
		return nil
	}
	printUndoSummary(out, dir, counts, dirs, problems, backups)
	if problems > 0 {
		return errFailed
	}
	return nil
}

// printUndoSummary is the last lines of undo's text output: the files by
// result, and where the originals of those not restored stay.
func printUndoSummary(out *bufio.Writer, dir string, counts map[string]int, dirs, problems, backups int) {
	var parts []string
	for _, k := range []string{fstx.UndoRestored, fstx.UndoRemoved, fstx.UndoAlready, fstx.UndoChanged, fstx.UndoFailed} {
		if n := counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if dirs > 0 {
		parts = append(parts, plural(dirs, "empty directory", "empty directories")+" removed")
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to do")
	}
	fmt.Fprintf(out, "\nUndo of %s: %s\n", dir, strings.Join(parts, ", "))
	if problems > 0 {
		fmt.Fprintf(out, "%s not restored (see above)", plural(problems, "file was", "files were"))
		switch {
		case backups == 1 && problems == 1:
			fmt.Fprintf(out, "; its original stays in %s/backup/", dir)
		case backups == problems:
			fmt.Fprintf(out, "; their originals stay in %s/backup/", dir)
		case backups > 0:
			fmt.Fprintf(out, "; the originals of %d of them stay in %s/backup/", backups, dir)
		}
		fmt.Fprintln(out, ".")
	}
}

// plural spells "1 file" / "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// undoDefaultRoots are the roots undo allows for a journal that records
// none (a run of an older version): the default session roots and the
// default import target.
func undoDefaultRoots(ios *IO) []string {
	var roots []string
	for _, r := range ingest.DefaultRootCandidates(ios.Home) {
		roots = append(roots, r.Path)
	}
	return roots
}
