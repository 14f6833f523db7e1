package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unsetTZ removes TZ for the test (restored afterwards).
func unsetTZ(t *testing.T) {
	t.Helper()
	t.Setenv("TZ", "")
	if err := os.Unsetenv("TZ"); err != nil {
		t.Fatal(err)
	}
}

// TestResolveZoneTZ: a TZ that Go cannot load is an error naming TZ and
// suggesting --tz, never UTC in disguise; a loadable TZ gives its IANA
// name; --tz wins over TZ.
func TestResolveZoneTZ(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "zoneinfo", "Not", "AZone")
	if err := os.MkdirAll(filepath.Dir(garbage), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbage, []byte("not a tzfile"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tz := range []string{"EST5EDT,M3.2.0,M11.1.0", "Mars/Phobos", ":Mars/Phobos", "Local", garbage, filepath.Join(t.TempDir(), "missing")} {
		t.Setenv("TZ", tz)
		_, err := ResolveZone("")
		var ze *ZoneError
		if !errors.As(err, &ze) || !strings.Contains(err.Error(), `TZ="`+tz+`"`) || !strings.Contains(err.Error(), "--tz Area/City") {
			t.Errorf("TZ=%q: err = %v, want a ZoneError naming TZ and suggesting --tz Area/City", tz, err)
		}
		// --tz is given: TZ does not matter.
		if z, err := ResolveZone("Asia/Kolkata"); err != nil || z.Name != "Asia/Kolkata" || z.Location.String() != "Asia/Kolkata" {
			t.Errorf("TZ=%q, --tz Asia/Kolkata: %+v, %v", tz, z, err)
		}
	}
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for tz, want := range map[string]struct {
		name   string
		offset int
	}{
		"America/New_York": {"America/New_York", -5 * 3600},
		":Europe/Paris":    {"Europe/Paris", 3600},
		"UTC":              {"UTC", 0},
		"":                 {"Etc/UTC", 0}, // TZ set but empty: UTC, as Go and libc read it
	} {
		t.Setenv("TZ", tz)
		z, err := ResolveZone("")
		if err != nil {
			t.Errorf("TZ=%q: %v", tz, err)
			continue
		}
		if _, off := at.In(z.Location).Zone(); z.Name != want.name || off != want.offset {
			t.Errorf("TZ=%q: name %q, offset %d; want %q, %d", tz, z.Name, off, want.name, want.offset)
		}
	}
	if _, err := ResolveZone("Mars/Olympus_Mons"); err == nil || !strings.Contains(err.Error(), "--tz") {
		t.Errorf("--tz Mars/Olympus_Mons: err = %v", err)
	}
}

// TestResolveZoneLocal: without --tz and TZ the zone is the local one; its
// Name is an IANA name Go can load (or "" when unknown), never a display
// string; the label may say "(local)".
func TestResolveZoneLocal(t *testing.T) {
	unsetTZ(t)
	z, err := ResolveZone("")
	if err != nil {
		t.Fatal(err)
	}
	if z.Location != time.Local || !strings.Contains(z.Label, "local") {
		t.Errorf("zone %+v: want time.Local and a label saying local", z)
	}
	if z.Name != "" {
		if loc, err := time.LoadLocation(z.Name); err != nil || strings.ContainsAny(z.Name, " ()") {
			t.Errorf("Name %q is not an IANA name (%v, %v)", z.Name, loc, err)
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok && z.Name != name {
			t.Errorf("Name %q; /etc/localtime links to %s", z.Name, target)
		}
	}
}

// TestReportZoneNames: the JSON timezone is the zone's IANA name and the
// table header its label; a report on time.Local without a name has a null
// timezone rather than "Local".
func TestReportZoneNames(t *testing.T) {
	dir := filepath.Join(casesDir, "c13-prime-child-usage")
	z := Zone{Location: mustLoc(t, "Europe/Paris"), Name: "Europe/Paris", Label: "Europe/Paris (local)"}
	r := runOn(t, Daily, []string{dir}, func(o *Options) { o.Location, o.Zone = nil, z })
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"timezone": "Europe/Paris",`) {
		t.Errorf("JSON lacks the IANA timezone:\n%s", b.String())
	}
	b.Reset()
	if err := r.WriteText(&b, Table, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "time zone Europe/Paris (local)") {
		t.Errorf("table header lacks the label:\n%s", b.String())
	}
	r = runOn(t, Daily, []string{dir}, func(o *Options) { o.Location = time.Local })
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"timezone": null,`) {
		t.Errorf("time.Local without a name: want a null timezone:\n%s", b.String())
	}
}
