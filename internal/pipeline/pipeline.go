// Package pipeline runs per-file work in parallel and hands the results back
// in input order, so output never depends on scheduling.
package pipeline

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Ordered calls produce, which yields items; work runs on each item in one
// of workers goroutines (worker is 0…workers-1, for per-worker state); emit
// receives the results in the order the items were yielded. At most
// window items are in flight, bounding memory when one item is slow.
// The first error from produce, work or emit cancels the rest and is
// returned; so is ctx.Err() when ctx is cancelled.
func Ordered[T, R any](ctx context.Context, workers, window int,
	produce func(ctx context.Context, yield func(T) error) error,
	work func(ctx context.Context, worker int, item T) (R, error),
	emit func(R) error) error {
	if workers < 1 {
		workers = 1
	}
	if window < workers {
		window = workers * 4
	}
	type job struct {
		seq  int
		item T
	}
	type result struct {
		seq int
		r   R
	}
	g, ctx := errgroup.WithContext(ctx)
	jobs := make(chan job)
	results := make(chan result, window)
	tokens := make(chan struct{}, window)

	g.Go(func() error {
		defer close(jobs)
		seq := 0
		return produce(ctx, func(it T) error {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- job{seq, it}:
				seq++
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	wg, wctx := errgroup.WithContext(ctx)
	for w := 0; w < workers; w++ {
		wg.Go(func() error {
			for j := range jobs {
				r, err := work(wctx, w, j.item)
				if err != nil {
					return err
				}
				select {
				case results <- result{j.seq, r}:
				case <-wctx.Done():
					return wctx.Err()
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		err := wg.Wait()
		close(results)
		return err
	})
	g.Go(func() error {
		pending := map[int]R{}
		next := 0
		for res := range results {
			pending[res.seq] = res.r
			for {
				r, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				<-tokens
				if err := emit(r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return g.Wait()
}
