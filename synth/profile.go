package synth

import (
	"fmt"
	"strings"
)

// Profile is the shape of a generated home. The default ("") is the shape
// synth has always made (its files are byte-identical to those of earlier
// releases); the others stress what the default does not:
//
//   - usage-dense: about three times the billed records per byte (three
//     times the turns for a session's bytes, short tool outputs), three
//     times the forks, a fifth of the sessions branched, and one session in
//     a hundred with a 5 MB pasted image line.
//   - content-heavy: six times the bytes per session in a quarter of the
//     turns: huge tool outputs (up to 8 MB each, one read or command call
//     in six a large one).
//   - many-tiny: sessions of a few KB (1-8 KB) and no images: many files,
//     little in each.
//   - fork-heavy: forks are 40% of the files, many of them forks of forks.
//
// Every profile keeps the manifest exact: the same writer and the same
// bookkeeping make every file; a profile only changes the plan (sizes,
// counts, kinds) and the turn and tool-output shapes.
type Profile string

// The profiles of Options.Profile.
const (
	ProfileDefault      Profile = ""
	ProfileUsageDense   Profile = "usage-dense"
	ProfileContentHeavy Profile = "content-heavy"
	ProfileManyTiny     Profile = "many-tiny"
	ProfileForkHeavy    Profile = "fork-heavy"
)

// Profiles lists the profiles other than the default.
var Profiles = []Profile{ProfileUsageDense, ProfileContentHeavy, ProfileManyTiny, ProfileForkHeavy}

// ParseProfile reads a profile name ("" and "default" are the default).
func ParseProfile(s string) (Profile, error) {
	if s == "" || s == "default" {
		return ProfileDefault, nil
	}
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return "", fmt.Errorf("synth: unknown profile %q (default, %s)", s, strings.Join(names, ", "))
}

// forkPercent is the share of files that are generic forks.
func (p Profile) forkPercent() int {
	switch p {
	case ProfileUsageDense:
		return 15
	case ProfileForkHeavy:
		return 40
	}
	return 5
}

// forkOfForkPercent is the chance that a generic fork forks the family's
// latest fork rather than its root.
func (p Profile) forkOfForkPercent() int {
	if p == ProfileForkHeavy {
		return 60
	}
	return 30
}

// turnBytes is the budget one turn of a session stands for: the number of
// turns grows with the square root of the budget over it.
func (p Profile) turnBytes() int64 {
	switch p {
	case ProfileUsageDense:
		return 1536 / 9 // three times the turns
	case ProfileContentHeavy:
		return 1536 * 16 // a quarter of the turns
	}
	return 1536
}

// maxTurns caps the turns of one session.
func (p Profile) maxTurns() int {
	if p == ProfileUsageDense {
		return 120
	}
	return 40
}

// hugeOutputPermille is the chance (per thousand) that a read or bash
// call has a large output, and hugeOutputMax its largest size.
func (p Profile) hugeOutputPermille() int {
	if p == ProfileContentHeavy {
		return 170
	}
	return 15
}

// maxTool is the largest tool output.
func (p Profile) maxTool() int64 { return maxToolBytes }

// shape changes a planned home to the profile: file targets, branches and
// images. It draws from its own generator, so the default plan's draws are
// those of every earlier release.
func (p Profile) shape(pl *plan, seed uint64, firstNormal int) {
	if p == ProfileDefault {
		return
	}
	r := newRNG(mix64(seed ^ 0x70726f66)) // "prof"
	// Every layout stays in the home (fewer roots could leave none in
	// Prime's per-project folders).
	perProject, firstPrime := false, -1
	for i := firstNormal; i < len(pl.fams); i++ {
		if f := &pl.fams[i].files[0]; f.ver == vPrime3 {
			perProject = perProject || f.layout == layPrimeProject
			if firstPrime < 0 {
				firstPrime = i
			}
		}
	}
	if !perProject && firstPrime >= 0 {
		pl.fams[firstPrime].files[0].layout = layPrimeProject
	}
	for i := firstNormal; i < len(pl.fams); i++ {
		fam := &pl.fams[i]
		for j := range fam.files {
			f := &fam.files[j]
			switch p {
			case ProfileManyTiny:
				f.target = r.logUniform(1<<10, 8<<10)
				f.image = 0
			case ProfileContentHeavy:
				f.target *= 6
			case ProfileUsageDense:
				if j == 0 && f.ver != vPi1 && r.pct(20) {
					f.forceBranch = true
				}
				if j == 0 && len(fam.files) == 1 && f.ver != vPi1 && f.image == 0 && r.permille(10) {
					f.image = 5 << 20
				}
			}
		}
	}
}
