package main

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/report"
)

// showPath is a path as text output prints it: as it is when it is valid
// UTF-8 without control or other non-printing characters, else quoted Go
// style ("a\nb", "caf\xe9"), so that one line names one file and the name
// can be read back (strconv.Unquote) byte for byte.
func showPath(p string) string {
	if !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(p)
		}
	}
	return p
}

// pathBytes is the "path_bytes" of a JSON result: the base64 of a path
// that is not valid UTF-8 (JSON would turn its bad bytes into U+FFFD, and
// the "path" printed would name no file); "" (omitted) otherwise.
func pathBytes(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// problemPath is a problem file's path as report's text output and stderr
// lines show it: relative to the PATH argument it was found under (the
// deepest one; a file argument is shown by its name), else under the home
// directory as ~/… (the default roots), else in full; quoted as showPath
// does. --json keeps the full path (and path_bytes).
func problemPath(ios *IO, roots []ingest.Root, explicit bool, p string) string {
	best := ""
	if explicit {
		for _, r := range roots {
			dir, err := filepath.Abs(r.Path)
			if err != nil {
				continue
			}
			if dir == p {
				dir = filepath.Dir(dir) // a file named as a PATH
			}
			if rel, err := filepath.Rel(dir, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") &&
				(best == "" || len(rel) < len(best)) {
				best = rel
			}
		}
	}
	if best == "" {
		best = p
		if ios.Home != "" {
			best = tildePath(ios, p)
		}
	}
	return showPath(best)
}

// problemListed is how many files of each kind (not used, used in part)
// report's text output names under its stderr line.
const problemListed = 5

// problemDetail is the lines that follow a kind's stderr line in text
// output: one per file (at most problemListed), its path (problemPath),
// status and error codes with their lines, then how many more there are.
func problemDetail(files []report.ProblemFile, show func(string) string) []string {
	var out []string
	for i, f := range files {
		if i == problemListed {
			out = append(out, fmt.Sprintf("  … and %d more", len(files)-problemListed))
			break
		}
		line := "  " + show(f.Path) + "  " + f.Status
		if codes := slices.DeleteFunc(slices.Clone(f.Codes), func(c string) bool { return c == f.Status }); len(codes) > 0 {
			line += ": " + strings.Join(codes, ", ")
		}
		var lines []string
		for _, n := range f.Lines {
			if n > 0 {
				lines = append(lines, strconv.Itoa(n))
			}
		}
		switch {
		case len(lines) == 1:
			line += " (line " + lines[0] + ")"
		case len(lines) > 1 && len(lines) <= 5:
			line += " (lines " + strings.Join(lines, ", ") + ")"
		case len(lines) > 5:
			line += " (lines " + strings.Join(lines[:5], ", ") + ", …)"
		}
		out = append(out, line)
	}
	return out
}

// quoteArgs quotes each argument for a POSIX shell when it needs it, so
// that a command printed for the user can be pasted back.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:+=@%~", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}
