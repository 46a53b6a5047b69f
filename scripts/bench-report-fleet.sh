#!/usr/bin/env bash
# `id3-meter report` over a fleet's month on PostgreSQL: BENCH_REPORT_CHANNELS (10,000) channels
# from a redundant pair, BENCH_REPORT_DAYS (30) days, 3 gaps a channel a day, as the collector
# keeps them once it has folded its hours (scripts/coverage_fleet.py). First a check on a small
# line-up: the report from the folded hours and the few minutes kept beside them must be the
# report the collector's minutes give, every minute written. Baseline, same run: psql reading
# every row the month's report reads. Peak RSS of the report.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=${METER:-.build/release/id3-meter}
CHANNELS=${BENCH_REPORT_CHANNELS:-10000}
DAYS=${BENCH_REPORT_DAYS:-30}
FIRST=1790812800 # 2026-10-01T00:00:00Z
OUT=bench-corpus/report-fleet
mkdir -p "$OUT"
[ -x "$METER" ] || swift build -c release --product id3-meter >/dev/null

url=$(scripts/postgres-test-db.sh start)
trap 'scripts/postgres-test-db.sh stop' EXIT
# A database with the collector's schema, made by `id3-meter collect`.
database() {
  psql -X -q "$url" -c "CREATE DATABASE $1"
  local target=${url%/*}/$1
  "$METER" collect --database "$target" --listen 127.0.0.1:0 2>"$OUT/collect-$1.log" & local collector=$!
  for _ in $(seq 1 300); do grep -q "collecting on" "$OUT/collect-$1.log" && break; sleep 0.1; done
  kill "$collector"; wait "$collector" || true
  echo "$target"
}
last=$(date -u -d "@$((FIRST + (DAYS - 1) * 86400))" +%F)
report() { "$METER" report --database "$1" --time-zone UTC --day "$2" --days "$3" --format json --output "$4"; }

# The check: 40 channels, 3 days, both ways.
hours=$(database check_hours); minutes=$(database check_minutes)
scripts/coverage_fleet.py "$hours" "$FIRST" 3 40 3 hours > /dev/null
scripts/coverage_fleet.py "$minutes" "$FIRST" 3 40 3 minutes > /dev/null
check_day=$(date -u -d "@$((FIRST + 2 * 86400))" +%F)
report "$hours" "$check_day" 3 "$OUT/check-hours.json"
report "$minutes" "$check_day" 3 "$OUT/check-minutes.json"
python3 - "$OUT/check-hours.json" "$OUT/check-minutes.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for report in (a, b):
    report.pop("generated"); report.pop("source")
gaps = sum(len(day["gaps"]) for day in b["channels"])
assert gaps > 0 and all(len(day["meters"]) == 2 for day in b["channels"]), "the check's line-up is not what it was made to be"
if a != b:
    first = next((x, y) for x, y in zip(a["channels"], b["channels"]) if x != y)
    sys.exit(f"the report from folded hours differs from the minutes' report:\n{first[0]}\n{first[1]}")
print(f"check: {len(b['channels'])} channel-days, {gaps} gaps: the same report from the folded hours as from every minute")
EOF

fleet=$(database fleet)
start=$(date +%s.%N)
gaps=$(scripts/coverage_fleet.py "$fleet" "$FIRST" "$DAYS" "$CHANNELS" 3 hours)
psql -X -q "$fleet" -c "ANALYZE"
size=$(psql -X -t -A "$fleet" -c "SELECT pg_size_pretty(pg_database_size(current_database()))")
printf "filled in %.0f s: %s channels, %s days, %s gaps, %s hours, %s minutes, %s\n" "$(echo "$(date +%s.%N) - $start" | bc)" "$CHANNELS" "$DAYS" "$gaps" \
  "$(psql -X -t -A "$fleet" -c "SELECT count(*) FROM coverage_hours")" "$(psql -X -t -A "$fleet" -c "SELECT count(*) FROM coverage")" "$size"

read -r -a results <<< "$(python3 scripts/measure_interleaved.py 1 \
  -- psql -X -q -o /dev/null "$fleet" -c "SELECT * FROM coverage_hours ORDER BY channel, hour" -c "SELECT * FROM coverage ORDER BY channel, minute" \
     -c "SELECT record FROM records WHERE type <> 'send_id3' ORDER BY channel, sent_at" \
  -- "$METER" report --database "$fleet" --time-zone UTC --day "$last" --days "$DAYS" --format json --output "$OUT/month.json" | tr '\n' ' ')"
printf "%-52s %8.2f s\n" "baseline: psql reading every row the report reads" "${results[0]}"
printf "%-52s %8.2f s  %6.2fx baseline  %6.0f MiB peak\n" "report, $CHANNELS channels, $DAYS days, json" "${results[3]}" \
  "$(echo "${results[3]} / ${results[0]}" | bc -l)" "$(echo "${results[5]} / 1024" | bc -l)"
python3 - "$OUT/month.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
days = report["channels"]
print(f"{len(days)} channel-days, {sum(len(d['gaps']) for d in days)} gaps, {sum(d['credited_minutes'] for d in days)} credited minutes of {sum(d['on_air_minutes'] for d in days)}")
EOF
