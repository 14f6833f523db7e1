package report

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// femto is an amount of US dollars in units of 1e-15 USD, as an unsigned
// 128-bit integer. Costs are summed in it so that every report over the
// same records gives the same total to the last digit, whatever the order
// and grouping of the sums. Costs are never negative (the export rejects
// negative recorded costs; prices are not negative).
type femto struct{ hi, lo uint64 }

const femtoScale = 1e15

func (a femto) add(b femto) femto {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	return femto{hi: a.hi + b.hi + carry, lo: lo}
}

// usd converts to dollars: the float64 nearest to the exact amount.
func (a femto) usd() float64 {
	var digits string
	if a.hi == 0 {
		digits = strconv.FormatUint(a.lo, 10)
	} else {
		i := new(big.Int).Lsh(new(big.Int).SetUint64(a.hi), 64)
		digits = i.Or(i, new(big.Int).SetUint64(a.lo)).String()
	}
	if len(digits) <= 15 {
		digits = strings.Repeat("0", 16-len(digits)) + digits
	}
	f, _ := strconv.ParseFloat(digits[:len(digits)-15]+"."+digits[len(digits)-15:], 64)
	return f
}

// femtoOf rounds a cost in dollars to femto-dollars; negative, NaN and
// infinite values are 0.
func femtoOf(usd float64) femto {
	if !(usd > 0) || math.IsInf(usd, 0) {
		return femto{}
	}
	if v := usd * femtoScale; v < 1<<63 {
		return femto{lo: uint64(math.Round(v))}
	}
	i, _ := new(big.Float).Mul(big.NewFloat(usd), big.NewFloat(femtoScale)).Int(nil)
	return femtoOfInt(i)
}

func femtoOfInt(i *big.Int) femto {
	lo := new(big.Int).And(i, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(i, 64).Uint64()
	return femto{hi: hi, lo: lo}
}

// parseFemto reads a DuckDB DECIMAL(38,15) rendered as text ("12.5",
// "0.000000000000001", "" for NULL).
func parseFemto(s string) (femto, error) {
	if s == "" {
		return femto{}, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 15 {
		return femto{}, fmt.Errorf("cost %q: more than 15 decimals", s)
	}
	frac += strings.Repeat("0", 15-len(frac))
	i, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok || i.Sign() < 0 || i.BitLen() > 128 {
		return femto{}, fmt.Errorf("cost %q: not a non-negative decimal", s)
	}
	return femtoOfInt(i), nil
}
