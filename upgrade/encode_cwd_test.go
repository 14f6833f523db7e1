package upgrade

import "testing"

// TestEncodeCwd: the per-cwd directory names pi gives Unix and Windows
// working directories (its rule: drop one leading '/' or '\', then each of
// '/', '\', ':' becomes '-'); the expected names are worked out by hand
// from that rule.
func TestEncodeCwd(t *testing.T) {
	for _, c := range []struct{ cwd, want string }{
		{"/home/ann/proj", "--home-ann-proj--"},
		{"/", "----"},
		{"//srv/x", "---srv-x--"},
		{`C:\Users\ann\proj`, "--C--Users-ann-proj--"},
		{"C:/Users/ann/proj", "--C--Users-ann-proj--"},
		{`c:\`, "--c----"},
		{`\\srv\share\proj`, "---srv-share-proj--"},
		{`\Users\ann`, "--Users-ann--"},
		{"relative/dir", "--relative-dir--"},
		{"/home/ann/a:b", "--home-ann-a-b--"},
		{"/home/ann/über proj", "--home-ann-über proj--"},
	} {
		if got := EncodeCwd(c.cwd); got != c.want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
}
