#!/usr/bin/env bash
# 24 hours of live stream played fast: a live test server whose clock runs 100x (2 s segments,
# a Nielsen tag every second of media, the 33-bit PTS wrap six hours in), metered with
# --speed 100. Samples the meter's RSS and open descriptors every 10 s, then checks that every
# tag after the join arrived exactly once, in order, with no gap or burst at the wrap.
set -euo pipefail
cd "$(dirname "$0")/.."

HOURS=${LONG_RUN_HOURS:-24}
SCALE=${LONG_RUN_SCALE:-100}
SEGMENT=2
WORK=bench-corpus/long-run
METER=.build/release/id3-meter
GEN=.build/release/id3-sample-gen
mkdir -p "$WORK"
segments=$((HOURS * 3600 / SEGMENT))
# The wrap comes 6 h of media after the start.
start_pts=$(( (1 << 33) - 6 * 3600 * 90000 ))

"$GEN" serve-live --segment-duration $SEGMENT --tag-interval 1 --bitrate 200000 --window 300 \
  --segments "$segments" --time-scale "$SCALE" --start-pts "$start_pts" > "$WORK/url.txt" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/url.txt" ] && break; sleep 0.1; done
sleep 1

"$METER" --format jsonl --speed "$SCALE" --live-start 1 "$(head -1 "$WORK/url.txt")" > "$WORK/deliveries.jsonl" 2> "$WORK/stderr.txt" &
meter=$!
: > "$WORK/samples.txt"
while kill -0 "$meter" 2>/dev/null; do
  echo "$(date +%s) $(awk '/VmRSS/ {print $2}' /proc/$meter/status 2>/dev/null) $(ls /proc/$meter/fd 2>/dev/null | wc -l)" >> "$WORK/samples.txt"
  sleep 10
done
wait "$meter"
echo "meter exit: $?"

python3 - "$WORK" "$SEGMENT" "$SCALE" <<'PY'
import json, sys
work, segment, scale = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
samples = [line.split() for line in open(f"{work}/samples.txt") if len(line.split()) == 3]
rss = [int(s[1]) for s in samples]
fds = [int(s[2]) for s in samples]
warm = rss[min(6, len(rss) - 1)]  # after the first minute
print(f"RSS: {warm / 1024:.1f} MB after a minute, {rss[-1] / 1024:.1f} MB at the end, peak {max(rss) / 1024:.1f} MB; "
      f"growth after warm-up {(max(rss[6:] or rss) - warm) / 1024:.1f} MB (target < 5)")
print(f"open descriptors: min {min(fds)}, max {max(fds)}, at the end {fds[-1]}")
sends = [r for r in map(json.loads, open(f"{work}/deliveries.jsonl")) if r["type"] == "send_id3"]
pts = [r["pts"] for r in sends]
wraps = sum(1 for a, b in zip(pts, pts[1:]) if b < a)
steps = [((b - a) % (1 << 33)) / 90000 for a, b in zip(pts, pts[1:])]
gaps = [(b["sent_at"] - a["sent_at"]) * scale for a, b in zip(sends, sends[1:])]
payloads = [r["payload"] for r in sends]
print(f"sendID3: {len(sends)} calls, {len(set(payloads))} distinct payloads, PTS wraps crossed: {wraps}")
print(f"media step between tags: min {min(steps):.3f} s, max {max(steps):.3f} s (tags are 1 s apart)")
wrap_at = next(i for i, (a, b) in enumerate(zip(pts, pts[1:])) if b < a) if wraps else None
if wrap_at is not None:
    around = gaps[max(0, wrap_at - 2):wrap_at + 3]
    print("media seconds between sendID3 calls around the wrap: " + ", ".join(f"{g:.2f}" for g in around))
PY
