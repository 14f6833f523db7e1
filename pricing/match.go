package pricing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// matcher is one node of a match rule (see the package documentation):
// exactly one of its fields is set.
type matcher struct {
	equals, startsWith, endsWith, contains string // lower-cased
	regex                                  *regexp.Regexp
	or, and                                []*matcher
	not                                    *matcher
}

// matches reports whether the rule holds for id. Text comparisons ignore
// case; a regular expression matches if it matches id as given or lower-cased.
func (m *matcher) matches(id, lower string) bool {
	switch {
	case m.or != nil:
		for _, s := range m.or {
			if s.matches(id, lower) {
				return true
			}
		}
		return false
	case m.and != nil:
		for _, s := range m.and {
			if !s.matches(id, lower) {
				return false
			}
		}
		return true
	case m.not != nil:
		return !m.not.matches(id, lower)
	case m.regex != nil:
		return m.regex.MatchString(id) || (lower != id && m.regex.MatchString(lower))
	case m.equals != "":
		return lower == m.equals
	case m.startsWith != "":
		return strings.HasPrefix(lower, m.startsWith)
	case m.endsWith != "":
		return strings.HasSuffix(lower, m.endsWith)
	case m.contains != "":
		return strings.Contains(lower, m.contains)
	}
	return false
}

var matchKeys = []string{"equals", "starts_with", "ends_with", "contains", "regex", "or", "and", "not"}

// parseMatcher reads a match rule; path names its place in the file for
// error messages.
func parseMatcher(raw json.RawMessage, path string) (*matcher, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, fmt.Errorf("%s: empty match rule", path)
	}
	var node map[string]json.RawMessage
	if err := json.Unmarshal(raw, &node); err != nil {
		return nil, fmt.Errorf("%s: match rule must be an object with one of %s", path, strings.Join(matchKeys, ", "))
	}
	if len(node) != 1 {
		keys := make([]string, 0, len(node))
		for k := range node {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("%s: match rule must have exactly one key, has %d (%s)", path, len(node), strings.Join(keys, ", "))
	}
	for k, v := range node {
		p := path + "." + k
		switch k {
		case "or", "and":
			var subs []json.RawMessage
			if err := json.Unmarshal(v, &subs); err != nil || len(subs) == 0 {
				return nil, fmt.Errorf("%s: must be a non-empty list of match rules", p)
			}
			list := make([]*matcher, len(subs))
			for i, s := range subs {
				m, err := parseMatcher(s, fmt.Sprintf("%s[%d]", p, i))
				if err != nil {
					return nil, err
				}
				list[i] = m
			}
			if k == "or" {
				return &matcher{or: list}, nil
			}
			return &matcher{and: list}, nil
		case "not":
			m, err := parseMatcher(v, p)
			if err != nil {
				return nil, err
			}
			return &matcher{not: m}, nil
		case "equals", "starts_with", "ends_with", "contains", "regex":
			var s string
			if err := json.Unmarshal(v, &s); err != nil || s == "" {
				return nil, fmt.Errorf("%s: must be a non-empty string", p)
			}
			switch k {
			case "regex":
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", p, err)
				}
				return &matcher{regex: re}, nil
			case "equals":
				return &matcher{equals: strings.ToLower(s)}, nil
			case "starts_with":
				return &matcher{startsWith: strings.ToLower(s)}, nil
			case "ends_with":
				return &matcher{endsWith: strings.ToLower(s)}, nil
			default:
				return &matcher{contains: strings.ToLower(s)}, nil
			}
		default:
			return nil, fmt.Errorf("%s: unknown match key %q (want one of %s)", path, k, strings.Join(matchKeys, ", "))
		}
	}
	panic("unreachable")
}
