package userdirs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// App is the name of sessions-etl's directory inside the state and cache
// directories.
const App = "sessions-etl"

// Env is the part of the environment the rules read.
type Env struct {
	GOOS   string              // runtime.GOOS
	Home   string              // os.UserHomeDir()
	Getenv func(string) string // os.Getenv
}

// Current is the running process's environment.
func Current() Env {
	home, _ := os.UserHomeDir()
	return Env{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv}
}

// StateDir is where sessions-etl keeps run directories and lock files:
// $XDG_STATE_HOME/sessions-etl when that variable is set (on every system),
// else
//
//	Linux and other Unix  ~/.local/state/sessions-etl
//	macOS                 ~/Library/Application Support/sessions-etl
//	Windows               %LOCALAPPDATA%\sessions-etl\state
//
// Run directories hold the backups of session files, so they are never put
// in a cache directory the system may purge.
func StateDir(e Env) string {
	if d := xdg(e, "XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, App)
	}
	switch e.GOOS {
	case "darwin", "ios":
		return filepath.Join(e.Home, "Library", "Application Support", App)
	case "windows":
		return filepath.Join(localAppData(e), App, "state")
	}
	return filepath.Join(e.Home, ".local", "state", App)
}

// CacheDir is where sessions-etl keeps its databases: $XDG_CACHE_HOME
// /sessions-etl when that variable is set (on every system), else
//
//	Linux and other Unix  ~/.cache/sessions-etl
//	macOS                 ~/Library/Caches/sessions-etl
//	Windows               %LOCALAPPDATA%\sessions-etl
//
// the directories os.UserCacheDir names (which reads $XDG_CACHE_HOME on
// Linux only).
func CacheDir(e Env) string {
	if d := xdg(e, "XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, App)
	}
	switch e.GOOS {
	case "darwin", "ios":
		return filepath.Join(e.Home, "Library", "Caches", App)
	case "windows":
		return filepath.Join(localAppData(e), App)
	case "plan9":
		return filepath.Join(e.Home, "lib", "cache", App)
	}
	return filepath.Join(e.Home, ".cache", App)
}

// xdg is the XDG base directory variable name, or "" when it is unset or
// relative: the XDG specification has relative values ignored. A path
// rooted without a drive (/x on Windows: the current drive) counts as
// absolute, as a user on Wine or MSYS2 means it.
func xdg(e Env, name string) string {
	d := e.Getenv(name)
	switch {
	case d == "":
		return ""
	case d[0] == '/', e.GOOS == "windows" && d[0] == '\\':
		return d
	case e.GOOS == "windows" && len(d) >= 3 && d[1] == ':' && (d[2] == '\\' || d[2] == '/'):
		return d
	}
	return ""
}

// localAppData is %LOCALAPPDATA%, else its usual place under the profile.
func localAppData(e Env) string {
	if d := e.Getenv("LOCALAPPDATA"); d != "" {
		return d
	}
	return filepath.Join(e.Home, "AppData", "Local")
}

// Display shows path for a message: a path inside the home directory with
// the home replaced by "~" (Unix shells) or "%USERPROFILE%" (Windows, where
// cmd.exe expands that and not "~"); any other path as it is. sep is the
// separator of the system the path is from (filepath.Separator).
func Display(e Env, path string) string {
	if e.Home == "" {
		return path
	}
	home := strings.TrimRight(e.Home, `/\`)
	sep := "/"
	if e.GOOS == "windows" {
		sep = `\`
	}
	same := func(a, b string) bool { return a == b }
	if e.GOOS == "windows" || e.GOOS == "darwin" || e.GOOS == "ios" {
		same = strings.EqualFold // case-insensitive file systems by default
	}
	if len(path) < len(home) || !same(path[:len(home)], home) {
		return path
	}
	rest := path[len(home):]
	if rest != "" && !strings.HasPrefix(rest, sep) && !(e.GOOS == "windows" && strings.HasPrefix(rest, "/")) {
		return path // a sibling such as /home/ann2 of /home/ann
	}
	if e.GOOS == "windows" {
		return "%USERPROFILE%" + rest
	}
	return "~" + rest
}
