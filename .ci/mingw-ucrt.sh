#!/usr/bin/env bash
# Runs a command (a go build) with cgo cross-compiling for windows/amd64
# through Debian's MinGW-w64 GCC, linked against the Universal C Runtime
# (UCRT) instead of msvcrt.dll: DuckDB's Windows library in duckdb-go's
# bindings is built against UCRT (it calls __stdio_common_vsprintf and the
# other __stdio_common_* functions, which only ucrtbase.dll exports), and
# Debian's GCC links msvcrt by default. Debian's mingw-w64-x86-64-dev ships
# libucrt.a; a specs file puts it in msvcrt's place (GCC 13 has -mcrtdll=ucrt
# for this; Debian 12 has GCC 12).
#
#   .ci/mingw-ucrt.sh go build -o sessions-etl.exe ./cmd/sessions-etl
set -euo pipefail
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc-posix}
cxx=${MINGW_CXX:-x86_64-w64-mingw32-g++-posix}
dir="${TMPDIR:-/tmp}/sessions-etl-mingw-ucrt"
mkdir -p "$dir"
# libwinpthread (built for msvcrt) calls _setjmp, which ucrtbase.dll
# exports but Debian's libucrt.a does not import: an import library for it.
# SETJMP_DLL=msvcrt.dll for Wine 8, whose ucrtbase.dll lacks _setjmp on x64.
printf 'LIBRARY %s\nEXPORTS\n_setjmp\n' "${SETJMP_DLL:-ucrtbase.dll}" >"$dir/ucrtextra.def"
x86_64-w64-mingw32-dlltool -d "$dir/ucrtextra.def" -l "$dir/libucrtextra.a"
specs="$dir/ucrt.specs"
"$cc" -dumpspecs | sed -e "s#-lmsvcrt\b#-lucrt -L$dir -lucrtextra#g" >"$specs"
export CGO_ENABLED=1 GOOS=windows GOARCH=amd64
# internal/ucrtshim: _snprintf and the UCRT streampos members of libstdc++.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=mingw_ucrt_shim"
export CC="$cc -specs=$specs -D_UCRT -D__MSVCRT_VERSION__=0xE00" CXX="$cxx -specs=$specs -D_UCRT -D__MSVCRT_VERSION__=0xE00"
exec "$@"
