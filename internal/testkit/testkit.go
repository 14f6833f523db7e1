package testkit

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomised tests (default: drawn from the clock and printed on failure)")

// Seed returns the seed of a randomised test: -seed when given, else one
// drawn from the clock. It is logged at once (go test -v shows it) and
// again when the test fails, with the flag that replays it.
func Seed(t testing.TB) uint64 {
	t.Helper()
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano()) % 1_000_000_000
	}
	t.Logf("seed %d", s)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with: go test -run '^%s$' -seed %d", t.Name(), s)
		}
	})
	return s
}

// SeedGiven reports whether -seed was set on the command line.
func SeedGiven() bool { return *seedFlag != 0 }

// CopyTree copies the directories and regular files under src into dst
// (created if needed), keeping each file's permission bits and
// modification time. It fails the test on any error.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(p, out, fi)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TempCopy copies src into a new temporary directory of the test (as
// CopyTree does) and returns it.
func TempCopy(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	CopyTree(t, src, dst)
	return dst
}

// CopyFile copies the regular file src to dst, creating dst's directory,
// keeping its permission bits and modification time.
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	fi, err := os.Stat(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = copyFile(src, dst, fi)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string, fi fs.FileInfo) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Chmod(dst, fi.Mode().Perm()); err != nil { // past the umask
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// WriteFile writes content to path, creating its directories, mode 0644.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Seeds returns the seeds of a test that runs over several generated
// inputs: those of list (a comma-separated flag value, e.g. -subagent-seeds
// 3,4,5) when it is not empty, else fixed followed by one drawn from the
// clock. A bad list fails the test, naming flag.
func Seeds(t testing.TB, flag, list string, fixed ...uint64) []uint64 {
	t.Helper()
	if strings.TrimSpace(list) == "" {
		return append(append([]uint64(nil), fixed...), uint64(time.Now().UnixNano())%1_000_000_000)
	}
	var out []uint64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatalf("-%s: %v", flag, err)
		}
		out = append(out, v)
	}
	return out
}

// BuildCLI builds the sessions-etl command (with the given build tags, if
// any) and returns its path: the real process that crash tests kill.
//
// The binary lives in a directory of the system's temporary directory
// named after the module's directory and the tags (cliDir), shared by the
// packages' tests and by later runs: go build links it again only when a
// source changed (it compares the binary's build ID with its inputs), so
// the packages that kill the command do not link it once each (about 8
// CPU-seconds every time). A lock file serialises the builds of test
// processes running at once (go test runs packages in parallel).
func BuildCLI(t testing.TB, tags ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	dir, err := cliDir(tags)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sessions-etl")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	unlock, err := lockFile(filepath.Join(dir, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "-o", bin, "github.com/sessions-etl/sessions-etl/cmd/sessions-etl")
	if out, err := exec.Command(goBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cliDir is BuildCLI's directory for the module the test runs in (found
// from the working directory, the package's) and the tags: one per
// worktree and tag set, so that two checkouts do not link over each
// other's binary.
func cliDir(tags []string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above the working directory")
		}
		dir = parent
	}
	sum := sha256.Sum256([]byte(dir + "\x00" + strings.Join(tags, ",")))
	return filepath.Join(os.TempDir(), fmt.Sprintf("sessions-etl-testcli-%d-%x", os.Getuid(), sum[:6])), nil
}

// Kill sends SIGKILL to the started cmd and waits for it. killed is false
// when the process had already ended; an error other than the process's
// own exit status fails the test.
func Kill(t testing.TB, cmd *exec.Cmd) (killed bool) {
	t.Helper()
	killed = cmd.Process.Signal(os.Kill) == nil
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return killed
}
