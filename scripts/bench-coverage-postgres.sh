#!/usr/bin/env bash
# `id3-meter report` over scripts/bench-coverage.sh's month (300 channels, 30 days) from
# PostgreSQL: the SQLite corpus that script fills (made here if missing) copied with COPY into a
# database of its own on the test server (scripts/postgres-test-db.sh), its schema made by
# `id3-meter collect`. Baseline, same run: psql printing every coverage row and alert the
# month's report reads. One run each (BENCH_RUNS to change), medians, peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

METER=${METER:-.build/release/id3-meter}
CORPUS=bench-corpus/coverage
DAYS=${BENCH_COVERAGE_DAYS:-30}
RUNS=${BENCH_RUNS:-1}
FIRST=1790812800 # 2026-10-01T00:00:00Z
db=$CORPUS/month.db
[ -f "$db" ] || BENCH_RUNS=1 scripts/bench-coverage.sh > /dev/null
url=$(scripts/postgres-test-db.sh start)
trap 'scripts/postgres-test-db.sh stop' EXIT
psql -X -q "$url" -c "CREATE DATABASE bench_report"
target=${url%/*}/bench_report
"$METER" collect --database "$target" --listen 127.0.0.1:0 2>"$CORPUS/collect-postgres.log" & collector=$!
for _ in $(seq 1 300); do grep -q "collecting on" "$CORPUS/collect-postgres.log" && break; sleep 0.1; done
kill "$collector"; wait "$collector" || true
start=$(date +%s.%N)
for table in coverage channels records; do
  columns=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('$table')")
  sqlite3 -csv "$db" "SELECT $columns FROM $table" | psql -X -q "$target" -c "COPY $table ($columns) FROM STDIN WITH (FORMAT csv)"
done
psql -X -q "$target" -c "ANALYZE"
echo "copied into PostgreSQL in $(echo "$(date +%s.%N) - $start" | bc) s: $(psql -X -t -A "$target" -c "SELECT count(*) FROM coverage") coverage minutes"
last=$(date -u -d "@$((FIRST + (DAYS - 1) * 86400))" +%F)
report() { echo "$METER" report --database "$target" --time-zone UTC --day "$last" --days "$1" --format "$2" --output "$CORPUS/out-postgres.$2"; }
# shellcheck disable=SC2046
read -r -a results <<< "$(python3 scripts/measure_interleaved.py "$RUNS" \
  -- psql -X -q -t -A -o /dev/null "$target" -c "SELECT * FROM coverage ORDER BY channel, minute" -c "SELECT record FROM records WHERE type <> 'send_id3'" \
  -- $(report "$DAYS" json) -- $(report 7 json) -- $(report 1 json) | tr '\n' ' ')"
base=${results[0]}
line() { printf "%-40s %8.2f s  %6.2fx baseline  %8.0f MiB peak\n" "$1" "$2" "$(echo "$2 / $base" | bc -l)" "$(echo "$3 / 1024" | bc -l)"; }
printf "%-40s %8.2f s\n" "baseline: psql reading the rows" "$base"
line "report, $DAYS days, json" "${results[3]}" "${results[5]}"
line "report, 7 days, json" "${results[6]}" "${results[8]}"
line "report, 1 day, json" "${results[9]}" "${results[11]}"
