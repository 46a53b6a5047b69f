#!/usr/bin/env python3
"""Writes samples/byterange/: EXT-X-BYTERANGE playlists over single files made from the other
samples (written by the independent TS writer, ffmpeg and the fMP4 sample step), with their
ground truth taken from those samples' own. Independent of id3-meter's code. Usage:
scripts/byterange_samples.py SAMPLES_FOLDER"""
import json, os, sys

samples = sys.argv[1]
out = os.path.join(samples, "byterange")
os.makedirs(out, exist_ok=True)


def size(path):
    return os.path.getsize(os.path.join(samples, path))


def concat(name, parts):
    with open(os.path.join(out, name), "wb") as target:
        for part in parts:
            with open(os.path.join(samples, part), "rb") as source:
                target.write(source.read())


def playlist(name, lines, target=10):
    header = ["#EXTM3U", "#EXT-X-VERSION:4", f"#EXT-X-TARGETDURATION:{target}", "#EXT-X-PLAYLIST-TYPE:VOD"]
    with open(os.path.join(out, name), "w") as f:
        f.write("\n".join(header + lines + ["#EXT-X-ENDLIST"]) + "\n")


def truth(name, source, segment):
    with open(os.path.join(samples, source)) as f, open(os.path.join(out, name), "w") as target:
        for line in f:
            record = json.loads(line)
            record["segment"] = segment
            target.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


# MPEG-TS: three sub-ranges of the independent writer's file, cut inside packets (5,000 and 7,000
# bytes are no multiple of 188), the last two without an offset (they follow the one before).
ts = "../spec/standard-60.ts"
rest = size("spec/standard-60.ts") - 12000
playlist("ts.m3u8", ["#EXTINF:2,", "#EXT-X-BYTERANGE:5000@0", ts, "#EXTINF:2,", "#EXT-X-BYTERANGE:7000", ts,
                     "#EXTINF:2,", f"#EXT-X-BYTERANGE:{rest}", ts])
truth("ts.expected.jsonl", "spec/standard-60.expected.jsonl", "standard-60.ts")

# Packed audio: the three AAC segments in one file, one sub-range each.
parts = [f"packed/aac/seg{n}.aac" for n in range(3)]
concat("packed.aac", parts)
lines, offset = [], 0
for part in parts:
    lines += ["#EXTINF:2,", f"#EXT-X-BYTERANGE:{size(part)}@{offset}", "packed.aac"]
    offset += size(part)
playlist("packed.m3u8", lines)
truth("packed.expected.jsonl", "packed/aac/expected.jsonl", "packed.aac")

# fMP4: the init section and the three fragments in one file, EXT-X-MAP with a BYTERANGE.
parts = ["fmp4/init.mp4"] + [f"fmp4/seg{n}.m4s" for n in range(3)]
concat("fmp4.mp4", parts)
lines, offset = [f'#EXT-X-MAP:URI="fmp4.mp4",BYTERANGE="{size(parts[0])}@0"'], size(parts[0])
for part in parts[1:]:
    lines += ["#EXTINF:6,", f"#EXT-X-BYTERANGE:{size(part)}@{offset}", "fmp4.mp4"]
    offset += size(part)
playlist("fmp4.m3u8", lines)
truth("fmp4.expected.jsonl", "fmp4/expected.jsonl", "fmp4.mp4")
