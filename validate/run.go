package validate

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/internal/pipeline"
)

// StatusSkipped marks a path that discovery reported but that holds no file
// to validate (a broken link, a directory link cycle, another kind of JSONL
// file in pi's agent directory). It is not an error.
const StatusSkipped Status = "skipped"

// FileResult is the verdict on one discovered path.
type FileResult struct {
	File ingest.File // Path and Source always set; size and times when the file was found
	Result
}

// Options configures [Run].
type Options struct {
	Roots   []ingest.Root
	Workers int // parallel files; < 1 means 1
	// Progress, when set, is called from worker goroutines with the size in
	// bytes of each file once it is validated.
	Progress func(bytes int64)
}

// Summary counts the verdicts of a run.
type Summary struct {
	Files     int            `json:"files"` // every path with a verdict, skipped ones included: the sum of ByStatus
	Bytes     int64          `json:"bytes"`
	ByStatus  map[Status]int `json:"by_status"`
	ByVersion map[string]int `json:"by_version"` // "1"…"4", "unknown"
	EarlyV4   int            `json:"early_v4"`
	Errors    int            `json:"errors"`   // issues of severity error
	Warnings  int            `json:"warnings"` // issues of severity warning
	Notes     int            `json:"notes"`
	Failed    int            `json:"files_with_errors"` // files whose status is an error
	ElapsedMS int64          `json:"elapsed_ms"`
}

type item struct {
	file  ingest.File
	issue *ingest.PathIssue
}

type worker struct {
	rd *ingest.Reader
	ck *Checker
}

// Run discovers the files under opts.Roots and validates them in parallel.
// emit receives one FileResult per path in discovery order. Run returns the
// summary and the first error of emit, or ctx.Err(). Inputs are only read.
func Run(ctx context.Context, opts Options, emit func(FileResult) error) (Summary, error) {
	start := time.Now()
	sum := Summary{ByStatus: map[Status]int{}, ByVersion: map[string]int{}}
	workers := max(opts.Workers, 1)
	ws := make([]worker, workers)
	for i := range ws {
		ws[i] = worker{rd: &ingest.Reader{MaxDepth: 1}, ck: NewChecker()}
	}
	err := pipeline.Ordered(ctx, workers, workers*256,
		func(ctx context.Context, yield func(item) error) error {
			var yerr error
			// Every file passed on is read as discovery goes on.
			roots := make([]ingest.Root, len(opts.Roots))
			for i, r := range opts.Roots {
				r.ReadAsListed = true
				roots[i] = r
			}
			err := ingest.Discover(ctx, roots,
				func(f ingest.File) error { return yield(item{file: f}) },
				func(pi ingest.PathIssue) {
					if yerr == nil {
						yerr = yield(item{issue: &pi})
					}
				})
			if err != nil {
				return err
			}
			return yerr
		},
		func(ctx context.Context, w int, it item) (FileResult, error) {
			if it.issue != nil {
				st := StatusSkipped
				if it.issue.Issue.Severity == ingest.SeverityError {
					st = StatusUnreadable
				}
				fr := FileResult{File: ingest.File{Path: it.issue.Path, Source: it.issue.Source},
					Result: Result{Status: st, Issues: []ingest.Issue{it.issue.Issue}}}
				switch it.issue.Issue.Severity {
				case ingest.SeverityError:
					fr.Errors = 1
				case ingest.SeverityWarning:
					fr.Warnings = 1
				}
				return fr, nil
			}
			res, err := File(ctx, ws[w].rd, ws[w].ck, it.file.Path)
			if err != nil {
				return FileResult{}, err
			}
			if opts.Progress != nil {
				opts.Progress(it.file.Size)
			}
			return FileResult{File: it.file, Result: res}, nil
		},
		func(fr FileResult) error {
			sum.add(fr)
			return emit(fr)
		})
	sum.ElapsedMS = time.Since(start).Milliseconds()
	return sum, err
}

func (s *Summary) add(fr FileResult) {
	s.Files++
	if fr.Status != StatusSkipped {
		s.Bytes += fr.File.Size
	}
	s.ByStatus[fr.Status]++
	if fr.Status != StatusSkipped && fr.Status != StatusUnreadable && fr.Status != StatusEmpty {
		v := "unknown"
		if fr.FormatVersion > 0 {
			v = strconv.Itoa(fr.FormatVersion)
		}
		s.ByVersion[v]++
	}
	if fr.EarlyV4 {
		s.EarlyV4++
	}
	s.Errors += fr.Errors
	s.Warnings += fr.Warnings
	s.Notes += fr.Notes
	if fr.Status.IsError() && fr.Status != StatusSkipped {
		s.Failed++
	}
}

// Versions returns the keys of ByVersion in a stable order.
func (s *Summary) Versions() []string {
	var ks []string
	for k := range s.ByVersion {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
