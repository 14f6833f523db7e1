// Package archtest holds no code: its test checks the house's layering,
// the module-internal imports each package may have (the "Imports:" line
// of its doc.go), with `go list`.
//
// Imports: none.
package archtest
