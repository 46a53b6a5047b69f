#!/usr/bin/env bash
# The HTML QA report at scale: 10,000 sources with a million Nielsen tags between them, and one
# source with the same million. For each: scan time and peak memory writing the HTML report
# against writing the JSON report of the same scan (same run), the page's size, and how long a
# headless chromium takes to open it and draw the first screen, against the small defects report.
# The corpus takes about 6 GB (a TS packet per video frame of 100 s per source).
set -euo pipefail
cd "$(dirname "$0")/.."

METER=.build/release/id3-meter
CORPUS=bench-corpus/report
SOURCES=${BENCH_REPORT_SOURCES:-10000}
SECONDS_EACH=${BENCH_REPORT_SECONDS:-100}

mkdir -p "$CORPUS"
stamp="report-$SOURCES-$SECONDS_EACH"
if [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "building $SOURCES sources of $SECONDS_EACH tags each in $CORPUS/"
  rm -rf "$CORPUS/sources" && mkdir -p "$CORPUS/sources"
  .build/release/id3-sample-gen dense-corpus "$CORPUS/one.ts" --segments "$SOURCES" --segment-duration "$SECONDS_EACH" \
    --tag-interval 1 --bitrate 4000 --folder "$CORPUS/sources" > "$CORPUS/tags"
  echo "$stamp" > "$CORPUS/stamp"
fi
tags=$(cat "$CORPUS/tags")

# "seconds peak_KiB" of one run.
timed() { /usr/bin/time -f "%e %M" -o "$CORPUS/time.txt" "$@" >/dev/null 2>&1 || true; cat "$CORPUS/time.txt"; }
# Seconds from navigation until the page's first screen is drawn (its script done, then a frame
# painted), in a copy of the page that logs it; chromium's own start-up is not counted.
browser() {
  python3 - "$1" "$CORPUS/timed.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
call = 'ID3Meter.renderReport(JSON.parse(document.getElementById("report-data").textContent));'
assert call in page
page = page.replace(call, call + ' requestAnimationFrame(() => setTimeout(() => console.log("first screen " + performance.now())));')
open(sys.argv[2], "w").write(page)
PY
  chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --window-size=1280,1000 \
    --screenshot="$CORPUS/shot.png" "file://$PWD/$CORPUS/timed.html" 2>&1 >/dev/null \
    | sed -n 's/.*"first screen \([0-9.]*\)".*/\1/p' | awk '{ printf "%.2f\n", $1 / 1000 }'
}
mb() { python3 -c "print(f'{$(stat -c %s "$1")/1048576:.1f}')"; }

"$METER" scan --quiet --report "$CORPUS/small.html" samples/qa/defects.ts > /dev/null || true
small_open=$(browser "$CORPUS/small.html")
for case in sources one.ts; do
  find "$CORPUS/$case" -type f -exec cat {} + > /dev/null  # into the page cache, for both reports alike
  read -r json_s json_kib < <(timed "$METER" scan --quiet --report "$CORPUS/report.json" "$CORPUS/$case")
  read -r html_s html_kib < <(timed "$METER" scan --quiet --report "$CORPUS/report.html" "$CORPUS/$case")
  open_s=$(browser "$CORPUS/report.html")
  echo "$case ($tags tags): scan with the JSON report ${json_s} s (peak ${json_kib} KiB), with the HTML report ${html_s} s" \
       "(peak ${html_kib} KiB); HTML $(mb "$CORPUS/report.html") MB (JSON $(mb "$CORPUS/report.json") MB);" \
       "chromium draws its first screen ${open_s} s after opening it (the 9-tag defects report: ${small_open} s)"
done
