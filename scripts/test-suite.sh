#!/usr/bin/env bash
# Runs the built test bundle in shards (Tests/shards: a line a shard, its suites by type name;
# one more shard runs every suite no line names, so a new suite always runs), each shard a process
# of its own, all at once, under a time budget; then prints the summary and what failed, and
# appends every shard's output to LOG. `make test` builds the bundle first.
#
# Why processes: Swift Testing runs a process's tests on its cooperative pool, as many threads as
# cores (2 here). The live tests keep real time; in one process, a neighbour that blocks both
# threads (a child process waited for, a large file read in a debug build) stops their clocks. A
# shard runs its tests one at a time on a pool of its own, so a live test shares the machine, not
# its threads. A shard line may start with `nice=N` (nice(1)'s adjustment): the live tests that
# time to the millisecond run at 0, the CPU-bound ones below them, so that the machine serves a
# live test's wake-up first; `rest nice=N` sets it for the shard of the suites no line names.
#
# Past the budget a shard is killed and the tests it started without ending are named. Swift
# Testing's time limits cannot do it: they cancel a test's task, which a blocking call does not
# notice.
#
# Usage: scripts/test-suite.sh LOG BUDGET [ARGUMENT...]   (ARGUMENTs go to every shard)
set -uo pipefail
cd "$(dirname "$0")/.."
log=$1 budget=$2; shift 2
bundle=.build/debug/id3-meterPackageTests.xctest
[ -x "$bundle" ] || { echo "no test bundle at $bundle: swift build --build-tests first" >&2; exit 1; }
folder=$(mktemp -d /tmp/id3meter-shards.XXXXXX)
trap 'rm -rf "$folder"' EXIT

named=()
shards=()
rest=0
while read -r line; do
  line=${line%%#*}
  [ -n "${line// }" ] || continue
  if [[ "$line" =~ ^rest\ nice=([0-9]+) ]]; then rest=${BASH_REMATCH[1]}; continue; fi
  shards+=("$line")
  for word in $line; do [[ "$word" == nice=* ]] || named+=("$word"); done
done < Tests/shards
# A type's tests: its ID is MODULE.TYPE/function().
pattern() { local IFS='|'; echo "^ID3MeterTests\.($*)/"; }

started=$(date +%s)
pids=()
run() { # NUMBER NICE ARGUMENT...
  local number=$1 niceness=$2; shift 2
  local TIMEFORMAT="%0R s, CPU %0U s user %0S s system"
  { time NO_COLOR=1 timeout --kill-after=30 "$budget" nice -n "$niceness" "$bundle" --testing-library swift-testing \
      --no-parallel "$@" > "$folder/$number.log" 2>&1; } 2> "$folder/$number.time"
  echo $? > "$folder/$number.status"
}
number=0
for line in "${shards[@]}"; do
  words=($line) niceness=0
  if [[ "${words[0]}" == nice=* ]]; then niceness=${words[0]#nice=} words=("${words[@]:1}"); fi
  number=$((number + 1))
  run "$number" "$niceness" --filter "$(pattern "${words[@]}")" "$@" &
  pids+=($!)
done
number=$((number + 1))
run "$number" "$rest" --skip "$(pattern "${named[@]}")" "$@" &
pids+=($!)
wait "${pids[@]}"

status=0 tests=0
for shard in $(seq 1 "$number"); do
  cat "$folder/$shard.log" >> "$log"
  code=$(cat "$folder/$shard.status")
  summary=$(grep -a -E "^. Test run with" "$folder/$shard.log" | tail -1)
  echo "shard $shard: ${summary:-no summary} (exit $code; $(cat "$folder/$shard.time"))"
  count=$(sed -E 's/.*with ([0-9]+) tests? in .*/\1/' <<< "$summary")
  [[ "$count" =~ ^[0-9]+$ ]] && tests=$((tests + count))
  if [ "$code" -ne 0 ]; then
    status=1
    grep -a -E "^✘|error:" "$folder/$shard.log" | grep -a -v "^\[" | sort -u | head -40
  fi
  if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then
    echo "shard $shard ran past its budget of $budget and was stopped. Tests started that did not end:"
    # A name more often started than ended (names repeat across suites).
    awk '/^◇ Test (case passing|run started)/ { next }
         /^◇ Test .* started\.$/ { sub(/^◇ Test /, ""); sub(/ started\.$/, ""); open[$0]++ }
         /^(✔|✘|➜) Test .* (passed|failed|skipped)/ { sub(/^(✔|✘|➜) Test /, ""); sub(/ (with [0-9]+ test cases )?(passed|failed|skipped).*$/, ""); open[$0]-- }
         END { for (name in open) if (open[name] > 0) print "  " name }' "$folder/$shard.log"
  fi
done
# A test that failed beside the others is run again alone, on a quiet machine. A live test keeps
# real time, and two cores kept busy by five shards can make one late where it would not be alone:
# one that passes alone is named below, never hidden; one that fails alone fails the run.
failed=$(grep -a -h -E "^✘ Test [A-Za-z0-9_]+\(.*\) (with [0-9]+ test cases )?failed after" "$folder"/*.log \
  | sed -E 's/^✘ Test ([A-Za-z0-9_]+)\(.*/\1/' | sort -u)
# Only when every shard that failed ended as a run with failures does (exit 1): not one stopped
# by its budget, crashed or killed, whose unrun tests a rerun of the failed ones would not cover.
ended=$(grep -L -x -E "0|1" "$folder"/*.status 2>/dev/null)
if [ "$status" -ne 0 ] && [ -n "$failed" ] && [ -z "$ended" ]; then
  echo "Run again alone: $(echo $failed)"
  names=$(echo $failed | tr ' ' '|')
  run again 0 --filter "/($names)\(" "$@"
  cat "$folder/again.log" >> "$log"
  grep -a -E "^. Test run with|^✘" "$folder/again.log" | grep -a -v "^\[" | sort -u | head -40
  if [ "$(cat "$folder/again.status")" -eq 0 ]; then
    status=0
    echo "Passed alone, failed beside the other shards (a loaded machine's lateness, or a race to look into): $(echo $failed)"
  fi
fi
seconds=$(( $(date +%s) - started ))
failing=0
[ "$status" -eq 0 ] || failing=$(echo "$failed" | grep -c . || true)
[ "$status" -eq 0 ] || [ "$failing" -gt 0 ] || failing=1   # a shard that died before it could say
echo "$number shards in $seconds s; the whole output: $log"
skipped=$(grep -a -h -E "^➜ Test .* skipped" "$folder"/*.log | sort -u | wc -l)
echo "Tests: $((tests - failing - skipped)) passed, $failing failed, $skipped skipped"
exit "$status"
