package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestOrderedKeepsInputOrder(t *testing.T) {
	var got []int
	err := Ordered(context.Background(), 4, 8,
		func(ctx context.Context, yield func(int) error) error {
			for i := 0; i < 200; i++ {
				if err := yield(i); err != nil {
					return err
				}
			}
			return nil
		},
		func(ctx context.Context, w int, i int) (int, error) {
			if i%7 == 0 {
				time.Sleep(time.Millisecond) // finish out of order
			}
			return i * 2, nil
		},
		func(r int) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 200 {
		t.Fatalf("got %d results", len(got))
	}
	for i, r := range got {
		if r != 2*i {
			t.Fatalf("result %d = %d, want %d", i, r, 2*i)
		}
	}
}

func TestOrderedStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	err := Ordered(context.Background(), 2, 4,
		func(ctx context.Context, yield func(int) error) error {
			for i := 0; ; i++ {
				if err := yield(i); err != nil {
					return err
				}
			}
		},
		func(ctx context.Context, w int, i int) (int, error) {
			if i == 50 {
				return 0, boom
			}
			return i, nil
		},
		func(int) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}
