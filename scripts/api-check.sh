#!/usr/bin/env bash
# The library's public API (ID3MeterCore, ID3Meter) against the last version's: the newest version
# tag that HEAD descends from, built beside it by `swift package diagnose-api-breaking-changes`.
# A breaking change fails unless the version has been raised since that tag and CHANGELOG.md's
# section for the new version lists it under "### Breaking". (`make api-check`; `make test` runs it.)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

baseline=$(git tag --merged HEAD --sort=-v:refname --list '[0-9]*.[0-9]*.[0-9]*' | head -1)
if [ -z "$baseline" ]; then
  echo "api-check: this clone has no version tag to compare with (git fetch --tags); not checked"
  exit 0
fi
current=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/ID3MeterCore/Version.swift)
log=.build/api-check.log
mkdir -p .build
if "$SWIFT" package diagnose-api-breaking-changes "$baseline" --products ID3MeterCore ID3Meter > "$log" 2>&1; then
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
