package synth

import (
	"strconv"
	"time"
)

const hexDigits = "0123456789abcdef"

// appendStr appends s as a JSON string the way JavaScript's JSON.stringify
// writes it: quotes, backslashes and control characters escaped (\b \f \n
// \r \t, else \u00XX), everything else (including non-ASCII) verbatim.
func appendStr(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends the JSON-escaped content of s without quotes.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
		start = i + 1
	}
	return append(b, s[start:]...)
}

// key appends ,"k": (or "k": right after an opening brace).
func key(b []byte, k string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

func kvStr(b []byte, k, v string) []byte { return appendStr(key(b, k), v) }

func kvInt(b []byte, k string, v int64) []byte { return strconv.AppendInt(key(b, k), v, 10) }

func kvBool(b []byte, k string, v bool) []byte { return strconv.AppendBool(key(b, k), v) }

func kvNull(b []byte, k string) []byte { return append(key(b, k), "null"...) }

// kvRaw appends ,"k":<raw JSON>.
func kvRaw(b []byte, k string, raw []byte) []byte { return append(key(b, k), raw...) }

func kvISO(b []byte, k string, ms int64) []byte {
	b = append(key(b, k), '"')
	b = appendISO(b, ms)
	return append(b, '"')
}

// appendISO appends a Unix-millisecond instant as JavaScript's
// Date.toISOString does: 2025-06-01T10:00:00.000Z.
func appendISO(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = pad(b, y, 4)
	b = append(b, '-')
	b = pad(b, int(mo), 2)
	b = append(b, '-')
	b = pad(b, d, 2)
	b = append(b, 'T')
	b = pad(b, h, 2)
	b = append(b, ':')
	b = pad(b, mi, 2)
	b = append(b, ':')
	b = pad(b, s, 2)
	b = append(b, '.')
	b = pad(b, int(((ms%1000)+1000)%1000), 3)
	return append(b, 'Z')
}

func isoString(ms int64) string { return string(appendISO(nil, ms)) }

func pad(b []byte, v, width int) []byte {
	var tmp [8]byte
	i := len(tmp)
	for v > 0 || i == len(tmp) {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	for n := len(tmp) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, tmp[i:]...)
}

// appendMicros appends an amount of micro-dollars as a JavaScript number
// would print the dollar value: 0.0006, 1.5, 0.
func appendMicros(b []byte, m int64) []byte {
	if m < 0 {
		b = append(b, '-')
		m = -m
	}
	b = strconv.AppendInt(b, m/1e6, 10)
	frac := m % 1e6
	if frac == 0 {
		return b
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for n > 0 && digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// hex8 formats an entry id: 8 lowercase hex digits.
func hex8(x uint32) string {
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = hexDigits[x&15]
		x >>= 4
	}
	return string(b[:])
}

// newUUID returns a random (version 4) UUID drawn from r.
func newUUID(r *rng) string {
	var u [16]byte
	a, c := r.next(), r.next()
	for i := 0; i < 8; i++ {
		u[i] = byte(a >> (8 * i))
		u[8+i] = byte(c >> (8 * i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	j := 0
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j] = hexDigits[x>>4]
		b[j+1] = hexDigits[x&15]
		j += 2
	}
	return string(b[:])
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randToken returns prefix followed by n random alphanumeric characters.
func randToken(r *rng, prefix string, n int) string {
	b := make([]byte, 0, len(prefix)+n)
	b = append(b, prefix...)
	for i := 0; i < n; i++ {
		b = append(b, alnum[r.intn(len(alnum))])
	}
	return string(b)
}

func randHex(r *rng, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[r.intn(16)]
	}
	return string(b)
}
