//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package ingest

import (
	"errors"
	"os"
)

// mapsFiles is false here: ReadFile reads every file with read calls. On
// Windows a mapped view would make another process's truncation of the file
// (SetEndOfFile) fail with ERROR_USER_MAPPED_FILE, so a read-only tool must
// not hold one while the agent may be writing its session.
const mapsFiles = false

var errNoMapping = errors.New("files are not mapped on this platform")

func mapFile(*os.File, int) ([]byte, error) { return nil, errNoMapping }
func unmapFile([]byte)                      {}
func releasePages([]byte)                   {}
