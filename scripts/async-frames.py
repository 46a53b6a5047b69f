#!/usr/bin/env python3
"""The largest async frames of a binary: what each suspended call of a task holds.

A channel's memory in `serve` is mostly its tasks' async frames, kept in the task's allocator.
Each async function has an "async function pointer" (a symbol ending in `Tu`): a relative
pointer to the function, then the size of the context (frame) it needs, both 32-bit.

Usage: scripts/async-frames.py [BINARY] [COUNT] [FILTER]
   e.g. scripts/async-frames.py .build/release/id3-meter 40 PlaylistWalk
"""
import struct
import subprocess
import sys


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/id3-meter"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    wanted = sys.argv[3] if len(sys.argv) > 3 else ""
    sections = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[0].startswith("["):
            try:
                sections.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)))
            except ValueError:
                continue
    data = open(binary, "rb").read()

    def offset(address):
        for start, at, size in sections:
            if start and start <= address < start + size:
                return at + address - start
        return None

    rows = []
    for line in subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].endswith("Tu"):
            at = offset(int(parts[0], 16))
            if at is not None:
                rows.append((struct.unpack_from("<I", data, at + 4)[0], parts[2]))
    rows.sort(reverse=True)
    names = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(name for _, name in rows),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    shown = 0
    for (size, _), name in zip(rows, names):
        if wanted in name:
            print(f"{size:7d} {name.removeprefix('async function pointer to ')[:200]}")
            shown += 1
            if shown == count:
                break


if __name__ == "__main__":
    main()
