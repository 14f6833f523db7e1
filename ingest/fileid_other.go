//go:build !unix && !windows

package ingest

import "io/fs"

// statIDs: no file identity on this platform (wasm, plan9); files reached
// twice are then read twice.
func statIDs(string, fs.FileInfo) devIno { return devIno{} }

func isNotDir(error) bool   { return false }
func isLinkLoop(error) bool { return false }
