package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X (see the package documentation); empty otherwise.
var (
	Version string
	Commit  string
	Date    string
)

// Info is what Get reports.
type Info struct {
	Version   string `json:"version"`    // "v1.2.3", or "(devel)" for a build from a work tree
	Commit    string `json:"commit"`     // the git revision ("" when unknown)
	Modified  bool   `json:"modified"`   // the work tree had uncommitted changes
	Date      string `json:"build_date"` // the commit's time, or the release's build time ("" when unknown)
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"` // GOOS/GOARCH
}

// Get returns the running binary's build information: the linker-set
// variables where set, else what the toolchain embedded.
func Get() Info {
	return get(Version, Commit, Date, readBuildInfo)
}

var readBuildInfo = debug.ReadBuildInfo

func get(version, commit, date string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := read()
	if !ok {
		if in.Version == "" {
			in.Version = "(unknown)"
		}
		return in
	}
	if in.Version == "" {
		in.Version = bi.Main.Version
	}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	var vcsTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if in.Commit == "" {
				in.Commit = s.Value
			}
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			in.Modified = commit == "" && s.Value == "true"
		}
	}
	if in.Date == "" {
		in.Date = vcsTime
	}
	return in
}

// Short is the commit shortened to 12 characters, with "+dirty" when the
// work tree had changes.
func (i Info) Short() string {
	c := i.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if i.Modified {
		c += "+dirty"
	}
	return c
}
