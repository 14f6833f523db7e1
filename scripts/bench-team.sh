#!/bin/sh
# bench-team.sh BIN DIR MACHINES SIZE PARTITION [SESSIONS]: a team synth of
# MACHINES homes (SESSIONS files, default 50 a machine, SIZE of sessions
# before the synced copies; generated once into DIR/team), each exported
# into DIR/root-PARTITION, then report daily --from the root once cold (it
# builds the --from cache) and three times warm. Prints each step's time,
# CPU time and peak RSS (GNU time) and checks the report's totals against
# DIR/team/team.json.
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); dir=$2; machines=$3; size=$4; by=$5; sessions=${6:-$(($3 * 50))}
mkdir -p "$dir"; cd "$dir"
export XDG_CACHE_HOME="$PWD/cache"
t() { label=$1; shift; /usr/bin/time -f "$label %e s (cpu %U user %S sys) %M KB" "$@"; }
if [ ! -f team/team.json ]; then
	rm -rf team
	t "synth" "$bin" synth --out team --sessions "$sessions" --size "$size" --seed 1 --machines "$machines" --quiet
fi
root=root-$by
rm -rf "$root" "work-$by"
for m in team/machine-*; do
	n=$(basename "$m")
	# exit 1: the home holds damaged files (synth writes some on purpose)
	t "export $n" "$bin" export "$m" --parquet "$root" --partition-by "$by" --machine "$n" --work-dir "work-$by/$n" --quiet 2>&1 |
		grep -v 'not used\|damaged files' || true
done
echo "root: $(du -sh "$root" | cut -f1), $(find "$root/usage" -name '*.parquet' | wc -l) usage files"
rm -f cache/sessions-etl/from-*.duckdb
for i in cold warm warm warm; do
	t "report daily --from ($i)" "$bin" report daily --from "$root" --tz UTC --json 2>&1 >daily.json | grep -v 'not used\|damaged files' || true
done
python3 -c "
import json,sys
u=json.load(open('team/team.json'))['home']['usage']; d=json.load(open('daily.json'))['totals']
ok=(u['records'],u['input'])==(d['records'],d['inputTokens'])
print('totals', d['records'], 'records', d['inputTokens'], 'input:', 'equal the manifest' if ok else 'DIFFER from the manifest', (u['records'], u['input']))
sys.exit(0 if ok else 1)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
