package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	_ "time/tzdata" // daily usage in America/Los_Angeles and Asia/Tokyo on machines without a zone database
)

const generatorName = "sessions-etl synth"

// Options says what home to generate.
type Options struct {
	Out      string // directory to create (the "home"; files go under Out/.pi, Out/.atomic, Out/.prime)
	Sessions int    // number of sessions (files) to generate, approximately
	Seed     uint64
	Size     int64 // optional target total bytes of session files (0 = natural size)
	// Workers is the number of families generated in parallel; 0 means
	// GOMAXPROCS. The output does not depend on it.
	Workers int
	// Subagents adds pi sessions that run subagents (SPEC.md §7.3): the
	// parent's toolResult rolls up each child's spend and the child's own
	// session file points back, some child files left out (see
	// subagents.go). Off, the home is byte-identical to one generated
	// without the option.
	Subagents bool
	// Profile is the shape of the home (profile.go); "" is the default.
	Profile Profile
}

// generator holds what every family shares.
type generator struct {
	opts   Options
	absOut string
	corpus *corpus
	keyID  uint32
	plan   *plan

	mu     sync.Mutex
	extras []Extra
	runs   []SubagentRun
}

func (g *generator) addExtra(e Extra) {
	g.mu.Lock()
	g.extras = append(g.extras, e)
	g.mu.Unlock()
}

var (
	zonesOnce sync.Once
	zonesErr  error
)

func loadZones() error {
	zonesOnce.Do(func() {
		for i, name := range DailyZones {
			loc, err := time.LoadLocation(name)
			if err != nil {
				zonesErr = err
				return
			}
			zoneLocs[i] = loc
		}
	})
	return zonesErr
}

// Generate writes a home of synthetic session files under opts.Out (which
// must not exist or be empty) and its manifest, Out/manifest.json. The same
// options give byte-identical files, mtimes and manifest.
func Generate(ctx context.Context, opts Options) (*Manifest, error) {
	if opts.Out == "" {
		return nil, errors.New("synth: no output directory")
	}
	if opts.Sessions <= 0 {
		return nil, fmt.Errorf("synth: sessions must be positive, got %d", opts.Sessions)
	}
	if opts.Size < 0 {
		return nil, fmt.Errorf("synth: size must not be negative, got %d", opts.Size)
	}
	if _, err := ParseProfile(string(opts.Profile)); err != nil {
		return nil, err
	}
	if err := loadZones(); err != nil {
		return nil, fmt.Errorf("synth: time zones: %w", err)
	}
	abs, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	if err := ensureEmptyDir(abs); err != nil {
		return nil, err
	}
	pl, err := makePlan(opts)
	if err != nil {
		return nil, err
	}
	g := &generator{opts: opts, absOut: abs, corpus: getCorpus(), plan: pl,
		keyID: uint32(mix64(opts.Seed ^ 0x1d5)), extras: []Extra{}}

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(pl.fams)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		files []*fileOut
		t     *tally
	}
	results := make([]result, len(pl.fams))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fi := range jobs {
				files, t, err := g.family(ctx, fi)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					continue
				}
				results[fi] = result{files, t}
			}
		}()
	}
feed:
	for fi := range pl.fams {
		select {
		case jobs <- fi:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	m := &Manifest{Generator: generatorName, Version: ManifestVersion, Seed: opts.Seed, Sessions: opts.Sessions, Profile: opts.Profile,
		Size: opts.Size, Files: []File{}}
	total := newTally()
	for _, r := range results {
		for _, fo := range r.files {
			m.Files = append(m.Files, fo.File)
			m.Bytes += fo.Bytes
		}
		total.merge(r.t)
	}
	m.Usage = total.usage()
	if err := g.writeOthers(); err != nil {
		return nil, err
	}
	m.Extras = g.extras
	m.Subagents, m.SubagentRuns = opts.Subagents, g.sortedRuns()
	m.sortFiles()
	raw, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}
	mpath := filepath.Join(abs, "manifest.json")
	if err := os.WriteFile(mpath, append(raw, '\n'), 0o644); err != nil {
		return nil, err
	}
	when := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(mpath, when, when); err != nil {
		return nil, err
	}
	return m, nil
}

func ensureEmptyDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != io.EOF {
		if err == nil {
			return fmt.Errorf("synth: %s is not empty", dir)
		}
		return err
	}
	return nil
}

// writeOthers writes the non-session files a real home has next to its
// sessions (settings, an export), which tools must skip.
func (g *generator) writeOthers() error {
	others := []struct{ rel, body string }{
		{".pi/agent/settings.json", `{"defaultProvider":"anthropic","defaultModel":"claude-sonnet-4-5","defaultThinkingLevel":"medium"}` + "\n"},
		{".atomic/agent/settings.json", `{"defaultProvider":"openai","defaultModel":"gpt-5-codex","sessions":{"storage":"jsonl"}}` + "\n"},
		{".atomic/agent/sessions/" + cwdDir("/home/dev/"+projects[0]) + "/session-export.md", "# Session export\n\nExported from Atomic.\n"},
	}
	when := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, o := range others {
		path := g.abs(o.rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(o.body), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(path, when, when); err != nil {
			return err
		}
		g.extras = append(g.extras, Extra{Path: o.rel, Kind: "other"})
	}
	return nil
}
