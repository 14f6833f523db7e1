# sessions-etl — build, test, fuzz, benchmark.
GO        ?= go
FUZZTIME  ?= 20s
BENCH_HOME ?= .bench/home
BENCH_SIZE ?= 1073741824

.PHONY: build test race fuzz lint bench bench-load ci clean

# Build information (internal/buildinfo): the git commit and the build time;
# the version only on a tagged commit (else the toolchain's "(devel)").
PKG_BUILDINFO := github.com/sessions-etl/sessions-etl/internal/buildinfo
VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS ?= -X $(PKG_BUILDINFO).Version=$(VERSION) -X $(PKG_BUILDINFO).Commit=$(COMMIT) -X $(PKG_BUILDINFO).Date=$(DATE)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/sessions-etl ./cmd/sessions-etl

# The README's test command: every test, with the race detector.
test:
	$(GO) test -race -count=1 ./...

# Short fuzz runs of the reader, the JSON scanner and the validator (CI).
fuzz:
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzTape$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0
	$(GO) test ./validate -run '^$$' -fuzz '^FuzzChecker$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0
	$(GO) test ./migrate -run '^$$' -fuzz '^FuzzPlan$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Throughput and peak RSS on a ~1 GB generated home, side by side with DuckDB.
bench: build
	$(GO) run ./internal/benchrun -bin bin/sessions-etl -home $(BENCH_HOME) -size $(BENCH_SIZE)

# The DuckDB sink's loading path: the Appender against Arrow (INSERT from a
# registered Arrow view; duckdb-go needs the duckdb_arrow tag for it), over
# the rows of an export of the bench home (run make bench first to make it).
bench-load:
	SESSIONS_ETL_BENCH_HOME=$(abspath $(BENCH_HOME)) $(GO) test -tags duckdb_arrow -run '^$$' -bench '^BenchmarkLoad' -benchtime 5x -count 2 ./export

ci: lint test fuzz

clean:
	rm -rf bin .bench
