package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportHugeTextBlock (issue 12, finding 11): one tool output of 200 MB
// in a home is exported to both sinks by a real process, every byte of it
// (length and MD5 of the decoded text in DuckDB and in Parquet), under
// 1.2 GB of peak RSS (Linux, without the race detector). Before, DuckDB
// could not allocate the block under its memory limit and the export
// failed (or ran three times with the limit raised, 2.3 GB peak), and the
// Parquet writer held some seven copies of the value. With -short (and
// under the race detector, which multiplies memory) the block is 24 MB:
// still larger than a Parquet row group, the path a huge value takes.
func TestExportHugeTextBlock(t *testing.T) {
	size := 200 << 20
	if testing.Short() || raceEnabled {
		size = 24 << 20
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	sessions := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-proj--")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	wantBytes, wantLen, wantMD5 := writeHugeTextSession(t, filepath.Join(sessions, "2025-06-01T10-00-00-000Z_5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01.jsonl"), size)

	db, pq := filepath.Join(dir, "out.duckdb"), filepath.Join(dir, "pq")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "export", "--quiet", "--workers", "2", "--duckdb", db, "--parquet", pq, home)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1", "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	rss := peakRSS(cmd.ProcessState)
	t.Logf("text block %d bytes: export to both sinks, peak RSS %d MiB", wantBytes, rss>>20)
	if size >= 200<<20 && rss > 1200<<20 {
		t.Errorf("peak RSS %d MiB, want under 1200 MiB for a %d MiB block", rss>>20, size>>20)
	}

	want := fmt.Sprintf("%d,%d,%s", wantBytes, wantLen, wantMD5)
	for _, from := range []string{"content_blocks", fmt.Sprintf("read_parquet('%s/content_blocks/*.parquet')", pq)} {
		q := "SELECT byte_size, length(text), md5(text) FROM " + from + " WHERE byte_size > 1000000"
		code, stdout, stderr := runCLI(t, dir, "query", "--duckdb", db, "--csv", q)
		if code != ExitOK {
			t.Fatalf("query %s: exit %d: %s", from, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 2 || lines[1] != want {
			t.Errorf("%s: got %q, want the block %s", from, lines, want)
		}
	}
}

// writeHugeTextSession writes a v3 session whose second line is a tool
// result of one text block of about size bytes (JSON escapes, a non-ASCII
// letter and numbers in it, so it neither compresses to nothing nor skips
// the unescaping), and returns the decoded text's size in bytes, its
// length in characters and its MD5.
func writeHugeTextSession(t *testing.T, path string, size int) (int, int, string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"type":"session","version":3,"id":"5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/home/dev/proj"}`)
	fmt.Fprint(w, `{"type":"message","id":"d0000001","parentId":null,"timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","isError":false,"content":[{"type":"text","text":"`)
	type word struct{ raw, text string }
	words := []word{{"error", "error"}, {`\n`, "\n"}, {`\"quoted\"`, `"quoted"`}, {`caf\u00e9`, "café"},
		{"main.go:42", "main.go:42"}, {`\t`, "\t"}, {"return nil", "return nil"}, {`C:\\tmp`, `C:\tmp`}}
	h := md5.New()
	bytes, chars := 0, 0
	x := uint64(12)
	for n := 0; n < size; {
		x = x*6364136223846793005 + 1442695040888963407
		wd := words[(x>>33)%uint64(len(words))]
		num := fmt.Sprintf(" %d ", (x>>40)%1000)
		w.WriteString(wd.raw + num)
		h.Write([]byte(wd.text + num))
		chars += len([]rune(wd.text + num))
		bytes += len(wd.text + num)
		n += len(wd.raw) + len(num)
	}
	fmt.Fprintln(w, `"}]}}`)
	fmt.Fprintln(w, `{"type":"message","id":"d0000002","parentId":"d0000001","timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1600,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":1640}}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes, chars, hex.EncodeToString(h.Sum(nil))
}
