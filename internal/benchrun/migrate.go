package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The migrate stages upgrade a private copy of the generated home in place
// (issue "migrate"): with backups (the default: every original is copied
// into the run directory first) and with --no-backup. The copy is made in
// setup, outside the timed command; the XDG_STATE_HOME of the child points
// into the work directory so runs and lock files stay there.
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		dir := filepath.Join(work, "migrate")
		copyDir := filepath.Join(dir, "home")
		fresh := func() error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if out, err := exec.Command("cp", "-a", home, copyDir).CombinedOutput(); err != nil {
				return fmt.Errorf("cp: %v: %s", err, out)
			}
			warm(copyDir)
			return nil
		}
		argv := func(extra ...string) []string {
			a := []string{"", "child:with-env", "XDG_STATE_HOME=" + filepath.Join(dir, "state"), bin, "migrate", "--quiet", "--json"}
			a = append(a, extra...)
			return append(a, copyDir)
		}
		return []stage{
			// exit 1: the generated home holds damaged files, which are reported and left untouched
			{name: "migrate (with backups)", argv: argv(), setup: fresh, okExit: []int{1}},
			{name: "migrate (--no-backup)", compare: "migrate (with backups)", argv: argv("--no-backup"), setup: fresh, okExit: []int{1}},
			{name: "migrate (again: nothing to do)", compare: "migrate (with backups)", argv: argv(), okExit: []int{1}},
		}
	})
	childModes["with-env"] = func(args []string) error {
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Env = append(os.Environ(), args[0])
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		return cmd.Run()
	}
}
