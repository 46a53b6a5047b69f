#!/usr/bin/env bash
# Times `id3-meter scan` against the ffmpeg CLI copying the same timed-ID3 stream out of the
# same files, in the same run, and prints the ratios. Corpus: the bundled sample repeated.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
CORPUS=bench-corpus
COPIES=${BENCH_COPIES:-130}   # x 0.77 MB of samples/ts/nielsen.ts
SEGMENTS=${BENCH_SEGMENTS:-200}

command -v /usr/bin/time >/dev/null || { apt-get install -y -q time >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; }; }

mkdir -p "$CORPUS/segments"
if [ ! -f "$CORPUS/big.ts" ] || [ "$(ls "$CORPUS/segments" | wc -l)" -ne "$SEGMENTS" ]; then
  rm -f "$CORPUS/big.ts" "$CORPUS"/segments/*
  for _ in $(seq "$COPIES"); do cat samples/ts/nielsen.ts; done > "$CORPUS/big.ts"
  for i in $(seq -w 1 "$SEGMENTS"); do cp samples/ts/nielsen.ts "$CORPUS/segments/seg$i.ts"; done
fi

# Prints "seconds peak_kib" for a command, its output discarded.
measure() {
  /usr/bin/time -f "%e %M" -o "$CORPUS/time.txt" "$@" >/dev/null 2>"$CORPUS/stderr.txt" || { cat "$CORPUS/stderr.txt"; exit 1; }
  cat "$CORPUS/time.txt"
}

ffmpeg_data() { ffmpeg -nostdin -loglevel error -i "$1" -map 0:d -c copy -f data -; }
ffmpeg_each() { for f in "$CORPUS"/segments/*.ts; do ffmpeg_data "$f"; done; }
export -f ffmpeg_data ffmpeg_each; export CORPUS

big_mb=$(( $(stat -c %s "$CORPUS/big.ts") / 1048576 ))
expected=$(( $(grep -c '"nielsen":true' samples/ts/nielsen.expected.jsonl) * COPIES ))

read -r meter_big meter_big_rss < <(measure "$METER" scan --format jsonl "$CORPUS/big.ts")
read -r ffmpeg_big ffmpeg_big_rss < <(measure bash -c 'ffmpeg_data "$CORPUS/big.ts"')
read -r meter_dir meter_dir_rss < <(measure "$METER" scan --format jsonl "$CORPUS/segments")
read -r ffmpeg_dir ffmpeg_dir_rss < <(measure bash -c ffmpeg_each)
found=$("$METER" scan --format jsonl "$CORPUS/big.ts" 2>/dev/null | grep -c '"type":"nielsen"')

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
echo "one TS file, ${big_mb} MB:     id3-meter ${meter_big}s (peak ${meter_big_rss} KiB)   ffmpeg ${ffmpeg_big}s (peak ${ffmpeg_big_rss} KiB)   ratio $(ratio "$meter_big" "$ffmpeg_big")"
echo "${SEGMENTS} segment files:       id3-meter ${meter_dir}s (peak ${meter_dir_rss} KiB)   ffmpeg per file ${ffmpeg_dir}s   ratio $(ratio "$meter_dir" "$ffmpeg_dir")"
echo "Nielsen tags in the big file: found ${found}, written ${expected}"
[ "$found" -eq "$expected" ] || { echo "tag count mismatch"; exit 1; }
