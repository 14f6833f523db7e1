package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
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

// TestProgressWriteParquet: export's write phase is a bar with %, bytes
// and a time estimate too (not a spinner), on a terminal only.
func TestProgressWriteParquet(t *testing.T) {
	var errb bytes.Buffer
	p := &phaseProgress{ios: &IO{ErrOut: &errb, ErrIsTerminal: true}, g: &globalOptions{}}
	tp := p.withTotal().(totalProgress)
	p.Phase("writing parquet")
	tp.Grow(4 << 20)
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		p.Add(1 << 20)
	}
	p.done()
	out := errb.String()
	for _, want := range []string{"writing parquet   0%", "( 0 B/4.0 MiB)", ".0/4.0 MiB, "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the progress output:\n%q", want, out)
		}
	}
	errb.Reset()
	p = &phaseProgress{ios: &IO{ErrOut: &errb}, g: &globalOptions{}}
	p.withTotal()
	p.Phase("writing parquet")
	p.Add(10)
	p.done()
	if errb.Len() != 0 {
		t.Errorf("progress output when stderr is not a terminal: %q", errb.String())
	}
}

// TestProgressTotalFrom: validate, migrate and import announce the bytes
// of the files under their roots (a second walk), so their bar shows a
// total: the sum of the session files' sizes. No walk and no output when
// stderr is not a terminal or under --quiet.
func TestProgressTotalFrom(t *testing.T) {
	dir := t.TempDir()
	writeFile := func(name string, n int) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte("x"), n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("a.jsonl", 1<<20)
	writeFile("s/b.jsonl", 2<<20)
	roots, err := ingest.PathRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	ios := &IO{ErrOut: &errb, ErrIsTerminal: true}
	p := newProgress(ios, &globalOptions{}, "validating").totalFrom(context.Background(), roots)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		total := p.total
		p.mu.Unlock()
		if total == 3<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("total %d after 10 s, want %d", total, 3<<20)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond)
	p.Add(1 << 20)
	p.Done()
	p.Grow(5) // after Done: ignored, nothing drawn
	p.Add(5)
	if out := errb.String(); !strings.Contains(out, "/3.0 MiB") {
		t.Errorf("no total in the bar: %q", out)
	}
	for _, g := range []*globalOptions{{}, {Quiet: true}} {
		errb.Reset()
		term := g.Quiet
		q := newProgress(&IO{ErrOut: &errb, ErrIsTerminal: term}, g, "validating").totalFrom(context.Background(), roots)
		q.Add(1 << 20)
		q.Done()
		if q.bar != nil || errb.Len() != 0 {
			t.Errorf("terminal %v, quiet %v: a bar (%q)", term, g.Quiet, errb.String())
		}
	}
}
