package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// A stage is one timed command.
type stage struct {
	name    string
	compare string   // the comparable stage this one is measured against, if any
	argv    []string // argv[0] "" means: this benchrun binary (child modes)
	setup   func() error
	okExit  []int // exit codes that count as success (validate exits 1 on damaged files)
}

type result struct {
	stage   stage
	wall    time.Duration
	maxRSS  int64 // bytes
	err     error
	summary string
}

var (
	flagBin     = flag.String("bin", "bin/sessions-etl", "sessions-etl binary to measure")
	flagHome    = flag.String("home", ".bench/home", "generated home (created when missing)")
	flagSize    = flag.Int64("size", 1<<30, "bytes of session files to generate")
	flagSess    = flag.Int("sessions", 2000, "sessions to generate")
	flagProfile = flag.String("profile", "default", "synth profile of a generated home: default, usage-dense, content-heavy, many-tiny or fork-heavy (a home with a manifest is used as it is)")
	flagOnly    = flag.String("only", "", "comma-separated stage names to run (default: all)")
	flagWork    = flag.String("work", ".bench/work", "scratch directory for outputs")
	flagRepeats = flag.Int("repeat", 1, "runs per stage; the fastest is reported")
)

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "child:") {
		if err := child(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// workMarker marks a scratch directory as the harness's own: it removes
// its outputs there between stages.
const workMarker = ".sessions-etl-bench-work"

// prepareWork makes sure work is a scratch directory of the harness: new,
// empty, or marked by an earlier run. Any other directory is refused.
func prepareWork(work string) error {
	ents, err := os.ReadDir(work)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(work, workMarker)); err != nil {
			return fmt.Errorf("refusing to use %s as the scratch directory: it is not empty and was not made by the bench (give -work a new path)", work)
		}
		return nil
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(work, workMarker), nil, 0o644)
}

// prepareHome makes sure home holds a generated sample home: one with a
// synth manifest.json is used as is; a new or empty directory is filled by
// generate, which writes into a new sibling directory renamed into place
// once complete. Anything else — a directory with other contents, such as
// a real ~/.pi or a test corpus — is refused and never removed.
func prepareHome(home string, generate func(dir string) error) error {
	if _, err := os.Stat(filepath.Join(home, "manifest.json")); err == nil {
		return nil
	}
	ents, err := os.ReadDir(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(ents) > 0:
		return fmt.Errorf("refusing to use %s: it is not empty and holds no manifest.json of a generated home; the bench generates its home only in a new or empty directory (give -home a new path)", home)
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(home), "."+filepath.Base(home)+".generating-")
	if err != nil {
		return err
	}
	out := filepath.Join(tmp, "home")
	if err := generate(out); err != nil {
		os.RemoveAll(tmp) // ours: created above
		return err
	}
	if err := os.Remove(home); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return err // os.Remove never removes a directory that holds anything
	}
	if err := os.Rename(out, home); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return os.Remove(tmp)
}

func run() error {
	bin, err := filepath.Abs(*flagBin)
	if err != nil {
		return err
	}
	home, _ := filepath.Abs(*flagHome)
	work, _ := filepath.Abs(*flagWork)
	if err := prepareWork(work); err != nil {
		return err
	}
	if err := prepareHome(home, func(dir string) error {
		fmt.Fprintf(os.Stderr, "generating %s (%d sessions, %d bytes, profile %s)…\n", home, *flagSess, *flagSize, *flagProfile)
		cmd := exec.Command(bin, "synth", "--out", dir, "--sessions", fmt.Sprint(*flagSess), "--seed", "1", "--size", fmt.Sprint(*flagSize), "--profile", *flagProfile)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		return nil
	}); err != nil {
		return err
	}
	files, total, err := sessionBytes(home)
	if err != nil {
		return err
	}
	warm(home)
	fmt.Fprintf(os.Stderr, "home: %d session files, %.1f MB; %d CPUs, %s\n", files, float64(total)/1e6, runtime.NumCPU(), runtime.Version())

	only := map[string]bool{}
	for _, s := range strings.Split(*flagOnly, ",") {
		if s != "" {
			only[s] = true
		}
	}
	var results []result
	for _, st := range stages(bin, home, work) {
		if len(only) > 0 && !only[st.name] {
			continue
		}
		var best result
		for i := 0; i < max(*flagRepeats, 1); i++ {
			r := measure(st)
			if i == 0 || (r.err == nil && r.wall < best.wall) {
				best = r
			}
		}
		results = append(results, best)
		if best.err != nil {
			fmt.Fprintf(os.Stderr, "%-28s FAILED: %v\n", st.name, best.err)
		} else {
			fmt.Fprintf(os.Stderr, "%-28s %8.2fs %9.1f MB/s %8.1f MiB RSS %s\n", st.name, best.wall.Seconds(), float64(total)/1e6/best.wall.Seconds(), float64(best.maxRSS)/(1<<20), best.summary)
		}
	}
	printTable(os.Stdout, results, files, total)
	return nil
}

// stageMakers are registered by the stage files (validate.go, …).
var stageMakers []func(bin, home, work string) []stage

func stages(bin, home, work string) []stage {
	var out []stage
	for _, mk := range stageMakers {
		out = append(out, mk(bin, home, work)...)
	}
	return out
}

func measure(st stage) result {
	r := result{stage: st}
	if st.setup != nil {
		if err := st.setup(); err != nil {
			r.err = err
			return r
		}
	}
	argv := st.argv
	if argv[0] == "" {
		self, _ := os.Executable()
		argv = append([]string{self}, argv[1:]...)
	}
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: 1 << 20}
	cmd.Stderr = &limited{w: &errb, n: 1 << 16}
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		r.maxRSS = maxRSS(ps)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		ok := false
		for _, c := range st.okExit {
			ok = ok || c == code
		}
		if !ok {
			r.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
		}
	} else if err != nil {
		r.err = err
	}
	r.summary = lastLine(out.String())
	return r
}

type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func sessionBytes(home string) (int, int64, error) {
	n, total := 0, int64(0)
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n++
			total += fi.Size()
		}
		return nil
	})
	return n, total, err
}

// warm reads every file once so every stage starts from the page cache.
func warm(home string) {
	buf := make([]byte, 1<<20)
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if f, err := os.Open(p); err == nil {
				for {
					if _, err := f.Read(buf); err != nil {
						break
					}
				}
				f.Close()
			}
		}
		return nil
	})
}

func printTable(w io.Writer, rs []result, files int, total int64) {
	fmt.Fprintf(w, "\nHome: %d session files, %.1f MB (%s, %d CPUs). MB/s = session bytes / wall time; RSS = peak resident set of the process.\n\n", files, float64(total)/1e6, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintln(w, "| stage | wall (s) | MB/s | peak RSS (MiB) | compared with | output |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for _, r := range rs {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | failed | | | %s | %s |\n", r.stage.name, r.stage.compare, strings.ReplaceAll(r.err.Error(), "|", "/"))
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f | %.0f | %.0f | %s | %s |\n", r.stage.name, r.wall.Seconds(), float64(total)/1e6/r.wall.Seconds(),
			float64(r.maxRSS)/(1<<20), r.stage.compare, strings.ReplaceAll(r.summary, "|", "/"))
	}
}

// childModes are the work benchrun does itself in a child process (so its
// RSS is measured alone), registered by the stage files.
var childModes = map[string]func(args []string) error{}

func child(mode string, args []string) error {
	fn, ok := childModes[strings.TrimPrefix(mode, "child:")]
	if !ok {
		return fmt.Errorf("unknown child mode %s", mode)
	}
	return fn(args)
}
