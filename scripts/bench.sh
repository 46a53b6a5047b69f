#!/usr/bin/env bash
# Batch scan speed and memory against the ffmpeg CLI copying the same timed-ID3 stream out of
# the same files (`ffmpeg -i FILE -map 0:d -c copy -f data -`), timed in the same run. Each
# timing is the median of three runs. Corpus: samples/ts/nielsen.ts repeated, as one big file
# (680 copies, 500 MB) and as a folder of 200 segment files (4 copies each, 617 MB).
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
CORPUS=bench-corpus
COPIES=${BENCH_COPIES:-680}
SEGMENTS=${BENCH_SEGMENTS:-200}
PER_SEGMENT=${BENCH_PER_SEGMENT:-4}
RUNS=${BENCH_RUNS:-3}

command -v /usr/bin/time >/dev/null || { apt-get install -y -q time >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; }; }

mkdir -p "$CORPUS/segments"
stamp="continuous-$COPIES-$SEGMENTS-$PER_SEGMENT-$(stat -c %s samples/ts/nielsen.ts)"
if [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "building the corpus in $CORPUS/"
  rm -f "$CORPUS/big.ts" "$CORPUS"/segments/*
  scripts/ts_concat.py "$CORPUS/big.ts" samples/ts/nielsen.ts "$COPIES"
  scripts/ts_concat.py "$CORPUS/segment.ts" samples/ts/nielsen.ts "$PER_SEGMENT"
  for i in $(seq -w 1 "$SEGMENTS"); do cp "$CORPUS/segment.ts" "$CORPUS/segments/seg$i.ts"; done
  echo "$stamp" > "$CORPUS/stamp"
fi
cat "$CORPUS/big.ts" "$CORPUS"/segments/*.ts > /dev/null  # into the page cache, for both tools alike

# Prints "median_seconds max_peak_kib" over RUNS runs of a command, its output discarded.
measure() {
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$CORPUS/time.txt" "$@" >/dev/null 2>"$CORPUS/stderr.txt" || { cat "$CORPUS/stderr.txt"; exit 1; }
    cat "$CORPUS/time.txt"
  done | sort -n | awk '{ t[NR] = $1; if ($2 > m) m = $2 } END { print t[int((NR + 1) / 2)], m }'
}

ffmpeg_data() { ffmpeg -nostdin -loglevel fatal -i "$1" -map 0:d -c copy -f data -; }
ffmpeg_each() { for f in "$CORPUS"/segments/*.ts; do ffmpeg_data "$f"; done; }
export -f ffmpeg_data ffmpeg_each; export CORPUS

per_copy=$(grep -c '"nielsen":true' samples/ts/nielsen.expected.jsonl)
big_mb=$(( $(stat -c %s "$CORPUS/big.ts") / 1048576 ))
dir_mb=$(( $(du -sm "$CORPUS/segments" | cut -f1) ))

read -r meter_big meter_big_rss < <(measure "$METER" scan --format jsonl "$CORPUS/big.ts")
read -r ffmpeg_big ffmpeg_big_rss < <(measure bash -c 'ffmpeg_data "$CORPUS/big.ts"')
read -r meter_dir meter_dir_rss < <(measure "$METER" scan --format jsonl "$CORPUS/segments")
read -r ffmpeg_dir _ < <(measure bash -c ffmpeg_each)
found_big=$("$METER" scan --format jsonl "$CORPUS/big.ts" 2>/dev/null | grep -c '"type":"nielsen"')
found_dir=$("$METER" scan --format jsonl "$CORPUS/segments" 2>/dev/null | grep -c '"type":"nielsen"')

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
echo "one TS file, ${big_mb} MB: id3-meter ${meter_big} s (peak ${meter_big_rss} KiB), ffmpeg ${ffmpeg_big} s (peak ${ffmpeg_big_rss} KiB): ratio $(ratio "$meter_big" "$ffmpeg_big") (target <= 1.0)"
echo "${SEGMENTS} segment files, ${dir_mb} MB: id3-meter ${meter_dir} s (peak ${meter_dir_rss} KiB), ffmpeg file by file ${ffmpeg_dir} s: ratio $(ratio "$meter_dir" "$ffmpeg_dir") (target <= 0.6)"
echo "Nielsen tags: big file ${found_big} of $((per_copy * COPIES)), folder ${found_dir} of $((per_copy * PER_SEGMENT * SEGMENTS))"
[ "$found_big" -eq $((per_copy * COPIES)) ] && [ "$found_dir" -eq $((per_copy * PER_SEGMENT * SEGMENTS)) ] || { echo "tag count mismatch"; exit 1; }

# Dense input (issue 15): a 64 kbit/s TS with a Nielsen tag every second, as an audio rendition
# carrying the tags looks, and the same stream without tags. Per-tag CPU is what the tags add:
# (CPU on the dense file - CPU on the untagged one) / tags. The floor is `cat` reading the same
# bytes from the page cache. Start-up: the median of 20 scans of a 100 KB file, and of --version,
# --help and a usage error.
DENSE_SEGMENTS=${BENCH_DENSE_SEGMENTS:-4400}
if [ "$(cat "$CORPUS/dense.stamp" 2>/dev/null)" != "dense-$DENSE_SEGMENTS" ]; then
  echo "building the dense corpus in $CORPUS/"
  .build/release/id3-sample-gen dense-corpus "$CORPUS/dense.ts" --segments "$DENSE_SEGMENTS" > "$CORPUS/dense.tags"
  .build/release/id3-sample-gen dense-corpus "$CORPUS/dense-untagged.ts" --segments "$DENSE_SEGMENTS" --untagged > /dev/null
  head -c $((532 * 188)) "$CORPUS/dense.ts" > "$CORPUS/dense-100k.ts"
  echo "dense-$DENSE_SEGMENTS" > "$CORPUS/dense.stamp"
fi
cat "$CORPUS/dense.ts" "$CORPUS/dense-untagged.ts" > /dev/null

# Prints the median CPU seconds (user + system) over RUNS runs of a command, its output discarded.
measure_cpu() {
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%U %S" -o "$CORPUS/time.txt" "$@" >/dev/null 2>/dev/null || true
    awk '{ print $1 + $2 }' "$CORPUS/time.txt"
  done | sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'
}

dense_tags=$(cat "$CORPUS/dense.tags")
dense_mb=$(( $(stat -c %s "$CORPUS/dense.ts") / 1048576 ))
read -r meter_dense meter_dense_rss < <(measure "$METER" scan --format jsonl "$CORPUS/dense.ts")
read -r ffmpeg_dense _ < <(measure bash -c 'ffmpeg_data "$CORPUS/dense.ts"')
read -r cat_dense _ < <(measure cat "$CORPUS/dense.ts")
cpu_dense=$(measure_cpu "$METER" scan --format jsonl "$CORPUS/dense.ts")
cpu_untagged=$(measure_cpu "$METER" scan --format jsonl "$CORPUS/dense-untagged.ts")
found_dense=$("$METER" scan --format jsonl "$CORPUS/dense.ts" 2>/dev/null | grep -c '"type":"nielsen"')
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

echo "dense TS, ${dense_mb} MB, ${dense_tags} tags: id3-meter ${meter_dense} s (peak ${meter_dense_rss} KiB), ffmpeg ${ffmpeg_dense} s, cat ${cat_dense} s: ratio to ffmpeg $(ratio "$meter_dense" "$ffmpeg_dense") (target <= 0.5), to cat $(ratio "$meter_dense" "$cat_dense") (target <= 3)"
echo "per-tag CPU: (${cpu_dense} s - ${cpu_untagged} s untagged) / ${dense_tags} = $(python3 -c "print(f'{($cpu_dense - $cpu_untagged) / $dense_tags * 1e6:.1f}')") us (target <= 5)"
echo "start-up (median of 20): scan of a 100 KB file ${start_scan} ms, --version ${start_version} ms, --help ${start_help} ms, a usage error ${start_usage} ms (target <= 20)"
[ "$found_dense" -eq "$dense_tags" ] || { echo "dense tag count mismatch: $found_dense of $dense_tags"; exit 1; }
