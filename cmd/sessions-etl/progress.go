package main

import (
	"sync"

	"github.com/schollz/progressbar/v3"
)

// progress is a byte-counting progress bar on stderr, shown only on a
// terminal and never under --quiet; otherwise every method is a no-op.
type progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
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
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
	)
	return p
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
