// Package testkit holds the helpers the packages' tests share: copying a
// fixture tree, writing a file with its directories, and the seed of a
// randomised test (taken from -seed, printed when the test fails, so that
// every failure can be replayed).
//
// It is imported by _test.go files only, never by a package's own code.
//
// Imports: the standard library only.
package testkit
