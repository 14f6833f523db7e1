package migrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as an agent-like writer process when
// SESSIONS_ETL_TEST_WRITER is set: it appends label entries to a session
// file, either under the proper-lockfile lock (mkdir <file>.lock, append,
// rmdir, as the agents do) or ignoring locks.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SESSIONS_ETL_TEST_WRITER"); mode != "" {
		if err := writerProcess(mode, os.Getenv("WRITER_FILE"), os.Getenv("WRITER_PREFIX"), atoi(os.Getenv("WRITER_COUNT"))); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func lastEntryID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	for i := len(lines) - 1; i >= 1; i-- {
		if j := strings.Index(lines[i], `"id":"`); j >= 0 {
			rest := lines[i][j+6:]
			return rest[:strings.IndexByte(rest, '"')], nil
		}
	}
	return "", errors.New("no entry with an id")
}

func writerProcess(mode, file, prefix string, count int) error {
	lockDir := file + ".lock"
	parent := ""
	for i := 0; i < count; i++ {
		if mode == "locked" {
			for {
				err := os.Mkdir(lockDir, 0o755)
				if err == nil {
					break
				}
				if !errors.Is(err, fs.ErrExist) {
					return err
				}
				time.Sleep(time.Millisecond)
			}
		}
		if parent == "" {
			p, err := lastEntryID(file)
			if err != nil {
				return err
			}
			parent = p
		}
		id := fmt.Sprintf("%s%05d", prefix, i)
		line := fmt.Sprintf(`{"type":"label","id":"%s","parentId":"%s","timestamp":"2025-03-01T08:00:09.000Z","targetId":"%s","label":"w"}`+"\n", id, parent, parent)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(line)
		f.Close()
		if err != nil {
			return err
		}
		parent = id
		if mode == "locked" {
			if err := os.Remove(lockDir); err != nil {
				return err
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

func startWriter(t *testing.T, mode, file, prefix string, count int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SESSIONS_ETL_TEST_WRITER="+mode, "WRITER_FILE="+file, "WRITER_PREFIX="+prefix, "WRITER_COUNT="+strconv.Itoa(count))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestConcurrentWriters runs migrate while a writer process appends
// entries: one that takes the agent's lock (its appends wait and are never
// lost) and one that ignores locks (migrate re-plans or gives up; no
// appended line is ever lost).
func TestConcurrentWriters(t *testing.T) {
	for _, mode := range []string{"locked", "unlocked"} {
		t.Run(mode, func(t *testing.T) {
			rounds := 5
			if testing.Short() {
				rounds = 1 // the inner loop: one round of each mode
			}
			for round := 0; round < rounds; round++ {
				root := t.TempDir()
				// Many small v3 files and one big one, so migrate runs while the writer appends.
				src, _ := os.ReadFile(filepath.Join(casesDir, "c06-v2-hook-message/session.jsonl"))
				var big bytes.Buffer
				big.Write(src)
				for i := 0; i < 4000; i++ {
					fmt.Fprintf(&big, `{"type":"label","id":"p%07d","parentId":"b0000003","timestamp":"2025-03-01T08:00:03.000Z","targetId":"b0000003","label":"%s"}`+"\n", i, strings.Repeat("x", 200))
				}
				target := filepath.Join(root, "target.jsonl")
				if err := os.WriteFile(target, big.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 20; i++ {
					os.WriteFile(filepath.Join(root, fmt.Sprintf("other%02d.jsonl", i)), src, 0o600)
				}
				const n = 300
				w := startWriter(t, mode, target, "w", n)
				time.Sleep(time.Duration(round) * 3 * time.Millisecond)
				out := runMigrate(t, root, func(o *Options) { o.LockWait = 20 * time.Second; o.Workers = 2 })
				if err := w.Wait(); err != nil {
					t.Fatalf("writer: %v", err)
				}
				r := out.results["target.jsonl"]
				t.Logf("round %d: %s %s %v", round, r.Result, r.Reason, r.Notes)
				final, _ := os.ReadFile(target)
				for i := 0; i < n; i++ {
					id := fmt.Sprintf(`"id":"w%05d"`, i)
					if c := bytes.Count(final, []byte(id)); c != 1 {
						t.Fatalf("round %d: appended entry w%05d found %d times after migrate (%s %s)", round, i, c, r.Result, r.Detail)
					}
				}
				for i := 0; i < 4000; i += 397 {
					if !bytes.Contains(final, []byte(fmt.Sprintf(`"id":"p%07d"`, i))) {
						t.Fatalf("round %d: original entry p%07d lost", round, i)
					}
				}
				switch r.Result {
				case ResultUpgraded:
					if !bytes.HasPrefix(final, []byte(`{"type":"session","version":4,`)) {
						t.Fatalf("upgraded file has header %q", final[:60])
					}
				case ResultFailed:
					if mode == "locked" {
						t.Fatalf("a writer that respects the lock made migrate fail: %s", r.Detail)
					}
					if !bytes.Equal(final[:len(src)], src) {
						t.Fatalf("failed file was modified")
					}
				default:
					t.Fatalf("result %s (%s)", r.Result, r.Detail)
				}
				// The file is complete and loads: one more migrate finishes it.
				if r.Result == ResultFailed {
					again := runMigrate(t, root, nil)
					if again.results["target.jsonl"].Result != ResultUpgraded {
						t.Fatalf("re-run: %+v", again.results["target.jsonl"])
					}
				}
				sc := bufio.NewScanner(bytes.NewReader(final))
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if len(sc.Bytes()) > 0 && sc.Bytes()[0] != '{' {
						t.Fatalf("torn line in result: %q", sc.Bytes())
					}
				}
			}
		})
	}
}
