#!/usr/bin/env bash
# `id3-meter report` over a month of a 300-channel line-up (a tag every 10 s, 3 gaps a channel a
# day): the collector's SQLite database as scripts/coverage_month.py fills it (its schema made by
# `id3-meter collect`), reported for the month, for one week and for one day, in JSON and HTML.
# Baseline, same run: sqlite3 printing every coverage row and alert the month's report reads
# (reading the data, nothing more). Medians of BENCH_RUNS (3) runs, interleaved; peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=${METER:-.build/release/id3-meter}
CORPUS=bench-corpus/coverage
CHANNELS=${BENCH_COVERAGE_CHANNELS:-300}
DAYS=${BENCH_COVERAGE_DAYS:-30}
RUNS=${BENCH_RUNS:-3}
FIRST=1790812800 # 2026-10-01T00:00:00Z
command -v sqlite3 >/dev/null || { apt-get install -y -q sqlite3 >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q sqlite3 >/dev/null; }; }
[ -x "$METER" ] || swift build -c release --product id3-meter >/dev/null

mkdir -p "$CORPUS"
db=$CORPUS/month.db
stamp="coverage-$CHANNELS-$DAYS-$(git hash-object scripts/coverage_month.py)"
# The schema as the collector makes it, or brings a kept database's up to date (report refuses an older one).
schema() {
  "$METER" collect --database "$db" --listen 127.0.0.1:0 2>"$CORPUS/collect.log" & collector=$!
  for _ in $(seq 1 100); do grep -q "collecting on" "$CORPUS/collect.log" && break; sleep 0.1; done
  kill "$collector"; wait "$collector" || true
}
if [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "filling $db: $CHANNELS channels, $DAYS days"
  rm -f "$db" "$db-wal" "$db-shm"
  schema
  start=$(date +%s.%N)
  gaps=$(scripts/coverage_month.py "$db" "$FIRST" "$DAYS" "$CHANNELS" 3)
  echo "  $gaps gaps planted in $(echo "$(date +%s.%N) - $start" | bc) s"
  echo "$stamp" > "$CORPUS/stamp"
else
  schema
fi
last=$(date -u -d "@$((FIRST + (DAYS - 1) * 86400))" +%F)
rows=$(sqlite3 "$db" "SELECT COUNT(*) FROM coverage")
echo "database: $(du -h "$db" | cut -f1), $rows coverage minutes ($CHANNELS channels, $DAYS days)"
report() { echo "$METER" report --database "$db" --time-zone UTC --day "$last" --days "$1" --format "$2" --output "$CORPUS/out.$2"; }
# shellcheck disable=SC2046
read -r -a results <<< "$(python3 scripts/measure_interleaved.py "$RUNS" \
  -- sqlite3 "$db" "SELECT * FROM coverage ORDER BY channel, minute; SELECT record FROM records WHERE type <> 'send_id3'" \
  -- $(report "$DAYS" json) -- $(report "$DAYS" html) -- $(report 7 json) -- $(report 1 json) | tr '\n' ' ')"
base=${results[0]}
line() { printf "%-40s %8.2f s  %6.2fx baseline  %8.0f MiB peak\n" "$1" "$2" "$(echo "$2 / $base" | bc -l)" "$(echo "$3 / 1024" | bc -l)"; }
printf "%-40s %8.2f s  %8.0f MiB peak\n" "baseline: sqlite3 reading the rows" "$base" "$(echo "${results[2]} / 1024" | bc -l)"
line "report, $DAYS days, json" "${results[3]}" "${results[5]}"
line "report, $DAYS days, html" "${results[6]}" "${results[8]}"
line "report, 7 days, json" "${results[9]}" "${results[11]}"
line "report, 1 day, json" "${results[12]}" "${results[14]}"
echo "html page: $(du -h "$CORPUS/out.html" | cut -f1); json: $(du -h "$CORPUS/out.json" | cut -f1)"
