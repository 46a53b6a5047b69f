#!/usr/bin/env bash
# Batch scan speed and memory (issue 15): three corpora, each against the floor (`cat` reading
# the same bytes from the page cache) and the ffmpeg CLI copying the same timed-ID3 stream out
# (`ffmpeg -i FILE -map 0:d -c copy -f data -`; one process per file for a folder), in the same run.
#   sparse: samples/ts/nielsen.ts repeated, 5 Mbit/s with a tag every few seconds, one 500 MB file
#           and a folder of 200 segment files;
#   dense:  64 kbit/s audio-only TS with a Nielsen tag every second (id3-sample-gen dense-corpus,
#           4,400 segments of 10 s, 44,000 tags, about 500 MB), one file and the same stream as 200
#           files of 22 segments.
# Wall times are medians of BENCH_RUNS (5) runs, the three tools run in turn round by round
# (scripts/measure_interleaved.py: the VM's speed drifts within minutes, and a ratio should
# not straddle a drift); CPU is user + system of the median run; peak RSS the largest of the runs. Per-tag CPU: (CPU on the dense file - CPU on its untagged twin) / tags, the
# scan run with --jobs 1 (all the work on one thread: the CPU of the record path, not of handing
# events between threads). Start-up: median of 20 runs.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
CORPUS=bench-corpus
COPIES=${BENCH_COPIES:-680}
SEGMENTS=${BENCH_SEGMENTS:-200}
PER_SEGMENT=${BENCH_PER_SEGMENT:-4}
RUNS=${BENCH_RUNS:-5}
DENSE_SEGMENTS=${BENCH_DENSE_SEGMENTS:-4400}

command -v /usr/bin/time >/dev/null || { apt-get install -y -q time >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; }; }
command -v ffmpeg >/dev/null || { echo "bench.sh: needs the ffmpeg CLI (make bench installs it)"; exit 1; }

mkdir -p "$CORPUS/segments"
stamp="continuous-$COPIES-$SEGMENTS-$PER_SEGMENT-$(stat -c %s samples/ts/nielsen.ts)"
if [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "building the sparse corpus in $CORPUS/"
  rm -f "$CORPUS/big.ts" "$CORPUS"/segments/*
  scripts/ts_concat.py "$CORPUS/big.ts" samples/ts/nielsen.ts "$COPIES"
  scripts/ts_concat.py "$CORPUS/segment.ts" samples/ts/nielsen.ts "$PER_SEGMENT"
  for i in $(seq -w 1 "$SEGMENTS"); do cp "$CORPUS/segment.ts" "$CORPUS/segments/seg$i.ts"; done
  echo "$stamp" > "$CORPUS/stamp"
fi
if [ "$(cat "$CORPUS/dense.stamp" 2>/dev/null)" != "dense-$DENSE_SEGMENTS-$SEGMENTS" ]; then
  echo "building the dense corpus in $CORPUS/"
  rm -rf "$CORPUS/dense-parts" "$CORPUS/dense-segments"
  .build/release/id3-sample-gen dense-corpus "$CORPUS/dense.ts" --segments "$DENSE_SEGMENTS" --folder "$CORPUS/dense-parts" > "$CORPUS/dense.tags"
  .build/release/id3-sample-gen dense-corpus "$CORPUS/dense-untagged.ts" --segments "$DENSE_SEGMENTS" --untagged > /dev/null
  head -c $((532 * 188)) "$CORPUS/dense.ts" > "$CORPUS/dense-100k.ts"
  # The same stream as SEGMENTS files: consecutive 10 s segments back to back (counters run on).
  mkdir -p "$CORPUS/dense-segments"
  per_file=$(( DENSE_SEGMENTS / SEGMENTS ))
  (cd "$CORPUS/dense-parts" && ls | sort | xargs -n "$per_file" | awk '{ printf "cat %s > ../dense-segments/part%03d.ts\n", $0, NR }' | sh)
  rm -rf "$CORPUS/dense-parts"
  echo "dense-$DENSE_SEGMENTS-$SEGMENTS" > "$CORPUS/dense.stamp"
fi
# Into the page cache, for every tool alike.
cat "$CORPUS/big.ts" "$CORPUS"/segments/*.ts "$CORPUS/dense.ts" "$CORPUS/dense-untagged.ts" "$CORPUS"/dense-segments/*.ts > /dev/null

ffmpeg_data() { ffmpeg -nostdin -loglevel fatal -i "$1" -map 0:d -c copy -f data -; }
ffmpeg_each() { for f in "$1"/*.ts; do ffmpeg_data "$f"; done; }
export -f ffmpeg_data ffmpeg_each
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
tags_found() { "$METER" scan --format jsonl "$@" 2>/dev/null | grep -c '"type":"nielsen"' || true; }

# One corpus: id3-meter, the ffmpeg CLI and cat on the same bytes, in the same run.
compare() {
  local name=$1 target=$2 expected=$3 cat_target=$2 ffmpeg_cmd=ffmpeg_data
  [ -d "$target" ] && { cat_target=$(ls "$target"/*.ts); ffmpeg_cmd=ffmpeg_each; }
  # shellcheck disable=SC2086
  { read -r wall cpu rss; read -r ffmpeg_wall _ _; read -r cat_wall _ _; } < <(scripts/measure_interleaved.py "$RUNS" \
    -- "$METER" scan --format jsonl "$target" -- bash -c "$ffmpeg_cmd \"\$0\"" "$target" -- cat $cat_target)
  local found; found=$(tags_found "$target")
  local mb=$(( $(du -sbL "$target" | cut -f1) / 1048576 ))
  printf "%-34s %5s MB  id3-meter %5s s (CPU %5s s, peak %6s KiB)  ffmpeg %6s s  cat %5s s  x ffmpeg %5s  x cat %5s  tags %s of %s\n" \
    "$name" "$mb" "$wall" "$cpu" "$rss" "$ffmpeg_wall" "$cat_wall" "$(ratio "$wall" "$ffmpeg_wall")" "$(ratio "$wall" "$cat_wall")" "$found" "$expected"
  [ "$found" -eq "$expected" ] || { echo "bench.sh: tag count mismatch on $name"; exit 1; }
}

per_copy=$(grep -c '"nielsen":true' samples/ts/nielsen.expected.jsonl)
dense_tags=$(cat "$CORPUS/dense.tags")
echo "targets: x ffmpeg <= 0.5 on every corpus; x cat <= 1.5 sparse, <= 3 dense"
compare "sparse 5 Mbit/s, one file" "$CORPUS/big.ts" $((per_copy * COPIES))
compare "sparse 5 Mbit/s, $SEGMENTS files" "$CORPUS/segments" $((per_copy * PER_SEGMENT * SEGMENTS))
compare "dense 64 kbit/s, one file" "$CORPUS/dense.ts" "$dense_tags"
compare "dense 64 kbit/s, $SEGMENTS files" "$CORPUS/dense-segments" "$dense_tags"

# Prints "median min" CPU seconds (user + system) over CPU_RUNS (9) runs of a command, its output discarded:
# CPU time on this virtual machine varies by a quarter from run to run, so both are given.
measure_cpu() {
  for _ in $(seq "${BENCH_CPU_RUNS:-9}"); do
    /usr/bin/time -f "%U %S" -o "$CORPUS/time.txt" "$@" >/dev/null 2>/dev/null || true
    awk '{ print $1 + $2 }' "$CORPUS/time.txt"
  done | sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)], t[1] }'
}
read -r cpu_dense cpu_dense_min < <(measure_cpu "$METER" scan --jobs 1 --format jsonl "$CORPUS/dense.ts")
read -r cpu_untagged cpu_untagged_min < <(measure_cpu "$METER" scan --jobs 1 --format jsonl "$CORPUS/dense-untagged.ts")
startup() {
  python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
runs = []
for _ in range(20):
    start = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs.append(time.perf_counter() - start)
print(f"{statistics.median(runs) * 1000:.1f}")
PY
}
start_scan=$(startup "$METER" scan "$CORPUS/dense-100k.ts")
start_version=$(startup "$METER" --version)
start_help=$(startup "$METER" --help)
start_usage=$(startup "$METER" scan --no-such-flag)

per_tag() { python3 -c "print(f'{($1 - $2) / $dense_tags * 1e6:.1f}')"; }
echo "per-tag CPU (--jobs 1, ${BENCH_CPU_RUNS:-9} runs): median (${cpu_dense} s - ${cpu_untagged} s untagged) / ${dense_tags} = $(per_tag "$cpu_dense" "$cpu_untagged") us; fastest runs $(per_tag "$cpu_dense_min" "$cpu_untagged_min") us (target <= 5)"
echo "start-up (median of 20): scan of a 100 KB file ${start_scan} ms, --version ${start_version} ms, --help ${start_help} ms, a usage error ${start_usage} ms (target <= 20)"
