package export

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// totalProgress is a Progress with a total (a terminal's bar): export then
// walks the roots a second time, concurrently, to count.
// totalProgress counts the reading phase only (a Parquet export has a
// writing phase of the same bytes after it).
type totalProgress struct {
	added, grown atomic.Int64
	writing      atomic.Bool
}

func (p *totalProgress) Phase(name string) { p.writing.Store(name == "writing parquet") }
func (p *totalProgress) Add(n int64) {
	if !p.writing.Load() {
		p.added.Add(n)
	}
}
func (p *totalProgress) Grow(n int64) {
	if !p.writing.Load() {
		p.grown.Add(n)
	}
}

// TestArchiveWithProgressTotal: with a progress bar that has a total, the
// counting walk runs beside the reading one over the same .tar.zst; it
// must not disturb the reading walk's archive (it once reset it, and a
// report in a terminal read 35 of 1992 members without a word). Every
// member is read, and the bar's total is the members' bytes.
func TestArchiveWithProgressTotal(t *testing.T) {
	t.Parallel() // changes no package variable: runs next to the other parallel tests
	var members [][2]string
	var bytes int64
	for i := range 300 {
		body := fmt.Sprintf(`{"type":"session","version":3,"id":"s-%03d","timestamp":"2025-09-10T08:00:00.000Z","cwd":"/p%03d"}`+"\n"+
			`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-09-10T08:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1}}}`+"\n", i, i)
		members = append(members, [2]string{fmt.Sprintf(".pi/agent/sessions/--p--/2025-09-10T08-00-00-000Z_s-%03d.jsonl", i), body})
		bytes += int64(len(body))
	}
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			arch := filepath.Join(t.TempDir(), "home.tar.zst")
			writeTarZst(t, arch, members)
			for run := 1; run <= 3; run++ {
				p := &totalProgress{}
				sum := runExport(t, s, t.TempDir(), []string{arch}, func(o *Options) { o.Progress = p })
				if sum.Read != len(members) || sum.Rejected != 0 {
					t.Fatalf("run %d: read %d, rejected %d; want %d, 0", run, sum.Read, sum.Rejected, len(members))
				}
				if p.grown.Load() != bytes || p.added.Load() != bytes {
					t.Errorf("run %d: progress total %d, added %d; want %d", run, p.grown.Load(), p.added.Load(), bytes)
				}
			}
		})
	}
}
