package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestContentWriterFailsMidRun: when a part file of content_blocks cannot
// be created after others were written (its row groups are written by a
// goroutine of their own), the export fails with that error, releases all
// its Arrow memory, leaves nothing behind in the Parquet directory, and a
// later run succeeds.
func TestContentWriterFailsMidRun(t *testing.T) {
	home, _ := generatedHome(t)
	rowGroupBytes, partFileBytes = 64<<10, 256<<10
	defer func() { rowGroupBytes, partFileBytes = RowGroupBytes, PartFileBytes }()
	var calls atomic.Int32
	createFile = func(name string) (*os.File, error) {
		if strings.Contains(filepath.Base(filepath.Dir(name)), TableContentBlocks) && calls.Add(1) == 3 {
			return nil, &os.PathError{Op: "open", Path: name, Err: errNoSpace}
		}
		return defaultCreateFile(name)
	}
	defer func() { createFile = defaultCreateFile }()
	out := t.TempDir()
	opts := sinks[1].options(out)
	opts.Roots, _ = pathRoots(home)
	opts.Workers = 2
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts.Allocator = mem
	if _, err := Run(context.Background(), opts); !errors.Is(err, errNoSpace) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	mem.AssertSize(t, 0)
	if calls.Load() < 3 {
		t.Fatalf("the content writer created %d part files: the fixture is too small to fail mid-run", calls.Load())
	}
	ents, _ := os.ReadDir(filepath.Join(out, "parquet"))
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("left %s behind after a failed export", e.Name())
		}
	}
	createFile = defaultCreateFile
	sum := runExport(t, sinks[1], out, []string{home}, nil)
	if len(sum.ParquetTables) != len(Tables) {
		t.Errorf("the run after the failure wrote %v, want every dataset", sum.ParquetTables)
	}
}
