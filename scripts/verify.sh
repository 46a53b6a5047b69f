#!/usr/bin/env bash
# Cross-checks `id3-meter scan` against scripts/independent_reader.py, which shares no code with
# it or libavformat: the same Nielsen tags, with the same pts and payload, for every TS sample;
# and each DASH and multi-program TS sample against the tags its writer planted.
# Both lists are sorted: tags on different PIDs may complete in either order.
set -uo pipefail
cd "$(dirname "$0")/.."
METER=${METER:-.build/debug/id3-meter}

passed=0
failed=0
# compare INPUT EXPECTED WHAT: EXPECTED (sorted pts/payload lines) against what the meter's scan of INPUT finds.
compare() {
  local ours
  ours=$("$METER" scan --format jsonl "$1" 2>/dev/null \
    | python3 -c 'import json, sys; [print(json.dumps({"pts": r["pts"], "payload": r["payload"]})) for r in map(json.loads, sys.stdin)]' | sort)
  if [ -n "$2" ] && [ "$2" = "$ours" ]; then
    passed=$((passed + 1))
    echo "same tags: $1 ($(wc -l <<<"$2") Nielsen tags$3)"
  else
    failed=$((failed + 1))
    echo "DIFFERENT: $1"
    diff <(echo "$2") <(echo "$ours") | head -5
  fi
}

for input in samples/ts/nielsen*.ts samples/spec/*.ts samples/qa/*.ts samples/spec/hls/index.m3u8 samples/hls/low/low.m3u8 \
    samples/quirks/quirks.ts samples/quirks/hls/index.m3u8 samples/fmp4/index.m3u8 samples/byterange/ts.m3u8 \
    samples/byterange/fmp4.m3u8 samples/lenient/*.ts samples/mpts/*.ts samples/mpts/hls/index.m3u8; do
  compare "$input" "$(python3 scripts/independent_reader.py "$input" | sort)" ""
done
# DASH: against what scripts/dash_samples.py planted (samples/dash/truth.json).
for mpd in $(python3 -c 'import json; print(" ".join(sorted(json.load(open("samples/dash/truth.json")))))'); do
  planted=$(python3 -c 'import json, sys; [print(json.dumps({"pts": t["pts"], "payload": t["owner"]})) for t in json.load(open("samples/dash/truth.json"))[sys.argv[1]]]' "$mpd" | sort)
  compare "samples/dash/$mpd" "$planted" ", as planted"
done
# Multi-program TS: against what scripts/mpts_samples.py planted, every program (samples/mpts/truth.json).
for input in $(python3 -c 'import json; print(" ".join(sorted(json.load(open("samples/mpts/truth.json")))))'); do
  planted=$(python3 -c 'import json, sys; [print(json.dumps({"pts": t["pts"], "payload": t["owner"]})) for t in json.load(open("samples/mpts/truth.json"))[sys.argv[1]]]' "$input" | sort)
  compare "samples/mpts/$input" "$planted" ", as planted"
done
echo "verify: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
