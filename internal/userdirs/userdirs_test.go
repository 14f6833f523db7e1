package userdirs

import (
	"path/filepath"
	"runtime"
	"testing"
)

func env(goos, home string, vars map[string]string) Env {
	return Env{GOOS: goos, Home: home, Getenv: func(k string) string { return vars[k] }}
}

// TestDirs: every platform's state and cache directory, with and without
// the variables that move them (filepath.Join uses this machine's
// separator; the rules are what is tested).
func TestDirs(t *testing.T) {
	j := filepath.Join
	win := `C:\Users\ann`
	lad := map[string]string{"LOCALAPPDATA": `D:\Local`}
	xdg := map[string]string{"XDG_STATE_HOME": "/x/state", "XDG_CACHE_HOME": "/x/cache", "LOCALAPPDATA": `D:\Local`}
	for _, c := range []struct {
		name         string
		e            Env
		state, cache string
	}{
		{"linux", env("linux", "/home/ann", nil), "/home/ann/.local/state/sessions-etl", "/home/ann/.cache/sessions-etl"},
		{"freebsd", env("freebsd", "/home/ann", nil), "/home/ann/.local/state/sessions-etl", "/home/ann/.cache/sessions-etl"},
		{"darwin", env("darwin", "/Users/ann", nil), "/Users/ann/Library/Application Support/sessions-etl", "/Users/ann/Library/Caches/sessions-etl"},
		{"windows", env("windows", win, lad), j(`D:\Local`, "sessions-etl", "state"), j(`D:\Local`, "sessions-etl")},
		{"windows without LOCALAPPDATA", env("windows", win, nil), j(win, "AppData", "Local", "sessions-etl", "state"), j(win, "AppData", "Local", "sessions-etl")},
		{"linux XDG", env("linux", "/home/ann", xdg), "/x/state/sessions-etl", "/x/cache/sessions-etl"},
		{"darwin XDG", env("darwin", "/Users/ann", xdg), "/x/state/sessions-etl", "/x/cache/sessions-etl"},
		{"windows XDG", env("windows", win, xdg), "/x/state/sessions-etl", "/x/cache/sessions-etl"},
		{"windows XDG with a drive", env("windows", win, map[string]string{"XDG_STATE_HOME": `E:\s`, "XDG_CACHE_HOME": `E:/c`}), j(`E:\s`, "sessions-etl"), j(`E:/c`, "sessions-etl")},
		{"linux XDG relative: ignored", env("linux", "/home/ann", map[string]string{"XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "./c"}), "/home/ann/.local/state/sessions-etl", "/home/ann/.cache/sessions-etl"},
		{"windows XDG relative: ignored", env("windows", win, map[string]string{"XDG_STATE_HOME": `s\x`, "XDG_CACHE_HOME": "E:c", "LOCALAPPDATA": `D:\Local`}), j(`D:\Local`, "sessions-etl", "state"), j(`D:\Local`, "sessions-etl")},
	} {
		c.state, c.cache = filepath.FromSlash(c.state), filepath.FromSlash(c.cache)
		if got := StateDir(c.e); got != c.state {
			t.Errorf("%s: StateDir = %q, want %q", c.name, got, c.state)
		}
		if got := CacheDir(c.e); got != c.cache {
			t.Errorf("%s: CacheDir = %q, want %q", c.name, got, c.cache)
		}
	}
}

// TestCurrent: the running process's directories follow this system's
// rule and the variables.
func TestCurrent(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "s"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "c"))
	e := Current()
	if e.GOOS != runtime.GOOS || e.Home == "" {
		t.Fatalf("Current = %+v", e)
	}
	if got, want := CacheDir(e), filepath.Join(e.Getenv("XDG_CACHE_HOME"), "sessions-etl"); got != want {
		t.Errorf("CacheDir = %q, want %q", got, want)
	}
}

func TestDisplay(t *testing.T) {
	for _, c := range []struct {
		goos, home, path, want string
	}{
		{"linux", "/home/ann", "/home/ann/.pi/agent/sessions", "~/.pi/agent/sessions"},
		{"linux", "/home/ann", "/home/ann", "~"},
		{"linux", "/home/ann/", "/home/ann/.pi", "~/.pi"},
		{"linux", "/home/ann", "/home/ann2/.pi", "/home/ann2/.pi"},
		{"linux", "/home/ann", "/srv/sessions", "/srv/sessions"},
		{"linux", "/home/ann", "/HOME/ann/.pi", "/HOME/ann/.pi"},
		{"linux", "", "/home/ann/.pi", "/home/ann/.pi"},
		{"darwin", "/Users/ann", "/Users/ann/.pi/agent/sessions", "~/.pi/agent/sessions"},
		{"darwin", "/Users/Ann", "/Users/ann/.pi", "~/.pi"},
		{"windows", `C:\Users\ann`, `C:\Users\ann\.pi\agent\sessions`, `%USERPROFILE%\.pi\agent\sessions`},
		{"windows", `C:\Users\ann`, `c:\users\ANN\.pi`, `%USERPROFILE%\.pi`},
		{"windows", `C:\Users\ann`, `C:\Users\ann2\.pi`, `C:\Users\ann2\.pi`},
		{"windows", `C:\Users\ann`, `D:\sessions`, `D:\sessions`},
	} {
		if got := Display(env(c.goos, c.home, nil), c.path); got != c.want {
			t.Errorf("%s Display(home %q, %q) = %q, want %q", c.goos, c.home, c.path, got, c.want)
		}
	}
}
