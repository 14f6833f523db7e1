package upgrade

import "strings"

// EncodeCwd turns a working directory into the per-cwd directory name pi
// and Atomic use (SPEC.md §1.1): "--" + cwd without its first character if
// that is a separator, with '/', '\' and ':' replaced by '-', + "--", as pi
// does (one leading separator only). A Windows cwd keeps its drive letter:
// C:\Users\ann\proj is "--C--Users-ann-proj--", and a UNC cwd
// \\srv\share\proj is "---srv-share-proj--". Either way the name holds no
// separator, so it is one directory on every system.
func EncodeCwd(cwd string) string {
	s := cwd
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		s = s[1:]
	}
	s = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s)
	return "--" + s + "--"
}
