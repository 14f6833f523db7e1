package pipeline

import (
	"context"
	"sync"

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
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for {
				var j job
				select {
				case <-ctx.Done():
					return ctx.Err()
				case jj, ok := <-jobs:
					if !ok {
						return nil
					}
					j = jj
				}
				r, err := work(ctx, w, j.item)
				if err != nil {
					return err
				}
				select {
				case results <- result{j.seq, r}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	g.Go(func() error {
		pending := map[int]R{}
		next := 0
		for {
			var res result
			select {
			case <-ctx.Done():
				return ctx.Err()
			case rr, ok := <-results:
				if !ok {
					return nil
				}
				res = rr
			}
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
	})
	return g.Wait()
}
