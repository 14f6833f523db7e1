package main

import (
	"sync"

	"github.com/schollz/progressbar/v3"
)

// progress is a byte-counting progress bar on stderr, shown only on a
// terminal and never under --quiet; otherwise every method is a no-op.
type progress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	total int64 // bytes announced by Grow; the bar is a spinner while 0
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
	p.total += n
	p.bar.ChangeMax64(p.total)
	p.mu.Unlock()
}

// Add counts n more bytes done; safe for concurrent use.
func (p *progress) Add(n int64) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	_ = p.bar.Add64(n)
	p.mu.Unlock()
}

// Done removes the bar.
func (p *progress) Done() {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	_ = p.bar.Finish()
	p.mu.Unlock()
}
