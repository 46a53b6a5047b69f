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
