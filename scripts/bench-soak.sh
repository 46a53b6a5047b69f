#!/usr/bin/env bash
# Meters BENCH_SOAK_CHANNELS (default 300) of make bench-fleet's synthetic live channels with one
# `id3-meter serve` for BENCH_SOAK_MINUTES (default 75) and prints serve's private memory per
# channel each BENCH_SOAK_EVERY minutes (default 5), then what bench-fleet prints for the run.
# bench-fleet measures 80 s in; what a channel keeps over a window fills later: the QA checks'
# 15 minutes, the timeline's hour, the engine's last 4,096 tags (68 minutes at a tag a second).
# BENCH_SOAK_METER picks the binary (a build to compare); runs in their own folders can overlap.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=${BENCH_SOAK_METER:-.build/release/id3-meter}
GEN=.build/release/id3-sample-gen
n=${BENCH_SOAK_CHANNELS:-300}
minutes=${BENCH_SOAK_MINUTES:-75}
every=${BENCH_SOAK_EVERY:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/id3-meter-soak.XXXXXX")

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
field() { awk -v key="$2:" '$1 == key {print $2}' "/proc/$1/status"; }

"$GEN" serve-lineup --channels "$n" --config "$WORK/lineup.yaml" > "$WORK/generator.txt" &
generator=$!
trap 'kill $generator ${serve:-} 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$WORK/generator.txt" ] && break; sleep 0.1; done
"$METER" serve "$WORK/lineup.yaml" --listen 127.0.0.1:0 > "$WORK/records.jsonl" 2> "$WORK/serve.txt" &
serve=$!
start_serve=$(ticks "$serve"); start_gen=$(ticks "$generator"); start=$(date +%s.%N)
peak_rss=0; peak_anon=0
echo "$METER, $n channels, $minutes minutes ($WORK)"
for minute in $(seq "$minutes"); do
  sleep 60
  rss=$(field "$serve" VmRSS); anon=$(field "$serve" RssAnon)
  [ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
  [ "$anon" -gt "$peak_anon" ] && peak_anon=$anon
  if [ $((minute % every)) = 0 ] || [ "$minute" = 1 ]; then
    echo "  minute $minute: private $((anon / 1024)) MB = $((anon / n)) KB per channel"
  fi
done
stop_serve=$(ticks "$serve"); stop_gen=$(ticks "$generator"); stop=$(date +%s.%N)
threads=$(field "$serve" Threads); sockets=$(find "/proc/$serve/fd" -lname 'socket:*' 2>/dev/null | wc -l)
kill -TERM "$serve"; wait "$serve" || true
kill "$generator"; wait "$generator" 2>/dev/null || true
trap - EXIT
python3 scripts/fleet_check.py "$n" "$WORK/records.jsonl" "$start" "$stop" "$start_serve" "$stop_serve" "$start_gen" "$stop_gen" \
  "$(getconf CLK_TCK)" "$peak_rss" "$peak_anon" "$threads" "$sockets"
rm -rf "$WORK"
