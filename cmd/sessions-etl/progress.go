package main

import (
	"context"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// progress is a byte-counting progress bar on stderr, shown only on a
// terminal and never under --quiet; otherwise every method is a no-op.
type progress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	total int64 // bytes announced by Grow; the bar is a spinner while 0
	done  bool  // Done was called: later Grow and Add are ignored
}

func newProgress(ios *IO, g *globalOptions, what string) *progress {
	p := &progress{}
	if !ios.ErrIsTerminal || g.Quiet {
		return p
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(ios.ErrOut),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionUseIECUnits(true), // KiB, MiB: the unit of every other message
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
		// Drawn once at creation: the library's spinner goroutine reads
		// the start time without its lock, so it must be set before the
		// goroutine starts (a data race otherwise).
		progressbar.OptionSetRenderBlankState(true),
	)
	return p
}

// newSpinner is a progress indicator for a phase whose size is unknown
// (SQL inside DuckDB): a spinner and the elapsed time.
func newSpinner(ios *IO, g *globalOptions, what string) *progress {
	p := &progress{}
	if !ios.ErrIsTerminal || g.Quiet {
		return p
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(ios.ErrOut),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
		// Drawn once at creation: the library's spinner goroutine reads
		// the start time without its lock, so it must be set before the
		// goroutine starts (a data race otherwise).
		progressbar.OptionSetRenderBlankState(true),
	)
	return p
}

// Grow adds n bytes to the total: the bar shows %, bytes and the time
// left once a total is known.
func (p *progress) Grow(n int64) {
	if p.bar == nil || n <= 0 {
		return
	}
	p.mu.Lock()
	if !p.done {
		p.total += n
		p.bar.ChangeMax64(p.total)
	}
	p.mu.Unlock()
}

// Add counts n more bytes done; safe for concurrent use.
func (p *progress) Add(n int64) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	if !p.done {
		_ = p.bar.Add64(n)
	}
	p.mu.Unlock()
}

// Done removes the bar.
func (p *progress) Done() {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	if !p.done {
		p.done = true
		_ = p.bar.Finish()
	}
	p.mu.Unlock()
}

// totalFrom announces the bytes of the session files under roots to the
// bar, so that it shows %, bytes and the time left: a second walk of the
// directories (names and stats only) runs ahead of the command's own,
// which reads the files. Only when a bar is shown, and not for home
// archives (listing one means reading it). It returns p.
func (p *progress) totalFrom(ctx context.Context, roots []ingest.Root) *progress {
	if p.bar == nil {
		return p
	}
	for _, r := range roots {
		if r.Archive {
			return p
		}
	}
	go func() {
		_ = ingest.Discover(ctx, roots, func(f ingest.File) error {
			p.Grow(f.Size)
			return nil
		}, func(ingest.PathIssue) {})
	}()
	return p
}
