package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressBar: on a terminal the reading phase is a bar with %, bytes
// in IEC units (MiB, as every other message) and a time estimate once a
// total was announced; nothing when stderr is not a terminal.
func TestProgressBar(t *testing.T) {
	var errb bytes.Buffer
	ios := &IO{ErrOut: &errb, ErrIsTerminal: true}
	p := &phaseProgress{ios: ios, g: &globalOptions{}}
	tp, ok := p.withTotal().(totalProgress)
	if !ok {
		t.Fatal("no total on a terminal")
	}
	p.Phase("reading")
	tp.Grow(3 << 20)
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		p.Add(1 << 20)
	}
	p.Phase("deriving")
	time.Sleep(350 * time.Millisecond)
	p.done()
	out := errb.String()
	// Which percentages are drawn depends on the 100 ms throttle: the
	// first and at least one later frame are.
	for _, want := range []string{"reading   0%", "( 0 B/3.0 MiB)", ".0/3.0 MiB, "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the progress output:\n%q", want, out)
		}
	}
	if strings.Contains(out, " MB") {
		t.Errorf("decimal units in the progress output: %q", out)
	}

	errb.Reset()
	p = &phaseProgress{ios: &IO{ErrOut: &errb}, g: &globalOptions{}}
	if _, ok := p.withTotal().(totalProgress); ok {
		t.Error("a total (a second directory walk) when no bar is shown")
	}
	p.Phase("reading")
	p.Add(10)
	p.done()
	if errb.Len() != 0 {
		t.Errorf("progress output when stderr is not a terminal: %q", errb.String())
	}
}
