#!/usr/bin/env python3
"""Rendition ladders for `scan --all-renditions`, and the ground truth of what differs.

  FOLDER/master-intact.m3u8    three variants over the same tagged media (the HLS sample's low
                               segments, which the project's generator wrote; its truth is
                               samples/hls/expected.jsonl).
  FOLDER/master-faulty.m3u8    the same media as v0; `stripped.m3u8` lost its timed-ID3 PID from the
                               fourth segment on (the ffmpeg CLI remuxed those segments with `-map`
                               of the video and audio only); `shifted.m3u8` carries every tag
                               half a second late (this script adds 45,000 ticks to the PTS of
                               each PES on the timed-ID3 PID, nothing else changed).
  FOLDER/master-untagged.m3u8  v0 and `untagged.m3u8`, whose every segment lost the PID.
  FOLDER/dash/manifest.mpd     the ffmpeg CLI's DASH output of two video Representations (ids 0
                               and 1) and an audio one (id 2); this script puts the same emsg v1
                               Nielsen tags, at the same times, in Representations 0 and 2:
                               Representation 1 carries none.
  FOLDER/truth.json            for each master or MPD: each rendition at fault and how.

Shares no code with id3-meter. Usage: ladder_samples.py SAMPLES (reads SAMPLES/hls, writes SAMPLES/ladder)."""
import json, os, shutil, struct, subprocess, sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
from dash_samples import NIELSEN, box, emsg_v1, q, template_segments, top_boxes  # noqa: E402
from validator_samples import id3, owner  # noqa: E402

SHIFT = 45_000  # half a second of the 90 kHz clock
STRIPPED_FROM = 3  # the fourth segment, seg3.ts


def timed_id3_pid(data):
    """The PID the PMT gives stream_type 0x15 (timed ID3), read from the first PMT."""
    pmt_pid = None
    for offset in range(0, len(data) - 187, 188):
        packet = data[offset:offset + 188]
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        if not packet[1] & 0x40:
            continue
        start = 4 + (packet[4] + 1 if packet[3] & 0x20 else 0)
        section = packet[start + 1 + packet[start]:]
        if pid == 0 and section[0] == 0:
            pmt_pid = ((section[10] & 0x1F) << 8) | section[11]
        elif pid == pmt_pid and section[0] == 2:
            length = ((section[1] & 0x0F) << 8) | section[2]
            info = ((section[10] & 0x0F) << 8) | section[11]
            at = 12 + info
            while at < 3 + length - 4:
                kind, es_pid = section[at], ((section[at + 1] & 0x1F) << 8) | section[at + 2]
                if kind == 0x15:
                    return es_pid
                at += 5 + (((section[at + 3] & 0x0F) << 8) | section[at + 4])
    raise ValueError("no timed-ID3 PID")


def shifted(data, pid, ticks):
    """`data` with the PTS of each PES starting on `pid` moved by `ticks`."""
    out = bytearray(data)
    for offset in range(0, len(out) - 187, 188):
        packet = out[offset:offset + 188]
        if ((packet[1] & 0x1F) << 8 | packet[2]) != pid or not packet[1] & 0x40:
            continue
        start = offset + 4 + (packet[4] + 1 if packet[3] & 0x20 else 0)
        assert out[start:start + 3] == b"\x00\x00\x01" and out[start + 7] & 0x80, "PES without PTS"
        field = out[start + 9:start + 14]
        pts = ((field[0] >> 1) & 7) << 30 | field[1] << 22 | (field[2] >> 1) << 15 | field[3] << 7 | field[4] >> 1
        pts = (pts + ticks) % (1 << 33)
        out[start + 9:start + 14] = bytes([(field[0] & 0xF1) | ((pts >> 29) & 0xE), (pts >> 22) & 0xFF,
                                           ((pts >> 14) & 0xFE) | 1, (pts >> 7) & 0xFF, ((pts << 1) & 0xFE) | 1])
    return bytes(out)


def media_playlist(path, low, names):
    """`low`'s playlist with its segment lines replaced by `names`."""
    lines, place = [], 0
    for line in open(low).read().splitlines():
        if line and not line.startswith("#"):
            line = names[place]
            place += 1
        lines.append(line)
    open(path, "w").write("\n".join(lines) + "\n")


def master(path, variants):
    lines = ["#EXTM3U", "#EXT-X-VERSION:3"]
    for bandwidth, uri in variants:
        lines += ['#EXT-X-STREAM-INF:BANDWIDTH=%d,RESOLUTION=160x90,FRAME-RATE=29.970,CODECS="mp2v.2,mp4a.40.2"' % bandwidth, uri]
    open(path, "w").write("\n".join(lines) + "\n")


def hls(samples, out, truth):
    low = os.path.join(samples, "hls", "low")
    segments = sorted((name for name in os.listdir(low) if name.endswith(".ts")), key=lambda name: int(name[3:-3]))
    for folder in ("shifted", "untagged"):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
    for name in segments:
        data = open(os.path.join(low, name), "rb").read()
        open(os.path.join(out, "shifted", name), "wb").write(shifted(data, timed_id3_pid(data), SHIFT))
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", os.path.join(low, name), "-map", "0:v", "-map", "0:a",
                        "-c", "copy", "-copyts", "-muxdelay", "0", "-muxpreload", "0", "-f", "mpegts",
                        os.path.join(out, "untagged", name)], check=True)
    playlist = os.path.join(low, "low.m3u8")
    original = ["../hls/low/" + name for name in segments]
    for variant in ("v0", "v1", "v2"):
        media_playlist(os.path.join(out, variant + ".m3u8"), playlist, original)
    media_playlist(os.path.join(out, "stripped.m3u8"), playlist,
                   original[:STRIPPED_FROM] + ["untagged/" + name for name in segments[STRIPPED_FROM:]])
    media_playlist(os.path.join(out, "shifted.m3u8"), playlist, ["shifted/" + name for name in segments])
    media_playlist(os.path.join(out, "untagged.m3u8"), playlist, ["untagged/" + name for name in segments])
    master(os.path.join(out, "master-intact.m3u8"), [(150_000, "v0.m3u8"), (400_000, "v1.m3u8"), (800_000, "v2.m3u8")])
    master(os.path.join(out, "master-faulty.m3u8"), [(150_000, "v0.m3u8"), (400_000, "stripped.m3u8"), (800_000, "shifted.m3u8")])
    master(os.path.join(out, "master-untagged.m3u8"), [(150_000, "v0.m3u8"), (400_000, "untagged.m3u8")])
    # The generator's truth: which Nielsen tags each segment holds (each payload once).
    tags = {}
    for line in open(os.path.join(samples, "hls", "expected.jsonl")):
        tag = json.loads(line)
        if tag["nielsen"]:
            tags.setdefault(tag["owner"], tag["segment"])
    lost = sorted((segment for segment in tags.values() if int(segment[3:-3]) >= STRIPPED_FROM), key=lambda name: int(name[3:-3]))
    truth["master-intact.m3u8"] = {"tags": len(tags), "faults": {}}
    truth["master-faulty.m3u8"] = {"tags": len(tags), "faults": {
        "stripped.m3u8": {"kind": "missing", "count": len(lost), "first_segment": lost[0], "last_segment": lost[-1]},
        "shifted.m3u8": {"kind": "offset", "seconds": SHIFT / 90_000}}}
    truth["master-untagged.m3u8"] = {"tags": len(tags), "faults": {"untagged.m3u8": {"kind": "no_timed_id3"}}}


def dash(out, truth):
    folder = os.path.join(out, "dash")
    os.makedirs(folder, exist_ok=True)
    seconds, segment = 12, 4
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", "testsrc=size=160x90:rate=30000/1001",
                    "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", str(seconds),
                    "-map", "0:v", "-map", "0:v", "-map", "1:a",
                    "-c:v", "mpeg2video", "-b:v:0", "100k", "-b:v:1", "300k", "-g", "60", "-bf", "0",
                    "-c:a", "aac", "-b:a", "16k", "-ac", "1",
                    "-f", "dash", "-seg_duration", str(segment), "-use_timeline", "1", "-dash_segment_type", "mp4",
                    "-adaptation_sets", "id=0,streams=v id=1,streams=a",
                    "-media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s", "-init_seg_name", "init-$RepresentationID$.m4s",
                    os.path.join(folder, "manifest.mpd")], check=True)
    tree = ET.parse(os.path.join(folder, "manifest.mpd"))
    representations = {rep.get("id"): rep for rep in tree.getroot().iter(q("Representation"))}
    # A tag a second and three into each segment: inside it in every Representation, whatever
    # the audio's priming moves its segments' starts by.
    times = [start + inside for start in range(0, seconds, segment) for inside in (1, 3)]
    planted = []
    for rep_id in ("0", "2"):
        timescale, segments = template_segments(representations[rep_id])
        for number, time, duration, name in segments:
            path = os.path.join(folder, name)
            data = open(path, "rb").read()
            insert = next(offset for offset, kind, _ in top_boxes(data) if kind in (b"sidx", b"moof"))
            tags = b""
            for index, at in enumerate(times):
                if time <= at * timescale < time + duration:
                    tags += emsg_v1(timescale, at * timescale, NIELSEN, "1", index, id3(owner(index, seconds=at)))
                    if rep_id == "0":
                        planted.append({"representation": rep_id, "segment": name, "pts": at * 90_000})
            open(path, "wb").write(data[:insert] + tags + data[insert:])
    assert len(planted) == len(times), planted
    truth["dash/manifest.mpd"] = {"tags": len(times), "faults": {"1": {"kind": "no_timed_id3"}}}


def main(samples):
    out = os.path.join(samples, "ladder")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ET.register_namespace("", "urn:mpeg:dash:schema:mpd:2011")
    truth = {}
    hls(samples, out, truth)
    dash(out, truth)
    with open(os.path.join(out, "truth.json"), "w") as file:
        json.dump(truth, file, indent=1, sort_keys=True)
    print("ladder samples: " + ", ".join("%s (%d faults)" % (name, len(entry["faults"])) for name, entry in sorted(truth.items())))


if __name__ == "__main__":
    main(sys.argv[1])
