#!/bin/bash
# Usage: scripts/compare-outputs.sh OLD_BINARY NEW_BINARY (build the old one from a worktree).
# The send times and log clock times are taken out; everything else must be byte-identical.
# Compares scan (jsonl, csv, text, report json) and meter (jsonl) outputs of two binaries on every sample.
OLD=$1; NEW=$2; same=0; diff=0
for input in $(find samples -name '*.ts' -o -name '*.m3u8' -o -name '*.aac' -o -name '*.mp3' -o -name '*.ac3' -o -name '*.m4s' -o -name '*.mp4' | sort); do
  for args in "scan --format jsonl" "scan --format csv" "scan --report - --format jsonl" "--speed max --format jsonl"; do
    a=$($OLD $args "$input" 2>&1 | sed -E "s/\"sent_at\":[0-9.]+//; s/^[0-9:.]{12} //"; echo "rc=${PIPESTATUS[0]}"); b=$($NEW $args "$input" 2>&1 | sed -E "s/\"sent_at\":[0-9.]+//; s/^[0-9:.]{12} //"; echo "rc=${PIPESTATUS[0]}")
    if [ "$a" == "$b" ]; then same=$((same+1)); else diff=$((diff+1)); echo "DIFF: $args $input"; diff <(echo "$a") <(echo "$b") | head -6; fi
  done
done
echo "same: $same, different: $diff"
