package synth

import "math/bits"

// rng is a small deterministic generator (splitmix64). The package uses its
// own generator and integer-only distributions so that a seed gives the same
// bytes on every Go release and architecture (no floating point, whose fused
// operations may differ between platforms).
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

// mix64 is the splitmix64 finaliser, used to derive independent seeds.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n); 0 when n <= 0.
func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// int64n returns a value in [0, n); 0 when n <= 0.
func (r *rng) int64n(n int64) int64 {
	if n <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// between returns a value in [lo, hi] (inclusive).
func (r *rng) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.int64n(hi-lo+1)
}

// btw is between for ints.
func (r *rng) btw(lo, hi int) int { return int(r.between(int64(lo), int64(hi))) }

// pct returns true with probability p percent.
func (r *rng) pct(p int) bool { return r.intn(100) < p }

// permille returns true with probability p per thousand.
func (r *rng) permille(p int) bool { return r.intn(1000) < p }

// logUniform returns a heavy-tailed value in [lo, hi): the binary exponent is
// uniform, then the value is uniform within its octave.
func (r *rng) logUniform(lo, hi int64) int64 {
	if lo < 1 {
		lo = 1
	}
	if hi <= lo+1 {
		return lo
	}
	elo, ehi := bits.Len64(uint64(lo))-1, bits.Len64(uint64(hi-1))-1
	e := elo + r.intn(ehi-elo+1)
	base := int64(1) << e
	v := base + r.int64n(base)
	if v < lo {
		v = lo
	}
	if v >= hi {
		v = hi - 1
	}
	return v
}

// pick returns a random element of list.
func pick[T any](r *rng, list []T) T { return list[r.intn(len(list))] }

// weighted returns an index chosen with the given integer weights.
func (r *rng) weighted(w []int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	n := r.intn(total)
	for i, x := range w {
		if n < x {
			return i
		}
		n -= x
	}
	return len(w) - 1
}

// mulDiv returns a*b/c without intermediate overflow (a, b, c > 0; the
// result must fit in int64).
func mulDiv(a, b, c int64) int64 {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(q)
}

// lowbias32 is a bijective 32-bit mixer: distinct inputs give distinct
// outputs, which makes entry ids unique across a whole home.
func lowbias32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}
