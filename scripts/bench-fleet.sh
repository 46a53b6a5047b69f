#!/usr/bin/env bash
# Meters N distinct synthetic live channels (128 kbit/s, 2 s segments, a Nielsen tag a second,
# a six-segment window) with one `id3-meter serve` for BENCH_FLEET_SECONDS (default 120) after
# the line-up has joined, for each N of BENCH_FLEET_SIZES (default 100 500 1000). Reports the
# serve process's CPU (% of one core), the load generator's and their ratio, peak RSS and private memory
# per channel, threads and TCP connections, pacing error p50/p99 over every delivery, and
# whether each channel got every tag of the segments it played exactly once. Then the API: /healthz
# under a flood of connections (scripts/api_flood.py), memory after channels churn (scripts/api_churn.py).
set -euo pipefail
cd "$(dirname "$0")/.."

METER=${BENCH_FLEET_METER:-.build/release/id3-meter}
GEN=.build/release/id3-sample-gen
SECONDS_MEASURED=${BENCH_FLEET_SECONDS:-120}
WORK=bench-corpus/fleet
mkdir -p "$WORK"

# utime + stime of a process, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
field() { awk -v key="$2:" '$1 == key {print $2}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)

for n in ${BENCH_FLEET_SIZES:-100 500 1000}; do
  # A run before left these: the wait below must see this generator's, not the last one's.
  rm -f "$WORK/generator-$n.txt" "$WORK/lineup-$n.yaml"
  "$GEN" serve-lineup --channels "$n" --config "$WORK/lineup-$n.yaml" > "$WORK/generator-$n.txt" &
  generator=$!
  for _ in $(seq 100); do [ -s "$WORK/generator-$n.txt" ] && break; sleep 0.1; done
  "$METER" serve "$WORK/lineup-$n.yaml" --listen 127.0.0.1:0 > "$WORK/records-$n.jsonl" 2> "$WORK/serve-$n.txt" &
  serve=$!
  trap 'kill $serve $generator 2>/dev/null || true' EXIT
  # Joining: every channel fetches its playlist and three segments at once.
  sleep 20
  api=$(grep -o 'API on http://127.0.0.1:[0-9]*' "$WORK/serve-$n.txt" | cut -d' ' -f3 | head -1)
  start_serve=$(ticks "$serve"); start_gen=$(ticks "$generator"); start=$(date +%s.%N)
  peak_rss=0; peak_anon=0; peak_threads=0; peak_sockets=0
  end=$(( $(date +%s) + SECONDS_MEASURED ))
  while [ "$(date +%s)" -lt "$end" ]; do
    rss=$(field "$serve" VmRSS); anon=$(field "$serve" RssAnon); threads=$(field "$serve" Threads)
    sockets=$(find "/proc/$serve/fd" -lname 'socket:*' 2>/dev/null | wc -l)
    [ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
    [ "$anon" -gt "$peak_anon" ] && peak_anon=$anon
    [ "$threads" -gt "$peak_threads" ] && peak_threads=$threads
    [ "$sockets" -gt "$peak_sockets" ] && peak_sockets=$sockets
    sleep 1
  done
  stop_serve=$(ticks "$serve"); stop_gen=$(ticks "$generator"); stop=$(date +%s.%N)
  curl -s "$api/metrics" > "$WORK/metrics-$n.txt" || true
  kill -TERM "$serve"; wait "$serve" || true
  kill "$generator"; wait "$generator" 2>/dev/null || true
  trap - EXIT

  python3 scripts/fleet_check.py "$n" "$WORK/records-$n.jsonl" "$start" "$stop" "$start_serve" "$stop_serve" "$start_gen" "$stop_gen" "$hz" \
    "$peak_rss" "$peak_anon" "$peak_threads" "$peak_sockets"
done

# BENCH_FLEET_API=0 leaves the API's two measurements out (a run about the channels alone).
[ "${BENCH_FLEET_API:-1}" = 0 ] && exit 0

# The API under a flood: /healthz probes before and during 5,000 connections opened at once, to
# serve at its default --api-max-connections, with 10,000 descriptors (so the cap, not the
# descriptor limit, is what is tested).
printf 'channels:\n  - {name: a, url: "http://127.0.0.1:9/a.m3u8"}\n' > "$WORK/flood.yaml"
(ulimit -n 10000 && exec "$METER" serve "$WORK/flood.yaml" --listen 127.0.0.1:0 > /dev/null 2> "$WORK/serve-flood.txt") &
serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'API on' "$WORK/serve-flood.txt" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o 'API on http://127.0.0.1:[0-9]*' "$WORK/serve-flood.txt" | head -1 | cut -d: -f3)
# A failed probe is said, and the churn below still measured.
python3 scripts/api_flood.py "$port" || echo "api flood: FAILED (above)"
kill -TERM "$serve"; wait "$serve" || true
trap - EXIT

# Memory given back: 3,000 channels added over the API and deleted, three times, to serve at
# its defaults; resident memory before, with them, after, and 70 s later as a ratio to before.
printf 'api_hosts: [127.0.0.1]\nchannels:\n  - {name: a, url: "http://127.0.0.1:9/a.m3u8"}\n' > "$WORK/churn.yaml"
"$METER" serve "$WORK/churn.yaml" --listen 127.0.0.1:0 > /dev/null 2> "$WORK/serve-churn.txt" &
serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'API on' "$WORK/serve-churn.txt" 2>/dev/null && break; sleep 0.1; done
# The channel's own failure names 127.0.0.1:9 first; the port is the API line's.
port=$(grep -o 'API on http://127.0.0.1:[0-9]*' "$WORK/serve-churn.txt" | head -1 | cut -d: -f3)
python3 scripts/api_churn.py "$port" "$serve" 3000
kill -TERM "$serve"; wait "$serve" || true
trap - EXIT
