#!/usr/bin/env bash
# Compiles every package that does not link DuckDB, and its tests
# (go test -c), for macOS (amd64, arm64) and Windows (amd64) with
# CGO_ENABLED=0, and vets them there. Packages that link DuckDB (cgo) are
# built by `make cross` (Linux) and on native runners (macOS, Windows).
#
# PENDING lists packages known not to build yet for those systems, each with
# the reason; they are reported but do not fail the run. An empty list is
# the goal; a pending package that builds everywhere is reported so that it
# is taken off the list.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TARGETS=${TARGETS:-"darwin/amd64 darwin/arm64 windows/amd64"}
# (empty: every package without DuckDB builds for every target)
PENDING=${PENDING-""}
mod=$($GO list -m)
pkgs=()
while read -r p deps; do
	case " $deps " in *" github.com/duckdb/duckdb-go/v2 "*) continue ;; esac
	pkgs+=("${p#"$mod"/}")
done < <($GO list -f '{{.ImportPath}} {{join .Deps " "}}' ./...)
echo "packages without DuckDB: ${pkgs[*]}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
ready=() pending=()
for p in "${pkgs[@]}"; do
	case " $PENDING " in *" $p "*) pending+=("./$p") ;; *) ready+=("./$p") ;; esac
done
for t in $TARGETS; do
	export GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0
	# One vet (it type-checks the tests too) and one test link for all.
	if $GO vet "${ready[@]}" && $GO test -c -o "$out/" "${ready[@]}" >/dev/null; then
		echo "ok      $t: ${ready[*]}"
	else
		echo "FAIL    $t"
		fail=1
	fi
	for p in "${pending[@]}"; do
		if $GO vet "$p" >"$out/log" 2>&1 && $GO test -c -o "$out/" "$p" >>"$out/log" 2>&1; then
			echo "ok      $t $p (pending: take it off PENDING)"
		else
			echo "pending $t $p: $(grep -m1 -E '\.go:[0-9]+' "$out/log" || head -1 "$out/log")"
		fi
	done
done
exit $fail
