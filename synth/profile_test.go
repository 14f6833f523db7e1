package synth

import (
	"context"
	"path/filepath"
	"testing"
)

// profileUnderTest is the profile whose home testHome returns while
// TestProfiles runs the property tests on it (the default otherwise).
var profileUnderTest = ProfileDefault

// profileHome generates the home of profile p (once per test).
func profileHome(t *testing.T, p Profile) (string, *Manifest) {
	t.Helper()
	if h, ok := profileHomes[p]; ok {
		return h.dir, h.m
	}
	dir := filepath.Join(profileRoot, string(p))
	m, err := Generate(context.Background(), Options{Out: dir, Sessions: testSessions, Seed: 42, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	profileHomes[p] = struct {
		dir string
		m   *Manifest
	}{dir, m}
	return dir, m
}

var (
	profileRoot  string
	profileHomes = map[Profile]struct {
		dir string
		m   *Manifest
	}{}
)

// TestProfiles runs the manifest's property tests (validator verdicts,
// files on disk, sums, verbatim copies, an independent recount of usage,
// Prime's aggregate usage) on a home of each profile, and checks that each
// profile has the shape it promises relative to the default.
func TestProfiles(t *testing.T) {
	profileRoot = t.TempDir()
	defer func() { profileUnderTest = ProfileDefault }()
	_, def := testHome(t)
	props := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"ValidatorAgrees", TestValidatorAgrees},
		{"FilesMatchManifest", TestFilesMatchManifest},
		{"ManifestConsistent", TestManifestConsistent},
		{"CopiesAreVerbatim", TestCopiesAreVerbatim},
		{"RecountFromFiles", TestRecountFromFiles},
		{"AggregateUsageConsistent", TestAggregateUsageConsistent},
	}
	perMB := func(m *Manifest) float64 { return float64(m.Usage.Records) / (float64(m.Bytes) / (1 << 20)) }
	forks := func(m *Manifest) int {
		n := 0
		for _, f := range m.Files {
			if f.Kind == "fork" {
				n++
			}
		}
		return n
	}
	for _, p := range Profiles {
		t.Run(string(p), func(t *testing.T) {
			profileUnderTest = p
			defer func() { profileUnderTest = ProfileDefault }()
			_, m := testHome(t)
			if m.Profile != p {
				t.Errorf("manifest profile %q", m.Profile)
			}
			for _, pr := range props {
				t.Run(pr.name, pr.fn)
			}
			t.Logf("%s: %d files, %d bytes, %d records (%.0f/MiB; default %.0f/MiB), %d forks (default %d)",
				p, len(m.Files), m.Bytes, m.Usage.Records, perMB(m), perMB(def), forks(m), forks(def))
			switch p {
			case ProfileUsageDense:
				if perMB(m) < 2.5*perMB(def) {
					t.Errorf("%.0f records per MiB, want about 3x the default's %.0f", perMB(m), perMB(def))
				}
				if 2*forks(m) < 3*forks(def) {
					t.Errorf("%d forks, want about 3x the default's %d", forks(m), forks(def))
				}
			case ProfileContentHeavy:
				if m.Bytes < 2*def.Bytes {
					t.Errorf("%d bytes, want well over the default's %d", m.Bytes, def.Bytes)
				}
			case ProfileManyTiny:
				if m.Bytes*4 > def.Bytes {
					t.Errorf("%d bytes, want a small fraction of the default's %d", m.Bytes, def.Bytes)
				}
			case ProfileForkHeavy:
				if forks(m) < 3*forks(def) {
					t.Errorf("%d forks, want about 8x the default's %d", forks(m), forks(def))
				}
			}
		})
	}
}

func TestParseProfile(t *testing.T) {
	for _, s := range []string{"", "default", "usage-dense", "content-heavy", "many-tiny", "fork-heavy"} {
		if _, err := ParseProfile(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseProfile("dense"); err == nil {
		t.Error("an unknown profile is accepted")
	}
}
