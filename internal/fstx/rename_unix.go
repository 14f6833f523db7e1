//go:build unix && !linux

package fstx

func renameNoReplace(from, to string) error { return linkNoReplace(from, to) }
