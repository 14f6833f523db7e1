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

// candidates returns the spellings of a model id that Lookup tries, in
// levels: the id as given with its equivalent spellings first, then each
// stripped form with its own (see "Lookup" in the package documentation).
// Within a level the spellings are equivalent, so the provider's first model
// that matches any of them wins.
func candidates(id string) [][]string {
	var out [][]string
	seen := map[string]bool{}
	level := func(forms ...string) {
		var l []string
		for _, s := range forms {
			if s != "" && !seen[s] {
				seen[s] = true
				l = append(l, s)
			}
		}
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	withAlternates := func(s string, extra ...string) {
		level(append([]string{s, dashToDot(s), dotToDash(s)}, extra...)...)
	}
	withAlternates(id, compactDate.ReplaceAllString(id, "-$1-$2-$3$4"))
	s := id
	if len(s) > len("models/") && strings.EqualFold(s[:len("models/")], "models/") {
		s = s[len("models/"):]
		withAlternates(s)
	}
	s = bedrockVersion.ReplaceAllString(s, "")
	withAlternates(s)
	s = trailingDate.ReplaceAllString(s, "")
	withAlternates(s)
	if len(s) > len("-latest") && strings.EqualFold(s[len(s)-len("-latest"):], "-latest") {
		s = s[:len(s)-len("-latest")]
		withAlternates(s)
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
