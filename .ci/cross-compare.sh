#!/usr/bin/env bash
# Runs two builds of sessions-etl on the same generated home and fails on
# any difference: the home synth writes (bytes of every file), validate's
# verdicts, report's totals (daily and by model), migrate's results and the
# bytes of the migrated home, and report's totals after the migration.
#
#   .ci/cross-compare.sh REF_BINARY OTHER_BINARY [RUNNER_FOR_OTHER]
#
# e.g. the linux/amd64 binary against the linux/arm64 one under
# qemu-aarch64. Both runs use the same absolute paths (the home is
# recreated for each), so outputs are compared as they are, after taking
# out what differs by design between two runs: elapsed times and run ids.
#
# WINDOWS=1: the other binary is a Windows build run under Wine, which maps
# drive Z: to /. It is given the same paths; it prints them the Windows way
# (Z:\tmp\…), so both runs' paths are written with / before comparing.
set -euo pipefail
ref=$1 other=$2 runner=${3:-}
SESSIONS=${SESSIONS:-60} SEED=${SEED:-7} SIZE=${SIZE:-16MB}
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu} # the arm64 C library for qemu-aarch64
work=$(mktemp -d "${TMPDIR:-/tmp}/sessions-etl-cross.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT # KEEP=1 keeps both runs' outputs

# normalise drops the fields that differ between any two runs.
normalise() {
	if [ "${WINDOWS:-}" = 1 ]; then
		sed -E -e 's#\\+#/#g' -e 's#Z:/#/#g'
	else
		cat
	fi | sed -E -e 's/"elapsed_ms":[0-9]+/"elapsed_ms":0/g' \
		-e 's/"run_id":"[^"]*"/"run_id":"RUN"/g' -e 's#"run_dir":"[^"]*"#"run_dir":"RUN"#g' \
		-e 's#/runs/[0-9TZ]+-[0-9a-f]+#/runs/RUN#g'
}

run() { # run NAME BINARY [RUNNER]
	local name=$1 bin=$2 r=${3:-} out="$work/$1" h="$work/home"
	mkdir -p "$out"
	rm -rf "$h" "$work/cache" "$work/state"
	local plain=(env XDG_CACHE_HOME="$work/cache" XDG_STATE_HOME="$work/state" HOME="$work/nohome")
	local se=("${plain[@]}")
	[ -n "$r" ] && se+=($r) # word-split: a runner may be "env VAR=… wine64"

	se+=("$bin")
	local t0=$SECONDS
	if [ "${WINDOWS:-}" = 1 ]; then
		# synth writes the paths of parent sessions into headers the way
		# its system spells paths: both runs read the reference's home.
		"${plain[@]}" "$ref" synth --out "$h" --sessions "$SESSIONS" --seed "$SEED" --size "$SIZE" >/dev/null
	else
		"${se[@]}" synth --out "$h" --sessions "$SESSIONS" --seed "$SEED" --size "$SIZE" >/dev/null
	fi
	(cd "$h" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$out/synth.sha256"
	# Exit 1 is expected: the generated home holds damaged files on purpose.
	"${se[@]}" validate --json --workers 2 "$h" | normalise | sort >"$out/validate.jsonl" || [ $? -eq 1 ]
	"${se[@]}" report daily --json --tz UTC "$h" 2>"$out/report.err" | normalise >"$out/report-daily.json" || [ $? -eq 1 ]
	"${se[@]}" report model --json --tz UTC "$h" 2>>"$out/report.err" | normalise >"$out/report-model.json" || [ $? -eq 1 ]
	"${se[@]}" migrate --json --workers 2 "$h" | normalise | sort >"$out/migrate.jsonl" || [ $? -eq 1 ]
	(cd "$h" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$out/migrated.sha256"
	"${se[@]}" report daily --json --tz UTC "$h" 2>>"$out/report.err" | normalise >"$out/report-after.json" || [ $? -eq 1 ]
	# Hints name the binary as it was run ("see: dist/linux_arm64/sessions-etl
	# validate"): the same for both once the path is dropped.
	sed -e "s#$bin #sessions-etl #g" <"$out/report.err" | normalise >"$out/report.err.n" && mv "$out/report.err.n" "$out/report.err"
	echo "$name: $(grep -c '"path"' "$out/validate.jsonl") files validated, $(grep -c '"result":"upgraded"' "$out/migrate.jsonl") upgraded, $((SECONDS - t0))s"
}

run ref "$ref"
run other "$other" "$runner"
if ! diff -r "$work/ref" "$work/other" >"$work/diff"; then
	head -c 20000 "$work/diff"
	echo "FAIL: $other${runner:+ (under $runner)} differs from $ref"
	exit 1
fi
for f in validate.jsonl report-daily.json migrate.jsonl; do
	[ -s "$work/ref/$f" ] || { echo "FAIL: $f is empty: nothing was compared"; exit 1; }
done
grep -o '"by_status":{[^}]*}' "$work/ref/validate.jsonl" | head -1
grep -A1 '"totals"' "$work/ref/report-daily.json" | head -3 || true
echo "same: synth home ($(wc -l <"$work/ref/synth.sha256") files), validate verdicts, report daily/model totals, migrate results and migrated bytes"
