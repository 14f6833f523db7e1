package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessions-etl/sessions-etl/synth"
)

// BenchmarkImport imports a generated home of about 50 MB into a fresh
// store (b.N times), and then again into the full store.
func BenchmarkImport(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	m, err := synth.Generate(context.Background(), synth.Options{Out: home, Sessions: 200, Seed: 1, Size: 50 << 20})
	if err != nil {
		b.Fatal(err)
	}
	state := b.TempDir()
	opts := func(store string) Options {
		return Options{Sources: DefaultSources(home), Target: store, Workers: 2, RunsDir: filepath.Join(state, "runs"), StateDir: state}
	}
	store := filepath.Join(b.TempDir(), "store")
	noop := func(Result) error { return nil }
	b.Run("fresh", func(b *testing.B) {
		b.SetBytes(m.Bytes)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := os.RemoveAll(store); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if sum, err := Run(context.Background(), opts(store), noop); err != nil || sum.ByResult[ResultImported] == 0 {
				b.Fatalf("%v %+v", err, sum)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		b.SetBytes(m.Bytes)
		for i := 0; i < b.N; i++ {
			if sum, err := Run(context.Background(), opts(store), noop); err != nil || sum.ByResult[ResultAlreadyImported] == 0 {
				b.Fatalf("%v %+v", err, sum)
			}
		}
	})
}
