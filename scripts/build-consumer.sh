#!/usr/bin/env bash
# Builds a package that uses this one as a backend would (PACKAGE, e.g. Examples/ServiceFollower,
# which depends on this repository by path) in SCRATCH, on what the main debug build (.build) has
# already compiled. Used by LibraryResourceTests.
#
# SwiftPM reuses a compiled module only when its command is the same, source paths included, and a
# package's sources are in SCRATCH/checkouts. So SCRATCH starts as a copy of .build (less its
# programs, a gigabyte nobody links against), and is mounted over .build for this build alone, in a
# mount namespace of its own: every dependency keeps the paths it was compiled with, and only what
# differs is compiled (the library under the consumer's traits, the consumer itself: about 40 s
# here, against 4 minutes from nothing). The main build is not touched. Where a mount namespace
# cannot be had (not root, or a container that forbids it), SCRATCH is built as it is, from nothing
# the first time.
#
# Usage: scripts/build-consumer.sh PACKAGE SCRATCH
set -euo pipefail
cd "$(dirname "$0")/.."
package=$(realpath "$1") scratch=$(realpath -m "$2") main=$(realpath .build)
SWIFT=${SWIFT:-swift}

# SwiftPM does not see a source file added to this package in a scratch it has built before (its
# build description is kept): a scratch made before the list of sources changed is made again.
sources=$(find Sources -name '*.swift' | sort | sha256sum | cut -d' ' -f1)
if [ -d "$scratch" ] && [ "$(cat "$scratch/.sources" 2>/dev/null)" != "$sources" ]; then rm -rf "$scratch"; fi

if ! unshare -m true 2>/dev/null; then
  "$SWIFT" build --package-path "$package" --scratch-path "$scratch"
  echo "$sources" > "$scratch/.sources"
  exit 0
fi
if [ ! -d "$scratch" ]; then
  rm -rf "$scratch.partial" && mkdir -p "$scratch.partial"
  tar -C "$main" -cf - --exclude='./*/debug/*.xctest' --exclude='./*/release' --exclude='./*/apidiff' --exclude='./test.log' \
      --exclude='./*/debug/id3-meter' --exclude='./*/debug/id3-meter-fuzz' --exclude='./*/debug/id3-sample-gen' \
      --exclude='./*/debug/library-docs-?' --exclude='./*/debug/library-docs-core' --exclude='./*/debug/*-example' . \
    | tar -C "$scratch.partial" -xf -
  echo "$sources" > "$scratch.partial/.sources"
  mv "$scratch.partial" "$scratch"
fi
exec unshare -m sh -c 'mount --bind "$1" "$2" && exec "$3" build --package-path "$4" --scratch-path "$2"' \
  sh "$scratch" "$main" "$SWIFT" "$package"
