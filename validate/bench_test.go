package validate

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/synth"
)

// benchSession builds a realistic ~size-byte v3 session in memory: user
// prompts, assistant messages with usage, tool results of tens of KB with
// the escapes real code output has.
func benchSession(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/home/dev/proj"}` + "\n")
	code := strings.Repeat(`func main() {\n\tfmt.Println(\"hello, world\")\n\tif err != nil {\n\t\treturn fmt.Errorf(\"read %s: %w\", path, err)\n\t}\n}\n`, 200)
	prev := "null"
	for i := 0; b.Len() < size; i++ {
		id := fmt.Sprintf("%08x", i)
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"please fix the failing test in pkg/foo"}],"timestamp":1748772001000}}`+"\n", id, prev)
		case 1:
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look at the file first."},{"type":"toolCall","id":"toolu_01","name":"read","arguments":{"path":"pkg/foo/foo_test.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":0,"totalTokens":1,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"stopReason":"toolUse","timestamp":1748772002000}}`+"\n", id, prev, rng.IntN(5000), rng.IntN(900), rng.IntN(90000))
		default:
			n := 2000 + rng.IntN(len(code)-2000)
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2025-06-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"toolu_01","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1748772003000}}`+"\n", id, prev, strings.TrimRight(code[:n], `\`))
		}
		prev = `"` + id + `"`
	}
	return b.Bytes()
}

func BenchmarkValidate(b *testing.B) {
	data := benchSession(16 << 20)
	c := NewChecker()
	r := ingest.Reader{MaxDepth: 1}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		c.Reset()
		if _, err := r.Read(context.Background(), bytes.NewReader(data), c); err != nil {
			b.Fatal(err)
		}
		if res := c.Finish(); res.Status != StatusNeedsUpgrade {
			b.Fatalf("status %s %v", res.Status, res.Issues)
		}
	}
}

func BenchmarkTapeDepth4(b *testing.B) {
	data := benchSession(16 << 20)
	r := ingest.Reader{MaxDepth: 4}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := r.Read(context.Background(), bytes.NewReader(data), visitNone{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinesOnly(b *testing.B) {
	data := benchSession(16 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lr := ingest.NewLineReader(bytes.NewReader(data))
		for {
			if _, err := lr.Next(); err != nil {
				break
			}
		}
	}
}

type visitNone struct{}

func (visitNone) Record(*ingest.Record) error { return nil }
func (visitNone) Issue(ingest.Issue)          {}

// BenchmarkValidateSynth validates the files of a small generated home
// (realistic tool output, escapes every ~12 bytes), one worker.
func BenchmarkValidateSynth(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 40, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, filepath.Join(home, f.Path))
	}
	c := NewChecker()
	r := ingest.Reader{MaxDepth: 1}
	b.SetBytes(m.Bytes)
	for b.Loop() {
		for _, p := range paths {
			if _, err := File(context.Background(), &r, c, p); err != nil {
				b.Fatal(err)
			}
		}
	}
}
