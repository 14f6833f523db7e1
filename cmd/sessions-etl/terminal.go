package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/fatih/color"
	"golang.org/x/term"

	"github.com/sessions-etl/sessions-etl/report"
)

// ColorModes are the values of --color.
var colorModes = []string{"auto", "always", "never"}

// useColor decides whether output to a stream is coloured: --color
// always or never decides; with auto, a non-empty NO_COLOR turns colour
// off, a FORCE_COLOR other than "" or "0" turns it on, and otherwise a
// terminal (not TERM=dumb) gets colour.
func useColor(mode string, getenv func(string) string, terminal bool) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
	default:
		return false, usagef("--color %q: want auto, always or never", mode)
	}
	if getenv("NO_COLOR") != "" {
		return false, nil
	}
	if f := getenv("FORCE_COLOR"); f != "" && f != "0" && !strings.EqualFold(f, "false") {
		return true, nil
	}
	return terminal && getenv("TERM") != "dumb", nil
}

// colorize returns a function that wraps text in the attributes, or nil
// when on is false.
func colorize(on bool, attrs ...color.Attribute) func(string) string {
	if !on {
		return nil
	}
	c := color.New(attrs...)
	c.EnableColor() // the decision is useColor's, not the library's
	return func(s string) string { return c.Sprint(s) }
}

// tableStyle is the colours of a report table: bold title and totals,
// cyan column titles, dim rules, yellow unpriced costs.
func tableStyle(on bool) report.Style {
	return report.Style{
		Title:    colorize(on, color.Bold),
		Header:   colorize(on, color.FgCyan, color.Bold),
		Rule:     colorize(on, color.Faint),
		Total:    colorize(on, color.Bold),
		Unpriced: colorize(on, color.FgYellow),
	}
}

// warnLine writes a warning line to stderr, yellow when on.
func warnLine(ios *IO, on bool, line string) {
	if f := colorize(on, color.FgYellow); f != nil {
		line = f(line)
	}
	fmt.Fprintln(ios.ErrOut, line)
}

// streamInfo says whether f is a terminal and how wide (0: unknown).
func streamInfo(f *os.File) (terminal bool, width int) {
	if !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return true, w
	}
	return true, 0
}
