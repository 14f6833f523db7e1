package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestGet(t *testing.T) {
	embedded := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/sessions-etl/sessions-etl", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"},
				{Key: "vcs.time", Value: "2026-12-01T09:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, c := range []struct {
		name                  string
		version, commit, date string
		read                  func() (*debug.BuildInfo, bool)
		want                  Info
		short                 string
	}{
		{"embedded only", "", "", "", embedded,
			Info{Version: "(devel)", Commit: "0123456789abcdef0123", Modified: true, Date: "2026-12-01T09:00:00Z"}, "0123456789ab+dirty"},
		{"ldflags win", "v1.2.3", "abc1234", "2026-12-02T10:00:00Z", embedded,
			Info{Version: "v1.2.3", Commit: "abc1234", Date: "2026-12-02T10:00:00Z"}, "abc1234"},
		{"only the version set", "v1.2.3", "", "", embedded,
			Info{Version: "v1.2.3", Commit: "0123456789abcdef0123", Modified: true, Date: "2026-12-01T09:00:00Z"}, "0123456789ab+dirty"},
		{"nothing known", "", "", "", none, Info{Version: "(unknown)"}, ""},
	} {
		got := get(c.version, c.commit, c.date, c.read)
		got.GoVersion, got.Platform = "", ""
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if got.Short() != c.short {
			t.Errorf("%s: Short() = %q, want %q", c.name, got.Short(), c.short)
		}
	}
}

// TestGetReal: the test binary itself has embedded build information.
func TestGetReal(t *testing.T) {
	in := Get()
	if in.Version == "" || in.GoVersion == "" || in.Platform == "" {
		t.Errorf("Get() = %+v: empty fields", in)
	}
}
