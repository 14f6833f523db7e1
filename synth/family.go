package synth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const (
	idsPerFamily = 1 << 14 // entry ids a family may use (ids are unique across the home)
	maxFamilies  = 1 << 18
)

var errFamilyTooLarge = errors.New("synth: a session family needs more than 16384 entry ids")

// famGen generates one family: a root session and the files derived from it.
type famGen struct {
	*generator
	ctx context.Context
	r   *rng
	fam uint32
	n   uint32
	err error
}

// newID returns an entry id unique in the whole home: a bijective mix of
// (family, counter).
func (g *famGen) newID() string {
	if g.n >= idsPerFamily {
		g.err = errFamilyTooLarge
		g.n = 0
	}
	x := g.fam<<14 | g.n
	g.n++
	return hex8(lowbias32(x ^ g.keyID))
}

// outLine is one physical line of a rendered file.
type outLine struct {
	b    []byte
	term string   // "\n", "\r\n" or "" (no newline after the final record)
	src  [2]int32 // session lines whose records a reader recovers from this line; -1 none
	n    int      // records after the header a reader recovers from this line
	ts   int64
}

var noSrc = [2]int32{-1, -1}

// recRef is a recovered billed record with the model it is attributed to.
type recRef struct {
	b     *billed
	model int
	ts    int64
}

// fileOut is a written file with what the manifest says about it.
type fileOut struct {
	File
	hdrTs     int64
	countable bool
	recs      []recRef
}

func tsName(ms int64) string {
	s := isoString(ms)
	return strings.NewReplacer(":", "-", ".", "-").Replace(s)
}

func cwdDir(cwd string) string {
	return "--" + strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(cwd, "/\\")) + "--"
}

func (s *sess) relPath(lay layout) string {
	name := tsName(s.hdrTs) + "_" + s.id + ".jsonl"
	switch lay {
	case layPiFlat:
		return ".pi/agent/" + name
	case layAtomic:
		return ".atomic/agent/sessions/" + cwdDir(s.cwd) + "/" + name
	case layPrimeFlat:
		return ".prime/agent/sessions/" + s.id + ".jsonl"
	case layPrimeProject:
		return ".prime/agent/sessions/" + s.project + "/" + s.id + ".jsonl"
	case layPiHistory:
		return ".pi/agent/prompt-history.jsonl"
	}
	return ".pi/agent/sessions/" + cwdDir(s.cwd) + "/" + name
}

func (g *generator) abs(rel string) string { return filepath.Join(g.absOut, filepath.FromSlash(rel)) }

// buildHeader writes the session header in the writer's key order.
func (s *sess) buildHeader() {
	b := []byte(`{"type":"session"`)
	switch {
	case s.spec.damage == dFuture:
		b = kvInt(b, "version", 5)
	case s.spec.damage == dUnrecognized:
		b = kvStr(b, "version", "3")
	case s.ver != vPi1:
		b = kvInt(b, "version", int64(s.ver.formatVersion()))
	}
	b = kvStr(b, "id", s.id)
	if s.ver == vAtomic4 {
		b = kvISO(b, "createdAt", s.hdrTs)
	} else {
		b = kvISO(b, "timestamp", s.hdrTs)
	}
	b = kvStr(b, "cwd", s.cwd)
	switch {
	case s.ver == vPi1:
		b = kvStr(b, "provider", models[s.firstModel].provider)
		b = kvStr(b, "modelId", models[s.firstModel].id)
		b = kvStr(b, "thinkingLevel", s.firstThink)
		if s.parentPath != "" {
			b = kvStr(b, "branchedFrom", s.parentPath)
		}
	case s.ver == vAtomic4 && s.parentID != "":
		b = kvStr(b, "parentSessionId", s.parentID)
	case s.parentPath != "":
		b = kvStr(b, "parentSession", s.parentPath)
	}
	if s.spec.internal {
		b = append(b, `,"internal":true,"workflow":{"runId":"run-`...)
		b = append(b, randHex(s.r, 8)...)
		b = append(b, `","stageId":"stage-build","stageName":"build"}`...)
	}
	s.header = append(b, '}')
}

// root writes a root session.
func (g *famGen) root(fs *fileSpec) *sess {
	s := g.newSess(fs)
	s.hdrTs = fs.start
	s.rel = s.relPath(fs.layout)
	s.buildHeader()
	s.bytes = int64(len(s.header)) + 1
	s.target = fs.target + fs.image // the plan scales text, not screenshots
	switch fs.damage {
	case dEmpty, dHeaderOnly, dNotSession:
		return s
	}
	s.start()
	minTurns := 1
	if fs.damage != dNone {
		minTurns = 3
	}
	if fs.forceBranch || fs.showcase {
		minTurns = 6
	}
	s.converse(minTurns)
	s.finish()
	return s
}

// extractPct is the share of its parent a branch extraction copies.
const extractPct = 60

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// pathTo returns the line indexes from the root to line x.
func (s *sess) pathTo(x int32) []int32 {
	var p []int32
	for i := x; i >= 0 && len(p) <= len(s.lines); i = s.lines[i].parent {
		p = append(p, i)
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// fork writes a file that copies par's entries verbatim (same bytes, ids,
// timestamps, usage) on the path from the root to one entry, then goes on.
func (g *famGen) fork(par *sess, fs *fileSpec) (*sess, error) {
	if len(par.lines) == 0 {
		return nil, errors.New("synth: fork of a session without entries")
	}
	s := g.newSess(fs)
	s.project, s.cwd = par.project, par.cwd
	if fs.ver == vPi1 || par.ver == vPi1 {
		s.idsFirst = 0
	}
	var x int32
	if fs.kind == kExtract && len(par.abandoned) > 0 {
		// The abandoned leaf whose path is closest to the planned share.
		want, best := par.bytes*extractPct/100, int64(-1)
		for _, leaf := range par.abandoned {
			var n int64
			for _, i := range par.pathTo(leaf) {
				n += int64(len(par.lines[i].raw)) + 1
			}
			if d := abs64(n - want); best < 0 || d < best {
				x, best = leaf, d
			}
		}
	} else {
		path := par.pathTo(int32(len(par.lines) - 1))
		var total int64
		for _, i := range path {
			total += int64(len(par.lines[i].raw)) + 1
		}
		frac := int64(fs.frac)
		if fs.kind == kExtract {
			frac = extractPct
		}
		want, cum := total*frac/100, int64(0)
		x = path[len(path)-1]
		for k, i := range path {
			cum += int64(len(par.lines[i].raw)) + 1
			if cum >= want {
				x = i
				// Fork at the end of a turn when one follows soon.
				for _, j := range path[k:min(len(path), k+12)] {
					if par.lines[j].turnEnd {
						x = j
						break
					}
				}
				break
			}
		}
	}
	path := par.pathTo(x)
	remap := make(map[int32]int32, len(path))
	var maxTs int64
	for _, i := range path {
		ln := par.lines[i]
		if ln.parent >= 0 {
			ln.parent = remap[ln.parent]
		}
		remap[i] = int32(len(s.lines))
		s.lines = append(s.lines, ln)
		s.bytes += int64(len(ln.raw)) + 1
		maxTs = max(maxTs, ln.ts)
		if ln.asst >= 0 {
			s.model = int(ln.asst)
		}
	}
	s.leaf = int32(len(s.lines) - 1)
	s.ctx = int64(s.lines[s.leaf].ctx)
	s.cached = 0
	if par.ver == vPi1 {
		s.firstModel, s.firstThink = par.firstModel, par.firstThink
	}
	if fs.kind == kExtract {
		s.hdrTs = maxTs + g.r.between(86400000, 5*86400000)
	} else {
		s.hdrTs = max(maxTs, par.hdrTs) + g.r.between(60000, 3*86400000)
	}
	s.parentID = par.id
	switch {
	case fs.movedParent:
		s.parentPath = g.abs(strings.Replace(par.rel, ".atomic/", ".pi/", 1))
	default:
		s.parentPath = g.abs(par.rel)
	}
	lay := fs.layout
	switch {
	case fs.ver == vPrime3:
		lay = layPrimeFlat
	case fs.movedParent:
		lay = layAtomic
	}
	s.rel = s.relPath(lay)
	s.buildHeader()
	s.bytes += int64(len(s.header)) + 1
	if fs.kind == kFork {
		s.t = s.hdrTs + g.r.between(500, 8000)
		s.target = max(fs.total, s.bytes+4096) // the plan's total, whatever the copy took
		s.converse(1)
		s.finish()
	}
	return s, nil
}

// render turns a session into the file's physical lines, applying the
// file's damage, and says what a validator must report.
func (g *famGen) render(s *sess, fs *fileSpec, rel string, nLines int) (*fileOut, []outLine, error) {
	switch fs.damage {
	case dNone, dEmpty, dHeaderOnly, dNotSession, dFuture, dUnrecognized, dBOM, dCRLF, dMixedV1:
	default:
		if nLines < 5 {
			return nil, nil, fmt.Errorf("synth: %s damage needs at least 5 entries, %s has %d", damageNames[fs.damage], rel, nLines)
		}
	}
	fo := &fileOut{hdrTs: s.hdrTs}
	f := &fo.File
	f.Path = rel
	f.Source = sourceOf(rel)
	f.Kind = kindNames[fs.kind]
	if fs.damage != dNone {
		f.Kind = damageNames[fs.damage]
	}
	f.Variant = s.ver.String()
	f.Special = fs.special
	f.Cwd = s.cwd
	fv := s.ver.formatVersion()
	f.FormatVersion = &fv
	f.EarlyV4 = s.ver == vAtomicEarly4
	f.Status = "needs_upgrade"
	if s.ver.current() {
		f.Status = "current"
	}
	sid := s.id
	f.SessionID = &sid
	if s.parentID != "" {
		p := s.parentID
		f.ParentSessionID = &p
	}
	f.Codes = []string{}
	fo.countable = true

	lines := s.lines[:nLines]
	out := make([]outLine, 0, len(lines)+2)
	out = append(out, outLine{b: s.header, term: "\n", src: noSrc, ts: s.hdrTs})
	for i := range lines {
		out = append(out, outLine{b: lines[i].raw, term: "\n", src: [2]int32{int32(i), -1}, n: 1, ts: lines[i].ts})
	}
	r := g.r
	code := func(c string) { f.Codes = append(f.Codes, c) }
	middle := func() int { // an entry line index in out, away from both ends
		if len(out) < 5 {
			return max(1, len(out)-2)
		}
		return 2 + r.intn(len(out)-4)
	}
	switch fs.damage {
	case dTorn:
		last := &out[len(out)-1]
		last.b = last.b[:safeCut(r, last.b)]
		last.term = ""
		last.src, last.n = noSrc, 0
		f.Status = "torn"
		code("torn_final_record")
	case dCorruptLine:
		k := middle()
		bad := outLine{b: out[k].b[:safeCut(r, out[k].b)], term: "\n", src: noSrc, ts: out[k].ts}
		out = append(out[:k], append([]outLine{bad}, out[k:]...)...)
		f.Status = "corrupt"
		code("corrupt_line")
	case dConcat:
		k := middle()
		if k+1 >= len(out)-1 {
			k = max(1, len(out)-3)
		}
		joined := append(append([]byte(nil), out[k].b...), out[k+1].b...)
		out[k] = outLine{b: joined, term: "\n", src: [2]int32{out[k].src[0], out[k+1].src[0]}, n: 2, ts: out[k+1].ts}
		out = append(out[:k+1], out[k+2:]...)
		f.Status = "corrupt"
		code("concatenated_records")
	case dDupHeader:
		k := middle()
		out = append(out[:k], append([]outLine{{b: s.header, term: "\n", src: noSrc, ts: out[k].ts}}, out[k:]...)...)
		f.Status = "corrupt"
		code("duplicate_header")
	case dDupID:
		k := max(middle(), 3)
		prev := lines[out[k-1].src[0]]
		dup := lines[r.intn(int(out[k-1].src[0]))].id // an earlier entry's id
		ts := prev.ts + r.between(1, 500)
		b := []byte(`{"type":"custom"`)
		b = kvStr(b, "id", dup)
		b = kvStr(b, "parentId", prev.id)
		b = kvISO(b, "timestamp", ts)
		b = kvStr(b, "customType", "todo-state")
		b = append(b, `,"data":{"items":[],"version":2}}`...)
		out = append(out[:k], append([]outLine{{b: b, term: "\n", src: noSrc, n: 1, ts: ts}}, out[k:]...)...)
		f.Status = "corrupt"
		code("duplicate_id")
	case dDangling:
		k := middle()
		out[k].b = replaceParent(out[k].b, `"`+g.newID()+`"`)
		f.Status = "corrupt"
		code("dangling_parent")
	case dCycle:
		done := false
		for j := 2; j < len(out) && !done; j++ {
			if lines[out[j].src[0]].parent == 0 {
				out[1].b = replaceParent(out[1].b, `"`+lines[out[j].src[0]].id+`"`)
				done = true
			}
		}
		if !done {
			return nil, nil, fmt.Errorf("synth: %s: no entry to close a parent cycle with", rel)
		}
		f.Status = "corrupt"
		code("parent_cycle")
	case dFuture:
		f.Status, f.FormatVersion, f.EarlyV4, fo.countable = "future_version", nil, false, false
		code("future_version")
	case dUnrecognized:
		f.Status, f.FormatVersion, f.EarlyV4, fo.countable = "unrecognized_version", nil, false, false
		code("unrecognized_version")
	case dBOM:
		out[0].b = append([]byte("\xef\xbb\xbf"), out[0].b...)
		// SPEC.md §1.5: a BOM file is not loadable, but export and report
		// read it with the BOM dropped, so its records count.
		f.Status = "not_session"
		code("bom")
	case dEmpty:
		out = out[:0]
		f.Status, f.FormatVersion, f.EarlyV4, f.SessionID, fo.countable = "empty", nil, false, nil, false
	case dNoNewline:
		out[len(out)-1].term = ""
		code("no_trailing_newline")
	case dCRLF:
		for i := range out {
			out[i].term = "\r\n"
		}
	case dInvalidUTF8:
		done := false
		for tries, k := 0, middle(); tries < len(out) && !done; tries, k = tries+1, 1+(k%(len(out)-1)) {
			if i := bytes.Index(out[k].b, []byte(`"text":"`)); i >= 0 {
				i += len(`"text":"`)
				// Latin-1 "é" and two bytes that are never UTF-8, inside a string.
				out[k].b = append(append(append([]byte(nil), out[k].b[:i]...), "caf\xe9 \xff\xfe "...), out[k].b[i:]...)
				done = true
			}
		}
		if !done {
			return nil, nil, fmt.Errorf("synth: %s: no text block for invalid UTF-8", rel)
		}
		code("invalid_utf8")
	case dUnknownType:
		k := middle()
		prev := lines[out[k-1].src[0]]
		ts := prev.ts + r.between(1, 500)
		b := []byte(`{"type":"review_marker"`)
		b = kvStr(b, "id", g.newID())
		b = kvStr(b, "parentId", prev.id)
		b = kvISO(b, "timestamp", ts)
		b = append(b, `,"state":{"open":2,"resolved":1}}`...)
		out = append(out[:k], append([]outLine{{b: b, term: "\n", src: noSrc, n: 1, ts: ts}}, out[k:]...)...)
		code("unknown_entry_type")
	case dMixedV1:
		code("mixed_v1")
	case dNotSession:
		out = out[:0]
		t := s.hdrTs
		for i := r.btw(6, 30); i > 0; i-- {
			t += r.between(60000, 3*86400000)
			b := []byte{'{'}
			b = kvStr(b, "prompt", fill(r, pick(r, userPrompts), s.project))
			b = kvStr(b, "cwd", s.cwd)
			b = kvInt(b, "timestamp", t)
			b = append(b, '}')
			out = append(out, outLine{b: b, term: "\n", src: noSrc, n: 1, ts: t})
		}
		out[0].n = 0
		f.Status, f.FormatVersion, f.EarlyV4, f.SessionID, f.ParentSessionID, fo.countable = "not_session", nil, false, nil, nil, false
		code("not_session")
	}
	for _, ol := range out {
		f.Entries += ol.n
	}
	// Recovered billed records, each attributed to the nearest preceding
	// assistant message of this file (session_summary: unknown model).
	last := modelUnknown
	for _, ol := range out {
		for _, si := range ol.src {
			if si < 0 {
				continue
			}
			ln := &lines[si]
			if ln.asst >= 0 {
				last = int(ln.asst)
			}
			if !ln.hasRec {
				continue
			}
			m := last
			if ln.rec.kind == kindSessionSummary {
				m = modelUnknown
			}
			fo.recs = append(fo.recs, recRef{b: &ln.rec, model: m, ts: ln.ts})
		}
	}
	return fo, out, nil
}

// safeCut returns a cut position inside b between two alphanumeric bytes
// (inside a word of a string or a number), so the kept prefix is never a
// complete JSON value and holds no complete record a reader could recover.
func safeCut(r *rng, b []byte) int {
	isAlnum := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	lo, hi := max(len(b)/3, 1), len(b)*9/10
	if hi <= lo {
		hi = len(b) - 1
	}
	start := lo + r.intn(max(hi-lo, 1))
	for p := start; p < len(b)-1; p++ {
		if isAlnum(b[p-1]) && isAlnum(b[p]) {
			return p
		}
	}
	for p := start; p > 1; p-- {
		if isAlnum(b[p-1]) && isAlnum(b[p]) {
			return p
		}
	}
	return len(b) / 2
}

// replaceParent replaces the value of the first "parentId" key of an entry.
func replaceParent(b []byte, val string) []byte {
	i := bytes.Index(b, []byte(`"parentId":`))
	if i < 0 {
		return b
	}
	i += len(`"parentId":`)
	j := i + 4 // null
	if b[i] == '"' {
		j = i + 1 + bytes.IndexByte(b[i+1:], '"') + 1
	}
	return append(append(append([]byte(nil), b[:i]...), val...), b[j:]...)
}

// mirror swaps the .pi and .atomic roots of a relative path.
func mirror(rel string) string {
	if r, ok := strings.CutPrefix(rel, ".pi/"); ok {
		return ".atomic/" + r
	}
	if r, ok := strings.CutPrefix(rel, ".atomic/"); ok {
		return ".pi/" + r
	}
	return rel
}

func sourceOf(rel string) string {
	switch {
	case strings.HasPrefix(rel, ".pi/"):
		return "pi"
	case strings.HasPrefix(rel, ".atomic/"):
		return "atomic"
	case strings.HasPrefix(rel, ".prime/"):
		return "prime"
	}
	return "custom"
}

// fileMode is the permission a file gets: the pi writer creates 0600 files.
func fileMode(rel string) os.FileMode {
	if strings.HasPrefix(rel, ".pi/") {
		return 0o600
	}
	return 0o644
}

// write creates the file, streaming the lines through one buffer into the
// file and the hash, and sets its mtime.
func (g *generator) write(fo *fileOut, out []outLine) error {
	path := g.abs(fo.Path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(fh, 1<<20)
	var n int64
	for _, ol := range out {
		w.Write(ol.b)
		h.Write(ol.b)
		w.WriteString(ol.term)
		h.Write([]byte(ol.term))
		n += int64(len(ol.b) + len(ol.term))
	}
	err = w.Flush()
	mode := fileMode(fo.Path)
	if err == nil {
		err = fh.Chmod(mode)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	mt := fo.hdrTs
	if len(out) > 0 {
		mt = max(mt, out[len(out)-1].ts)
	}
	when := time.UnixMilli(mt)
	if err := os.Chtimes(path, when, when); err != nil {
		return err
	}
	fo.Bytes = n
	fo.SHA256 = hex.EncodeToString(h.Sum(nil))
	fo.Mtime = isoString(mt)
	fo.Mode = fmt.Sprintf("%04o", mode)
	return nil
}

// family generates and writes family fi and counts its billed records.
func (g *generator) family(ctx context.Context, fi int) ([]*fileOut, *tally, error) {
	spec := &g.plan.fams[fi]
	fg := &famGen{generator: g, ctx: ctx, r: newRNG(mix64(g.opts.Seed ^ mix64(uint64(fi)+0x66616d))), fam: uint32(fi)}
	if len(spec.runs) > 0 {
		return fg.subagentFamily(spec)
	}
	sessions := make([]*sess, len(spec.files))
	outs := make([]*fileOut, 0, len(spec.files))
	for i := range spec.files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		fs := &spec.files[i]
		var s *sess
		rel, n := "", 0
		switch fs.kind {
		case kSession:
			s = fg.root(fs)
			rel, n = s.rel, len(s.lines)
		case kFork, kExtract:
			var err error
			if s, err = fg.fork(sessions[fs.parent], fs); err != nil {
				return nil, nil, err
			}
			rel, n = s.rel, len(s.lines)
		case kCopy, kSnapshot:
			s = sessions[fs.parent]
			rel = mirror(s.rel)
			n = len(s.lines)
			if fs.kind == kSnapshot {
				want, cum := (s.bytes-int64(len(s.header)))*int64(fs.frac)/100, int64(0)
				n = 1
				for k := range s.lines {
					cum += int64(len(s.lines[k].raw)) + 1
					if cum >= want {
						n = k + 1
						break
					}
				}
			}
		}
		sessions[i] = s
		if fg.err != nil {
			return nil, nil, fg.err
		}
		fo, out, err := fg.render(s, fs, rel, n)
		if err != nil {
			return nil, nil, err
		}
		if fs.kind == kCopy || fs.kind == kSnapshot {
			orig := sessions[fs.parent].rel
			fo.CopyOf = &orig
		}
		if err := g.write(fo, out); err != nil {
			return nil, nil, err
		}
		if spec.lock && i == 0 {
			lock := g.abs(fo.Path) + ".lock"
			if err := os.Mkdir(lock, 0o755); err != nil {
				return nil, nil, err
			}
			when := time.UnixMilli(fo.hdrTs)
			if err := os.Chtimes(lock, when, when); err != nil {
				return nil, nil, err
			}
			g.addExtra(Extra{Path: fo.Path + ".lock", Kind: "lock_dir"})
		}
		outs = append(outs, fo)
	}
	t := g.count(outs)
	for _, fo := range outs {
		fo.recs = nil // they point into the lines: let the content be collected
	}
	return outs, t, nil
}

// count applies SPEC.md §4 within the family: files in order of header
// age (ties: more entries first, then path), each record identity counted
// once, later occurrences are copies.
func (g *generator) count(outs []*fileOut) *tally {
	order := make([]*fileOut, len(outs))
	copy(order, outs)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.hdrTs != b.hdrTs {
			return a.hdrTs < b.hdrTs
		}
		if a.Entries != b.Entries {
			return a.Entries > b.Entries
		}
		return a.Path < b.Path
	})
	t := newTally()
	seen := make(map[recKey]struct{})
	for _, fo := range order {
		if !fo.countable {
			continue
		}
		for _, rr := range fo.recs {
			if rr.b.covered {
				fo.Usage.Rollups++
				t.rollups++
				if len(rr.b.parts) == 0 {
					continue
				}
				if _, dup := seen[rr.b.key]; dup {
					continue // a copy's parts: counted where the roll-up first is
				}
				seen[rr.b.key] = struct{}{}
				for _, part := range rr.b.parts {
					pr := rr
					pr.b = &billed{kind: rr.b.kind, u: part, key: rr.b.key}
					t.add(pr)
					fo.Usage.add(pr)
				}
				continue
			}
			if _, dup := seen[rr.b.key]; dup {
				fo.Usage.Copies++
				t.copies++
				continue
			}
			seen[rr.b.key] = struct{}{}
			t.add(rr)
			fo.Usage.add(rr)
		}
	}
	return t
}
