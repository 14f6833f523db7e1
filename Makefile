# sessions-etl — build, test, fuzz, benchmark.
GO        ?= go
FUZZTIME  ?= 20s
BENCH_HOME ?= .bench/home
BENCH_SIZE ?= 1073741824
TEAM_DIR ?= .bench/team
TEAM_MACHINES ?= 20
TEAM_SIZE ?= 4300MB
TEAM_SESSIONS ?= 8600
TEAM_PARTITION ?= month

.PHONY: build test test-short race fuzz lint bench bench-team bench-load ci clean portable cross cross-linux cross-windows cross-windows-check cross-windows-test cross-test snapshot

# Version, commit and date stamped into the binary (sessions-etl --version;
# GoReleaser sets the same variables from the tag in .goreleaser.yaml).
BUILDINFO := github.com/sessions-etl/sessions-etl/internal/buildinfo
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE      ?= $(shell git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS   := -X $(BUILDINFO).Version=$(VERSION) -X $(BUILDINFO).Commit=$(COMMIT) -X $(BUILDINFO).Date=$(DATE)


build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/sessions-etl ./cmd/sessions-etl

# Every package that does not link DuckDB, and its tests (go test -c), for
# macOS (amd64, arm64) and Windows (amd64) without cgo.
portable:
	GO=$(GO) .ci/portable.sh

# The full binary (cgo, DuckDB) for Linux amd64 and arm64 in dist/; arm64
# needs Debian's gcc-aarch64-linux-gnu and g++-aarch64-linux-gnu.
CROSS_CC_linux_amd64  ?= gcc
CROSS_CXX_linux_amd64 ?= g++
CROSS_CC_linux_arm64  ?= aarch64-linux-gnu-gcc
CROSS_CXX_linux_arm64 ?= aarch64-linux-gnu-g++
cross: cross-linux
cross-linux: dist/linux_amd64/sessions-etl dist/linux_arm64/sessions-etl
dist/linux_%/sessions-etl: FORCE
	CGO_ENABLED=1 GOOS=linux GOARCH=$* CC="$(CROSS_CC_linux_$*)" CXX="$(CROSS_CXX_linux_$*)" \
		$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/sessions-etl

# windows/amd64 with Debian's MinGW-w64 linked against the UCRT runtime the
# DuckDB library was built for (.ci/mingw-ucrt.sh writes the specs file).
cross-windows: dist/windows_amd64/sessions-etl.exe
dist/windows_amd64/sessions-etl.exe: FORCE
	.ci/mingw-ucrt.sh $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $@ ./cmd/sessions-etl

# The smallest program linking DuckDB for windows/amd64 the same way, run
# under Wine (Debian 12's wine64 8.0: it needs a bcryptprimitives.dll for Go,
# and _setjmp from msvcrt.dll, which its ucrtbase.dll lacks on x64). The
# command itself builds for Windows once migrate's file code does.
WINE ?= /usr/lib/wine/wine64
cross-windows-check:
	SETJMP_DLL=msvcrt.dll .ci/mingw-ucrt.sh $(GO) build -o dist/windows_amd64/duckdbcheck.exe ./internal/ucrtshim/duckdbcheck
	mkdir -p dist/wine && WINEPREFIX=$(abspath dist/wine) WINEDEBUG=-all $(WINE) wineboot -i >/dev/null 2>&1 || true
	x86_64-w64-mingw32-gcc-posix -shared -O2 -o dist/wine/drive_c/windows/system32/bcryptprimitives.dll .ci/wine-bcryptprimitives.c -ladvapi32
	out=$$(WINEPREFIX=$(abspath dist/wine) WINEDEBUG=-all $(WINE) dist/windows_amd64/duckdbcheck.exe) && echo "$$out" && \
		echo "$$out" | grep -q 'sum=45 3.14'

# The full windows/amd64 binary under Wine against the linux/amd64 one on a
# generated home, as cross-test does for arm64 (.ci/cross-compare.sh with
# WINDOWS=1: paths are compared with / for \). Built as cross-windows is,
# but with _setjmp taken from msvcrt.dll, which Wine 8's ucrtbase.dll lacks.
cross-windows-test: build
	SETJMP_DLL=msvcrt.dll .ci/mingw-ucrt.sh $(GO) build -trimpath -o dist/windows_amd64_wine/sessions-etl.exe ./cmd/sessions-etl
	mkdir -p dist/wine && WINEPREFIX=$(abspath dist/wine) WINEDEBUG=-all $(WINE) wineboot -i >/dev/null 2>&1 || true
	x86_64-w64-mingw32-gcc-posix -shared -O2 -o dist/wine/drive_c/windows/system32/bcryptprimitives.dll .ci/wine-bcryptprimitives.c -ladvapi32
	WINDOWS=1 .ci/cross-compare.sh bin/sessions-etl dist/windows_amd64_wine/sessions-etl.exe \
		"env WINEPREFIX=$(abspath dist/wine) WINEDEBUG=-all $(WINE)"

# The linux/arm64 binary under qemu-aarch64 against the amd64 one on a
# generated home: verdicts, report totals, migrated bytes (.ci/cross-compare.sh).
# (The reference is the host's build, bin/sessions-etl, on a linux/amd64 host.)
cross-test: build dist/linux_arm64/sessions-etl
	.ci/cross-compare.sh bin/sessions-etl dist/linux_arm64/sessions-etl qemu-aarch64

# GoReleaser's build of the Linux targets, without publishing (the release
# of all five targets runs on native runners: .github/workflows/release.yml).
GORELEASER ?= goreleaser
snapshot:
	RELEASE_OS=linux $(GORELEASER) build --snapshot --clean

FORCE:

# The README's test command: every test, with the race detector.
test:
	$(GO) test -race -count=1 -timeout 30m ./...

# The inner loop: every test, with smaller inputs under testing.Short()
# (fewer kills in the crash storms, smaller generated homes, fewer seeds,
# one export or report batch where the full run makes several); no race
# detector.
test-short:
	$(GO) test -short -count=1 -timeout 20m ./...

# Short fuzz runs of the reader, the JSON scanner, the archive and
# decompression readers, omp's title slot, the validator and the migrator (CI).
fuzz:
	GO=$(GO) .ci/fuzz-one ./ingest FuzzTape $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./ingest FuzzReader $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./ingest FuzzArchive $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./session FuzzParseTitleSlot $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./validate FuzzChecker $(FUZZTIME)
	GO=$(GO) .ci/fuzz-one ./upgrade FuzzPlan $(FUZZTIME)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags faultseam ./internal/fstx

# Throughput and peak RSS on a ~1 GB generated home, side by side with DuckDB.
bench: build
	$(GO) run ./internal/benchrun -bin bin/sessions-etl -home $(BENCH_HOME) -size $(BENCH_SIZE)

# A team synth (TEAM_MACHINES homes, generated once into TEAM_DIR; by
# default the issue's 5 GB team: a 4.3 GB home, 5.4 GB with the synced
# copies) exported machine by machine into one root (--partition-by
# TEAM_PARTITION), then report daily --from it, cold and warm: time, CPU
# and peak RSS of each step (GNU time).
bench-team: build
	sh scripts/bench-team.sh bin/sessions-etl $(TEAM_DIR) $(TEAM_MACHINES) $(TEAM_SIZE) $(TEAM_PARTITION) $(TEAM_SESSIONS)

# The DuckDB sink's loading path: the Appender against Arrow (INSERT from a
# registered Arrow view; duckdb-go needs the duckdb_arrow tag for it), over
# the rows of an export of the bench home (run make bench first to make it).
bench-load:
	SESSIONS_ETL_BENCH_HOME=$(abspath $(BENCH_HOME)) $(GO) test -tags duckdb_arrow -run '^$$' -bench '^BenchmarkLoad' -benchtime 5x -count 2 ./export

ci: lint test fuzz

clean:
	rm -rf bin dist .bench
