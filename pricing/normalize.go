package pricing

import (
	"regexp"
	"strings"
)

var (
	// compactDate is the dataset's own rule: a -YYYYMMDD date (followed by
	// "-", ":" or the end) is also tried as -YYYY-MM-DD.
	compactDate = regexp.MustCompile(`-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(-|:|$)`)
	// trailingDate is a snapshot date at the end of an id.
	trailingDate = regexp.MustCompile(`(?:[-@]20\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])|-20\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))$`)
	// bedrockVersion is AWS Bedrock's model version suffix ("-v1:0", "-v2:0").
	bedrockVersion = regexp.MustCompile(`-v\d+:\d+$`)
)

// candidates returns the spellings of a model id that Lookup tries, most
// literal first (see "Lookup" in the package documentation).
func candidates(id string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	addWithAlternates := func(s string) {
		add(s)
		add(dashToDot(s))
		add(dotToDash(s))
	}
	addWithAlternates(id)
	add(compactDate.ReplaceAllString(id, "-$1-$2-$3$4"))
	s := id
	if len(s) > len("models/") && strings.EqualFold(s[:len("models/")], "models/") {
		s = s[len("models/"):]
		addWithAlternates(s)
	}
	s = bedrockVersion.ReplaceAllString(s, "")
	addWithAlternates(s)
	s = trailingDate.ReplaceAllString(s, "")
	addWithAlternates(s)
	if len(s) > len("-latest") && strings.EqualFold(s[len(s)-len("-latest"):], "-latest") {
		s = s[:len(s)-len("-latest")]
		addWithAlternates(s)
	}
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// dashToDot writes version numbers with a dot: "claude-sonnet-4-5" becomes
// "claude-sonnet-4.5". Only a dash between a digit and a single digit (not
// followed by another digit) changes, so "gpt-4o-2024-08-06" stays.
func dashToDot(s string) string { return swapSeparator(s, '-', '.') }

// dotToDash writes version numbers with a dash: "claude-sonnet-4.5" becomes
// "claude-sonnet-4-5", under the same single-digit rule as dashToDot.
func dotToDash(s string) string { return swapSeparator(s, '.', '-') }

func swapSeparator(s string, from, to byte) string {
	b := []byte(s)
	changed := false
	for i := 1; i+1 < len(b); i++ {
		if b[i] == from && isDigit(b[i-1]) && isDigit(b[i+1]) && (i+2 == len(b) || !isDigit(b[i+2])) {
			b[i] = to
			changed = true
		}
	}
	if !changed {
		return ""
	}
	return string(b)
}
