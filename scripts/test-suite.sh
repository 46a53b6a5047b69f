#!/usr/bin/env bash
# Runs the suite (`swift test` with the arguments given) into LOG under a time budget, then prints
# its summary and what failed. A test that hangs would otherwise hold CI until its own limit and
# leave nothing to read: past the budget the run is killed and the tests that started without
# ending are named. Swift Testing's time limits cannot do it: they cancel a test's task, which a
# blocking call does not notice.
set -uo pipefail
log=$1 budget=$2; shift 2
timeout --kill-after=30 "$budget" swift test "$@" >> "$log" 2>&1
status=$?
grep -a -E "^✘|^✔ Test run with|error:" "$log" | grep -a -v "^\[" | sort -u | head -60
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "The suite ran past its budget of $budget and was stopped. Tests started that did not end:"
  # A name more often started than ended (names repeat across suites).
  awk '/^◇ Test (case passing|run started)/ { next }
       /^◇ Test .* started\.$/ { sub(/^◇ Test /, ""); sub(/ started\.$/, ""); open[$0]++ }
       /^(✔|✘|➜) Test .* (passed|failed|skipped)/ { sub(/^(✔|✘|➜) Test /, ""); sub(/ (with [0-9]+ test cases )?(passed|failed|skipped).*$/, ""); open[$0]-- }
       END { for (name in open) if (open[name] > 0) print "  " name }' "$log"
  grep -a -E '^◇ Suite .* started\.' "$log" | tail -1
fi
exit "$status"
