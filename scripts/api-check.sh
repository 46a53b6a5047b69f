#!/usr/bin/env bash
# The library's public API (ID3MeterCore, ID3Meter) against the last release's, by
# `swift package diagnose-api-breaking-changes`. The release is named in api/baseline ("VERSION
# COMMIT"): every clone has that commit, so the check compares wherever it runs, tags or not. The
# release's API digests are kept in api/VERSION/, so the release is not built again on each run.
# A breaking change fails unless ID3MeterVersion.current has been raised past the release and
# CHANGELOG.md's section for it lists the change under "### Breaking".
# (`make api-check`; `make test` runs it. After a release: `make api-baseline`.)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

read -r baseline commit < api/baseline
digests=api/$baseline
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "api-check: api/baseline names $commit (release $baseline), which this clone does not have; a shallow clone? (git fetch --unshallow)"
  exit 1
fi
current=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ID3MeterCore/Version.swift)
log=.build/api-check.log
mkdir -p .build
if [ "${1:-}" = "--regenerate" ]; then
  rm -rf "$digests"
fi
# SwiftPM keeps a baseline's digests below --baseline-dir in a folder named by the commit, and
# builds the commit only for the modules whose digest is not there yet.
if "$SWIFT" package diagnose-api-breaking-changes "$commit" --baseline-dir "$digests" \
    --products ID3MeterCore ID3Meter > "$log" 2>&1; then
  echo "api-check: no breaking change to the library since $baseline"
  exit 0
fi
if ! grep -q "API breakage" "$log"; then
  echo "api-check: the comparison with $baseline did not run (the whole output: $log):"
  grep -E "error:" "$log" | sort -u | head -20
  exit 1
fi
grep -E "API breakage" "$log" | sort -u
if [ "$current" = "$baseline" ]; then
  echo "api-check: the library's API broke since $baseline without a new version: raise ID3MeterVersion.current and list the change in CHANGELOG.md under ### Breaking"
  exit 1
fi
section=$(awk -v v="## $current" 'index($0, v) == 1 { on = 1; next } /^## / { on = 0 } on' CHANGELOG.md)
if ! grep -q "^### Breaking" <<< "$section"; then
  echo "api-check: $current breaks the API of $baseline, and CHANGELOG.md's section for $current has no ### Breaking list"
  exit 1
fi
echo "api-check: $current breaks the API of $baseline as CHANGELOG.md says"
