package export

import (
	"context"
	"strconv"
	"strings"
)

// maxRetryMemory caps the memory limit the retries of Run raise DuckDB's
// to: with the Go heap beside it, an export stays under about 500 MiB.
const maxRetryMemory = 384 << 20

// Run exports (see runOnce). A memory limit comes with a way to finish:
// when DuckDB runs out of memory under the limit (a step that cannot spill,
// such as a window over a usage-dense home's entries), the export runs
// again — incrementally: what was committed stays — with the limit
// doubled, up to 384 MB (or four doublings of a larger limit). The summary
// says how often (MemoryRetries) and with which limit it finished.
func runRetry(ctx context.Context, opts Options) (Summary, error) {
	limit := opts.MemoryLimit
	if limit == "" {
		limit = DefaultMemoryLimit
	}
	bytes, ok := parseBytes(limit)
	retries := 0
	for {
		opts.MemoryLimit = limit
		sum, err := runOnce(ctx, opts)
		sum.MemoryRetries = retries
		if err == nil || !ok || !outOfMemory(err) || ctx.Err() != nil || retries >= 4 || (bytes >= maxRetryMemory && retries > 0) {
			if err == nil && retries > 0 {
				sum.MemoryLimit = limit
			}
			return sum, err
		}
		retries++
		bytes *= 2
		if retries == 1 && bytes > maxRetryMemory && bytes/2 < maxRetryMemory {
			bytes = maxRetryMemory
		}
		limit = strconv.FormatInt(bytes>>10, 10) + "KB"
	}
}

// outOfMemory reports a DuckDB error of a limit too small for a step.
func outOfMemory(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Out of Memory") || strings.Contains(s, "could not allocate block") ||
		strings.Contains(s, "failed to pin block")
}

// parseBytes reads a DuckDB memory size ("96MB", "1GiB", "512KB").
func parseBytes(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') {
		i--
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s[:i]), 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	mult := map[string]float64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}
	m, ok := mult[strings.ToUpper(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, false
	}
	return int64(n * m), true
}
