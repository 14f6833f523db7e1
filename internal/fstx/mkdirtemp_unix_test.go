//go:build unix

package fstx

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMkdirTempMode: MkdirTemp makes the directory perm less the umask
// (os.MkdirTemp would make it 0700), with a fresh name each call.
func TestMkdirTempMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	seen := map[string]bool{}
	for _, c := range []struct {
		perm, want uint32
		pattern    string
	}{{0o777, 0o755, ".usage.tmp-"}, {0o700, 0o700, "x-*.d"}, {0o777, 0o755, ".usage.tmp-"}} {
		p, err := MkdirTemp(dir, c.pattern, fsMode(c.perm))
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Errorf("name %s made twice", p)
		}
		seen[p] = true
		if filepath.Dir(p) != dir {
			t.Errorf("%s not in %s", p, dir)
		}
		base := filepath.Base(p)
		prefix, suffix, _ := strings.Cut(c.pattern, "*")
		if !strings.HasPrefix(base, prefix) || !strings.HasSuffix(base, suffix) || len(base) <= len(prefix)+len(suffix) {
			t.Errorf("name %s does not follow %q", base, c.pattern)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if got := uint32(st.Mode) & 0o777; got != c.want {
			t.Errorf("%s: mode %o; want %o", base, got, c.want)
		}
	}
}

func fsMode(m uint32) fs.FileMode { return fs.FileMode(m) }
