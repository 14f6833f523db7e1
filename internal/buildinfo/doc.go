// Package buildinfo says which build of sessions-etl is running: its
// version, the commit it was built from and when.
//
// A release build sets the three variables with the linker:
//
//	go build -ldflags "-X github.com/sessions-etl/sessions-etl/internal/buildinfo.Version=v1.2.3 \
//	  -X github.com/sessions-etl/sessions-etl/internal/buildinfo.Commit=abc1234 \
//	  -X github.com/sessions-etl/sessions-etl/internal/buildinfo.Date=2026-12-02T10:00:00Z" ./cmd/sessions-etl
//
// A variable left empty is taken from the build information the Go
// toolchain embeds (runtime/debug.ReadBuildInfo): the module version of
// `go install …@v1.2.3`, and vcs.revision, vcs.time and vcs.modified of a
// build inside a git work tree.
//
// Imports: the standard library only.
package buildinfo
