#!/usr/bin/env bash
# What serve's rendition audit (`audit_renditions`) costs: BENCH_AUDIT_CHANNELS (default 100)
# synthetic live channels, each a ladder of three variants (128, 256 and 384 kbit/s of
# bandwidth declared; 128 kbit/s of bytes each, 2 s segments), metered for BENCH_AUDIT_SECONDS
# (default 180) after joining, once without the audit (the baseline) and once auditing every
# minute. The difference in serve's CPU and in the bytes sent over loopback (the generator's
# answers, nearly all of it; nothing else runs) is the audits'; scaled to a channel-hour at the
# default interval (ten minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
GEN=.build/release/id3-sample-gen
N=${BENCH_AUDIT_CHANNELS:-100}
SECONDS_MEASURED=${BENCH_AUDIT_SECONDS:-180}
WORK=bench-corpus/audit
mkdir -p "$WORK"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sent() { cat /sys/class/net/lo/statistics/tx_bytes; }
hz=$(getconf CLK_TCK)

declare -A cpu bytes
for audit in 0 1; do
  "$GEN" serve-lineup --channels "$N" --renditions 3 --audit-renditions "$audit" --config "$WORK/lineup-$audit.yaml" \
    > "$WORK/generator-$audit.txt" &
  generator=$!
  for _ in $(seq 100); do [ -s "$WORK/generator-$audit.txt" ] && break; sleep 0.1; done
  "$METER" serve "$WORK/lineup-$audit.yaml" --listen 127.0.0.1:0 > "$WORK/records-$audit.jsonl" 2> "$WORK/serve-$audit.txt" &
  serve=$!
  trap 'kill $serve $generator 2>/dev/null || true' EXIT
  sleep 20
  start_serve=$(ticks "$serve"); start_bytes=$(sent)
  sleep "$SECONDS_MEASURED"
  cpu[$audit]=$(( $(ticks "$serve") - start_serve )); bytes[$audit]=$(( $(sent) - start_bytes ))
  kill -TERM "$serve"; wait "$serve" || true
  kill "$generator"; wait "$generator" 2>/dev/null || true
  trap - EXIT
done
audits=$(grep -c '"renditions_differ"' "$WORK/records-1.jsonl" || true)
python3 - "$N" "$SECONDS_MEASURED" "$hz" "${cpu[0]}" "${cpu[1]}" "${bytes[0]}" "${bytes[1]}" "$audits" <<'PY'
import sys
n, seconds, hz = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
cpu0, cpu1, bytes0, bytes1, alerts = (int(value) for value in sys.argv[4:9])
channel_hours = n * seconds / 3600
audits_per_hour_default = 6  # every ten minutes
audits_per_hour_measured = 60
extra_cpu = (cpu1 - cpu0) / hz / channel_hours / audits_per_hour_measured * audits_per_hour_default
extra_bytes = (bytes1 - bytes0) / channel_hours / audits_per_hour_measured * audits_per_hour_default
print(f"{n} channels x 3 renditions, {seconds:.0f} s each run")
print(f"serve CPU: {cpu0 / hz / seconds * 100:.1f}% of a core without the audit, {cpu1 / hz / seconds * 100:.1f}% auditing every minute "
      f"(ratio {cpu1 / max(cpu0, 1):.2f})")
print(f"bytes sent: {bytes0 / seconds / 1e6:.2f} MB/s without, {bytes1 / seconds / 1e6:.2f} MB/s with (ratio {bytes1 / max(bytes0, 1):.2f})")
print(f"an audit every ten minutes: {extra_cpu:.2f} CPU seconds and {extra_bytes / 1e6:.2f} MB a channel-hour")
print(f"renditions_differ records (must be 0 on an intact ladder): {alerts}")
sys.exit(1 if alerts else 0)
PY
