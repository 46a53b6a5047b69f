#!/usr/bin/env bash
# Meters a local live sliding-window HLS stream (5 Mbit/s, a Nielsen tag every second) in real
# time and reports pacing error, CPU time and peak RSS. The pacing error of each sendID3 is
# |sent_at - due| with due = t0 + (pts - pts0) / 90000 and t0 fitted (the median offset).
# Meanwhile the HTTP collector is down for 30 s: every record must still reach it, once.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
GEN=.build/release/id3-sample-gen
SECONDS_LIVE=${BENCH_LIVE_SECONDS:-70}
SEGMENT=2
WORK=bench-corpus/live
mkdir -p "$WORK"

"$GEN" serve-live --segment-duration "$SEGMENT" --tag-interval 1 --bitrate 5000000 --window 6 \
  --segments $((SECONDS_LIVE / SEGMENT + 4)) > "$WORK/url.txt" &
server=$!
"$GEN" serve-collector --records "$WORK/collected.jsonl" --down-at 10 --down-for 30 --lifetime $((SECONDS_LIVE + 60)) \
  > "$WORK/collector.txt" &
collector=$!
rm -rf "$WORK/spool"
trap 'kill $server $collector 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/url.txt" ] && [ -s "$WORK/collector.txt" ] && break; sleep 0.1; done
url=$(head -1 "$WORK/url.txt")
collector_url=$(head -1 "$WORK/collector.txt")
# Join as a viewer does, once the window holds a few segments to buffer (a player starting on
# a one-segment playlist stalls on every segment, and so would pacing against a fixed t0).
sleep $((SEGMENT * 4))

/usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$METER" --format jsonl --collector "$collector_url" --spool "$WORK/spool" "$url" > "$WORK/deliveries.jsonl" 2> "$WORK/stderr.txt" &
meter=$!
# Private (anonymous) memory is what each metered stream costs; the rest of RSS is shared library pages.
anon_peak=0
while kill -0 "$meter" 2>/dev/null; do
  pid=$(pgrep -P "$meter" -x id3-meter || true)
  if [ -n "$pid" ]; then
    anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${anon:-0}" -gt "$anon_peak" ] && anon_peak=$anon
  fi
  sleep 0.2
done
wait "$meter"
read -r wall user sys rss < "$WORK/time.txt"

python3 - "$WORK/deliveries.jsonl" "$wall" "$user" "$sys" "$rss" "$anon_peak" "$WORK/collected.jsonl" <<'PY'
import json, statistics, sys
path, wall, user, sys_cpu, rss, anon = sys.argv[1], *map(float, sys.argv[2:7])
written = [json.dumps(json.loads(line), sort_keys=True) for line in open(path)]
collected = [json.dumps(json.loads(line), sort_keys=True) for line in open(sys.argv[7])]
print(f"collector down 30 s: {len(collected)} records collected of {len(written)} written, "
      f"{'same records, none lost, none doubled' if collected == written else 'DIFFERENT'}")
sends = [r for r in map(json.loads, open(path)) if r["type"] == "send_id3"]
pts0 = sends[0]["pts"]
rel = [(r["pts"] - pts0) / 90000 for r in sends]
t0 = statistics.median(r["sent_at"] - x for r, x in zip(sends, rel))
errors = sorted(abs(r["sent_at"] - (t0 + x)) * 1000 for r, x in zip(sends, rel))
p = lambda q: errors[min(len(errors) - 1, int(q * len(errors)))]
cpu = user + sys_cpu
print(f"live pacing over {wall:.0f} s, {len(sends)} sendID3 calls: |sent_at - due| p50 {p(0.5):.1f} ms, "
      f"p99 {p(0.99):.1f} ms, max {errors[-1]:.1f} ms (one frame at 29.97 fps = 33.4 ms)")
print(f"live CPU: {cpu:.2f} s in {wall:.0f} s = {100 * cpu / wall:.2f}% of a core; "
      f"peak RSS {rss / 1024:.1f} MB, of which private (anonymous) {anon / 1024:.1f} MB")
sys.exit(0 if collected == written else 1)
PY
