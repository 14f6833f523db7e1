package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Zone is the time zone of a report: where days, weeks and months are
// taken, its IANA name ("" when it is not known, as for a local zone copied
// to /etc/localtime) and the name the text header shows.
type Zone struct {
	Location *time.Location
	Name     string // IANA name: "Europe/Paris", "Etc/UTC"; the JSON report.timezone
	Label    string // for the table header: the name, "Europe/Paris (local)", "local (UTC+01:00)"
}

// ZoneError says the TZ environment variable names a zone this program
// cannot load. Go would silently use UTC for it; a report would then put
// records on the wrong days under a header naming TZ.
type ZoneError struct {
	TZ  string
	Err error
}

func (e *ZoneError) Error() string {
	return fmt.Sprintf("TZ=%q is not a time zone sessions-etl can load (%v), so days would silently be taken in UTC; "+
		"POSIX TZ rules are not supported: name the zone with --tz Area/City (e.g. --tz America/New_York), or set TZ to such a name",
		e.TZ, e.Err)
}

func (e *ZoneError) Unwrap() error { return e.Err }

// ResolveZone returns the zone for a --tz value: the IANA zone named, or
// with "" the local zone, honouring TZ as Go does (TZ unset: /etc/localtime;
// TZ empty: UTC; TZ=":Area/City" or a zoneinfo file path). A TZ that Go
// cannot load is a *ZoneError rather than UTC in disguise.
func ResolveZone(tz string) (Zone, error) {
	if tz != "" && tz != "Local" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return Zone{}, fmt.Errorf("--tz %q: %w", tz, err)
		}
		return Zone{Location: loc, Name: loc.String(), Label: loc.String()}, nil
	}
	if env, set := os.LookupEnv("TZ"); set {
		return envZone(env)
	}
	return systemZone(), nil
}

// envZone is the zone of the TZ value env.
func envZone(env string) (Zone, error) {
	name := strings.TrimPrefix(env, ":")
	switch {
	case name == "":
		return Zone{Location: time.UTC, Name: "Etc/UTC", Label: "UTC (TZ is empty)"}, nil
	case filepath.IsAbs(name):
		data, err := os.ReadFile(name)
		if err != nil {
			return Zone{}, &ZoneError{TZ: env, Err: err}
		}
		iana := zoneinfoName(name)
		loc, err := time.LoadLocationFromTZData(iana, data)
		if err != nil {
			return Zone{}, &ZoneError{TZ: env, Err: err}
		}
		label := env
		if iana != "" {
			label = iana
		}
		return Zone{Location: loc, Name: iana, Label: label}, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || loc == time.Local {
		if err == nil {
			err = fmt.Errorf("unknown time zone %s", name)
		}
		return Zone{}, &ZoneError{TZ: env, Err: err}
	}
	return Zone{Location: loc, Name: name, Label: name}, nil
}

// systemZone is the local zone without TZ: /etc/localtime, named by the
// zoneinfo file it links to, else by /etc/timezone (Debian).
func systemZone() Zone {
	z := Zone{Location: time.Local}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		z.Name = zoneinfoName(target)
	}
	if z.Name == "" {
		if raw, err := os.ReadFile("/etc/timezone"); err == nil {
			if n := strings.TrimSpace(string(raw)); n != "" && loadable(n) {
				z.Name = n
			}
		}
	}
	if z.Name == "" {
		// Go uses UTC when there is no /etc/localtime.
		if _, err := os.Stat("/etc/localtime"); err != nil {
			z.Name = "Etc/UTC"
		}
	}
	if z.Name != "" {
		z.Label = z.Name + " (local)"
		return z
	}
	_, offset := time.Now().Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	z.Label = fmt.Sprintf("local (UTC%c%02d:%02d)", sign, offset/3600, offset%3600/60)
	return z
}

// zoneinfoName is the IANA name of a zoneinfo file path
// (/usr/share/zoneinfo/Europe/Paris: Europe/Paris), "" when the path is not
// under a zoneinfo directory or names no zone Go knows.
func zoneinfoName(path string) string {
	_, name, ok := strings.Cut(filepath.ToSlash(path), "zoneinfo/")
	if !ok || name == "" || !loadable(name) {
		return ""
	}
	return name
}

func loadable(name string) bool {
	loc, err := time.LoadLocation(name)
	return err == nil && loc != time.Local
}
