package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// The import stages copy the generated home's pi and Prime sessions into a
// fresh Atomic store under the work directory (issue "import"), then run
// the same import again, when every session is already there and only
// compared.
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		store := filepath.Join(work, "import", "store")
		runs := filepath.Join(work, "import", "runs")
		argv := []string{bin, "import", "--quiet", "--json", "--backup-dir", runs, "--to", store,
			filepath.Join(home, ".pi"), filepath.Join(home, ".prime")}
		fresh := func() error { return os.RemoveAll(filepath.Join(work, "import")) }
		return []stage{
			// exit 1: the generated home holds damaged files, which are listed and skipped
			{name: "import", argv: argv, setup: fresh, okExit: []int{1}},
			{name: "import (again: all already imported)", compare: "import", argv: argv, okExit: []int{1},
				setup: func() error {
					if _, err := os.Stat(store); !errors.Is(err, fs.ErrNotExist) {
						return err
					}
					// Run on its own (-only): import once first.
					if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
						var ee *exec.ExitError
						if !errors.As(err, &ee) || ee.ExitCode() != 1 {
							return err
						}
					}
					return nil
				}},
		}
	})
}
