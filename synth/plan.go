package synth

import (
	"fmt"
	"time"
)

// variant is a writer release: which header and entry types a file has.
type variant uint8

const (
	vPi1          variant = iota // pi v1: no version, no ids, header provider/modelId/thinkingLevel
	vPi2                         // pi v2: ids, hookMessage role
	vPi3                         // pi v3
	vAtomic3                     // Atomic v3: verbatim-lines compaction, context_window_change
	vAtomicEarly4                // Atomic early v4: version 4 with timestamp/parentSession
	vAtomic4                     // Atomic v4: createdAt/parentSessionId, context_edit, session_summary, tool-result usage, system messages
	vPrime3                      // Prime Agent v3: child usage, service tier, session state, agent status, git state
)

func (v variant) formatVersion() int {
	switch v {
	case vPi1:
		return 1
	case vPi2:
		return 2
	case vAtomicEarly4, vAtomic4:
		return 4
	}
	return 3
}

func (v variant) hasIDs() bool  { return v != vPi1 }
func (v variant) isV4() bool    { return v == vAtomicEarly4 || v == vAtomic4 }
func (v variant) atomic() bool  { return v == vAtomic3 || v == vAtomicEarly4 || v == vAtomic4 }
func (v variant) current() bool { return v == vAtomic4 }

var variantNames = [...]string{"pi-v1", "pi-v2", "pi-v3", "atomic-v3", "atomic-early-v4", "atomic-v4", "prime-v3"}

func (v variant) String() string { return variantNames[v] }

// layout is where a file lives (SPEC.md §1.1).
type layout uint8

const (
	layPiSessions   layout = iota // .pi/agent/sessions/--cwd--/<ts>_<id>.jsonl
	layPiFlat                     // .pi/agent/<ts>_<id>.jsonl (legacy)
	layAtomic                     // .atomic/agent/sessions/--cwd--/<ts>_<id>.jsonl
	layPrimeFlat                  // .prime/agent/sessions/<id>.jsonl
	layPrimeProject               // .prime/agent/sessions/<project>/<id>.jsonl (older releases)
	layPiHistory                  // .pi/agent/prompt-history.jsonl (not a session)
	layAtomicMirror               // the parent's relative path with .pi and .atomic swapped
)

type fileKind uint8

const (
	kSession  fileKind = iota
	kFork              // copies the parent's path to an entry, then continues
	kExtract           // branch extraction: copies a path, no new entries, header later than every entry
	kCopy              // the same file under another root
	kSnapshot          // a backup holding the first part of the file
	kSubagent          // a subagent's own session, its header pointing at the parent (Options.Subagents)
)

var kindNames = [...]string{"session", "fork", "branch_extract", "whole_copy", "prefix_snapshot", "subagent"}

type damage uint8

const (
	dNone damage = iota
	dTorn
	dCorruptLine
	dConcat
	dDupHeader
	dDupID
	dDangling
	dCycle
	dFuture
	dUnrecognized
	dBOM
	dEmpty
	dHeaderOnly
	dNoNewline
	dCRLF
	dInvalidUTF8
	dUnknownType
	dMixedV1
	dNotSession
	numDamage
)

var damageNames = [...]string{"", "torn", "corrupt_line", "concatenated_records", "duplicate_header",
	"duplicate_id", "dangling_parent", "parent_cycle", "future_version", "unrecognized_version", "bom",
	"empty", "header_only", "no_trailing_newline", "crlf", "invalid_utf8", "unknown_entry_type",
	"mixed_v1", "not_session"}

// damageVariants are the writers a damaged file of each kind comes from,
// used in turn.
var damageVariants = [numDamage][]variant{
	dTorn:         {vPi3, vAtomic4, vPrime3},
	dCorruptLine:  {vPi3, vPrime3},
	dConcat:       {vPi3, vPi2},
	dDupHeader:    {vPi3, vAtomic3},
	dDupID:        {vAtomic4, vPi3},
	dDangling:     {vPi2, vPi3},
	dCycle:        {vPi3},
	dFuture:       {vAtomic4},
	dUnrecognized: {vPi3},
	dBOM:          {vPi3, vAtomic3},
	dEmpty:        {vPi3, vAtomic4},
	dHeaderOnly:   {vPi3, vAtomic4, vPrime3},
	dNoNewline:    {vPi3, vAtomic4, vPrime3},
	dCRLF:         {vPi3},
	dInvalidUTF8:  {vPi3, vPrime3},
	dUnknownType:  {vPi3, vAtomic3},
	dMixedV1:      {vPi1},
	dNotSession:   {vPi1},
}

// fileSpec is one file of the plan.
type fileSpec struct {
	kind        fileKind
	damage      damage
	ver         variant
	layout      layout
	project     int
	start       int64 // header instant of a root session (Unix ms)
	target      int64 // bytes to aim for (without the image)
	image       int64 // base64 bytes of a pasted screenshot, 0 for none
	local       bool  // runs on local/llama-custom (unpriced)
	internal    bool  // workflow-owned session header
	forceBranch bool  // has at least one abandoned branch
	showcase    bool  // holds every entry type its writer produces (one root per variant)
	parent      int   // index in the family of the file copied or forked, -1 for roots
	frac        int   // percent: forks copy this share of the parent's path, snapshots keep this share of the file
	movedParent bool  // parentSession names .pi while the parent lives under .atomic
	special     string
	total       int64 // planned bytes of the whole file (forks: copied part included)
	subagent    subChild
}

type famSpec struct {
	files []fileSpec
	lock  bool     // put a *.jsonl.lock directory next to the root file
	runs  []subRun // subagent runs of the root session (Options.Subagents): files[1:] are the children
}

type plan struct {
	fams []famSpec
}

// dateRanges are when each writer release was in use.
var dateRanges = [...][2]string{
	vPi1:          {"2025-01-06", "2025-03-20"},
	vPi2:          {"2025-03-01", "2025-05-20"},
	vPi3:          {"2025-05-01", "2026-03-25"},
	vAtomic3:      {"2025-08-01", "2025-11-20"},
	vAtomicEarly4: {"2025-11-10", "2025-12-31"},
	vAtomic4:      {"2026-01-02", "2026-03-25"},
	vPrime3:       {"2025-06-01", "2026-03-25"},
}

// projectZones are the UTC offsets (minutes) of the developer working on
// each project: evening work in America makes UTC days differ from local
// ones, and Tokyo mornings are the previous UTC day.
var projectZones = []int{-7 * 60, 60, 9 * 60, -4 * 60, 2 * 60, -7 * 60, 330, 9 * 60}

func dayMs(s string) int64 {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// startTime draws a session start in the variant's date range, in the
// project developer's working hours.
func startTime(r *rng, v variant, project int) int64 {
	lo, hi := dayMs(dateRanges[v][0]), dayMs(dateRanges[v][1])
	days := (hi - lo) / 86400000
	day := lo + r.int64n(days+1)*86400000
	local := int64(r.btw(8*60, 22*60+30)) // minutes after local midnight
	off := int64(projectZones[project%len(projectZones)])
	return day + (local-off)*60000 + r.int64n(60000)
}

func naturalTarget(r *rng, v variant) int64 {
	switch {
	case v == vPi1:
		return r.logUniform(6<<10, 96<<10)
	case r.pct(2):
		return r.logUniform(512<<10, 2<<20)
	}
	return r.logUniform(8<<10, 256<<10)
}

func layoutFor(r *rng, v variant) layout {
	switch v {
	case vPi1:
		if r.pct(80) {
			return layPiFlat
		}
		return layPiSessions
	case vPi2, vPi3:
		return layPiSessions
	case vPrime3:
		if r.pct(20) {
			return layPrimeProject
		}
		return layPrimeFlat
	}
	return layAtomic
}

// Normal-session mix: variant, layout override, weight (percent).
var normalMix = []struct {
	v variant
	w int
}{
	{vPi1, 5}, {vPi2, 8}, {vPi3, 27}, {vAtomic3, 12}, {vAtomicEarly4, 6}, {vAtomic4, 20}, {vPrime3, 22},
}

// specialFiles is the number of files the fixed special families add.
const specialFiles = 15

func makePlan(opts Options) (*plan, error) {
	r := newRNG(mix64(opts.Seed ^ 0x706c616e)) // "plan"
	n := opts.Sessions
	p := &plan{}
	newRoot := func(v variant) fileSpec {
		proj := r.intn(len(projects))
		return fileSpec{kind: kSession, ver: v, layout: layoutFor(r, v), project: proj,
			start: startTime(r, v, proj), target: naturalTarget(r, v), parent: -1}
	}
	child := func(kind fileKind, v variant, parent int, frac int) fileSpec {
		return fileSpec{kind: kind, ver: v, layout: layoutFor(r, v), parent: parent, frac: frac,
			target: r.logUniform(4<<10, 64<<10)}
	}

	// Damaged files: a few of each kind.
	per := max(1, (n+200)/400)
	for d := dTorn; d < numDamage; d++ {
		count := per
		if d == dNotSession {
			count = 1
		}
		for i := 0; i < count; i++ {
			vs := damageVariants[d]
			f := newRoot(vs[i%len(vs)])
			f.damage = d
			f.target = r.logUniform(4<<10, 32<<10)
			if d == dNotSession {
				f.layout = layPiHistory
			}
			p.fams = append(p.fams, famSpec{files: []fileSpec{f}})
		}
	}
	damaged := len(p.fams)

	// Special families (specialFiles files in all).
	{ // A fork whose parent moved from .pi to .atomic: parentSession still says .pi.
		root := newRoot(vAtomic3)
		root.special = "moved_parent"
		f := child(kFork, vAtomicEarly4, 0, r.btw(40, 80))
		f.movedParent = true
		f.special = "moved_parent"
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, f}})
	}
	{ // Branch extraction: header later than every entry.
		root := newRoot(vPi3)
		root.forceBranch = true
		root.special = "late_header"
		f := child(kExtract, vPi3, 0, 0)
		f.special = "late_header"
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, f}})
	}
	{ // Fork of a fork (v4, parentSessionId).
		root := newRoot(vAtomic4)
		root.special = "fork_chain"
		f1 := child(kFork, vAtomic4, 0, r.btw(40, 80))
		f1.special = "fork_chain"
		f2 := child(kFork, vAtomic4, 1, r.btw(50, 90))
		f2.special = "fork_chain"
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, f1, f2}})
	}
	{ // The same pi session under .atomic and .pi (the copy sorts second).
		root := newRoot(vPi3)
		root.layout = layAtomic
		root.special = "two_roots"
		c := fileSpec{kind: kCopy, ver: vPi3, layout: layAtomicMirror, parent: 0, frac: 100, special: "two_roots"}
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, c}})
	}
	{ // A prefix snapshot: an earlier copy of the first part, same header.
		root := newRoot(vPi3)
		root.special = "prefix_snapshot"
		c := fileSpec{kind: kSnapshot, ver: vPi3, layout: layAtomicMirror, parent: 0, frac: r.btw(30, 70), special: "prefix_snapshot"}
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, c}})
	}
	{ // v1-era branch: branchedFrom names the parent file.
		root := newRoot(vPi1)
		root.layout = layPiFlat
		root.special = "v1_branch"
		f := child(kFork, vPi1, 0, r.btw(40, 80))
		f.layout = layPiFlat
		f.special = "v1_branch"
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, f}})
	}
	{ // Early v4 fork next to its v3 parent in the legacy pi tree (like case c07).
		root := newRoot(vPi3)
		root.special = "early_v4_fork"
		f := child(kFork, vAtomicEarly4, 0, r.btw(40, 80))
		f.layout = layPiSessions
		f.special = "early_v4_fork"
		p.fams = append(p.fams, famSpec{files: []fileSpec{root, f}})
	}

	// Normal sessions and generic forks.
	forks := n * opts.Profile.forkPercent() / 100
	normal := n - damaged - specialFiles - forks
	if normal < 8 {
		normal = 8
	}
	counts := apportion(normal, normalMix)
	firstNormal := len(p.fams)
	for i, c := range counts {
		for k := 0; k < c; k++ {
			p.fams = append(p.fams, famSpec{files: []fileSpec{newRoot(normalMix[i].v)}})
		}
	}
	// Shuffle the normal families so variants interleave (deterministically).
	nf := p.fams[firstNormal:]
	for i := len(nf) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		nf[i], nf[j] = nf[j], nf[i]
	}
	for k := 0; k < forks; k++ {
		fi := firstNormal + r.intn(len(nf))
		fam := &p.fams[fi]
		root := fam.files[0]
		if root.ver == vPi1 {
			continue
		}
		parent := 0
		if len(fam.files) > 1 && r.pct(opts.Profile.forkOfForkPercent()) {
			parent = len(fam.files) - 1
		}
		v := root.ver
		if v == vAtomic3 && r.pct(30) {
			v = vAtomicEarly4
		}
		f := child(kFork, v, parent, r.btw(30, 90))
		if root.ver == vPrime3 {
			f.layout = layPrimeFlat
		}
		fam.files = append(fam.files, f)
	}
	// Local-model sessions, screenshots, workflow sessions, a lock directory.
	for k := max(1, n/150); k > 0; k-- {
		p.fams[firstNormal+r.intn(len(nf))].files[0].local = true
	}
	for k := max(1, n/300); k > 0; k-- {
		for try := 0; try < 50; try++ {
			fam := &p.fams[firstNormal+r.intn(len(nf))]
			if len(fam.files) == 1 && fam.files[0].ver != vPi1 && fam.files[0].image == 0 {
				fam.files[0].image = (r.between(1536<<10, 4608<<10) / 4) * 4
				break
			}
		}
	}
	shown := map[variant]bool{}
	for i := firstNormal; i < len(p.fams); i++ {
		f := &p.fams[i].files[0]
		if !shown[f.ver] && !f.local {
			shown[f.ver] = true
			f.showcase, f.forceBranch = true, f.ver != vPi1
			f.internal = f.ver == vAtomic4
		}
		if f.ver.atomic() && f.ver != vAtomicEarly4 && r.pct(5) {
			f.internal = true
		}
	}
	for i := firstNormal; i < len(p.fams); i++ {
		if p.fams[i].files[0].layout == layPiSessions && p.fams[i].files[0].damage == dNone {
			p.fams[i].lock = true
			break
		}
	}
	if opts.Subagents {
		p.addSubagentRuns(opts)
	}
	if len(p.fams) >= maxFamilies {
		return nil, fmt.Errorf("synth: %d sessions is more than this generator supports", n)
	}
	opts.Profile.shape(p, opts.Seed, firstNormal)
	if opts.Size > 0 {
		p.scale(opts.Size)
	}
	for i := range p.fams {
		for j := range p.fams[i].files {
			p.fams[i].files[j].total = p.fams[i].estimate(j)
		}
	}
	return p, nil
}

// apportion splits n by integer weights (largest remainder), so the mix is
// exact rather than random.
func apportion(n int, mix []struct {
	v variant
	w int
}) []int {
	total := 0
	for _, m := range mix {
		total += m.w
	}
	out := make([]int, len(mix))
	rem := make([]int, len(mix))
	given := 0
	for i, m := range mix {
		out[i] = n * m.w / total
		rem[i] = n * m.w % total
		given += out[i]
	}
	for given < n {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
		given++
	}
	return out
}

// estimate returns the expected bytes of file i of fam (without images) and
// the fixed image bytes.
func (f *famSpec) estimate(i int) int64 {
	fs := &f.files[i]
	switch fs.kind {
	case kCopy:
		return f.estimate(fs.parent)
	case kSnapshot:
		return f.estimate(fs.parent) * int64(fs.frac) / 100
	case kFork:
		return f.estimate(fs.parent)*int64(fs.frac)*9/1000 + fs.target
	case kExtract:
		return f.estimate(fs.parent) * extractPct / 100
	}
	switch fs.damage {
	case dEmpty:
		return 0
	case dHeaderOnly:
		return 200
	case dNotSession:
		return 3000
	}
	return fs.target
}

// scale multiplies every target so the planned total is size bytes.
func (p *plan) scale(size int64) {
	var fixed, est int64
	for i := range p.fams {
		for j := range p.fams[i].files {
			if img := p.fams[i].files[j].image; img > 0 {
				img = min(img, max(256<<10, size/10)) / 4 * 4
				p.fams[i].files[j].image = img
				fixed += img
			}
			est += p.fams[i].estimate(j)
		}
	}
	avail := size - fixed
	if avail <= 0 || est <= 0 {
		return
	}
	for i := range p.fams {
		for j := range p.fams[i].files {
			f := &p.fams[i].files[j]
			f.target = max(1024, mulDiv(f.target, avail, est))
		}
	}
}
