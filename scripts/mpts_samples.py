#!/usr/bin/env python3
"""Multi-program transport streams (MPTS), as a broadcast contribution feed carries several
channels: programs 1 and 2 each with AAC audio and a timed-ID3 PID of their own, program 3 with
audio alone. Written with scripts/ts_writer.py's packets and validator_samples.py's tags; shares
no code with id3-meter. truth.json lists, per file, every Nielsen tag with its program, PID and PTS.

  two-programs.ts   programs 1 and 2 tagged, 3 not
  one-tagged.ts     program 1 tagged, 2 and 3 not (a meter needs no choice)
  hls/index.m3u8    two-programs.ts cut into three segments, each starting with the tables
"""
import json, os, struct, sys

sys.path.insert(0, os.path.dirname(__file__))
from ts_writer import Writer, crc32  # noqa: E402
from validator_samples import id3, owner, pes_with_pts, AUDIO_FRAME  # noqa: E402

PROGRAMS = {  # program_number: (PMT PID, audio PID, timed-ID3 PID)
    1: (0x1000, 0x101, 0x102),
    2: (0x1010, 0x201, 0x202),
    3: (0x1020, 0x301, None),
}
DURATION = 20  # seconds
PC_CIDS = {1: "QWxwaGFDaGFubmVsT25lMA==", 2: "QnJhdm9DaGFubmVsVHdvMA=="}


def pts(seconds):
    return int(round(seconds * 90_000)) + 900_000


def tables(writer, tagged):
    pat = bytearray([0, 0xB0, 0, 0, 1, 0xC1, 0, 0])
    for number, (pmt_pid, _, _) in PROGRAMS.items():
        pat += struct.pack(">HH", number, 0xE000 | pmt_pid)
    pat[2] = len(pat) - 3 + 4
    out = writer.section(0, bytes(pat))
    meta = bytes([0x26, 0x0D, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x0F])
    for number, (pmt_pid, audio, timed) in PROGRAMS.items():
        pmt = bytearray([0x02, 0xB0, 0, number >> 8, number & 0xFF, 0xC1, 0, 0, 0xE0 | (audio >> 8), audio & 0xFF, 0xF0, 0x00,
                         0x0F, 0xE0 | (audio >> 8), audio & 0xFF, 0xF0, 0x00])
        if timed and number in tagged:
            pmt += bytes([0x15, 0xE0 | (timed >> 8), timed & 0xFF, 0xF0, len(meta)]) + meta
        pmt[2] = len(pmt) - 3 + 4
        out += writer.section(pmt_pid, bytes(pmt))
    return out


def stream(tagged, cuts=()):
    """The TS bytes (and where each of `cuts` seconds falls in them), the tags it carries."""
    writer = Writer()
    events = []
    for number, (_, audio, timed) in PROGRAMS.items():
        events += [(t / 2, 0, number, audio, None) for t in range(0, DURATION * 2)]
        if timed and number in tagged:
            # Program 2's tags fall a second after program 1's: two cadences, one file.
            first = 1.0 if number == 1 else 2.0
            events += [(first + 2 * i, 1, number, timed, i) for i in range(int((DURATION - first) / 2))]
    events += [(t / 2, -1, 0, 0, None) for t in range(0, DURATION * 2)]  # the tables, twice a second
    events += [(cut, -2, 0, 0, None) for cut in cuts]
    out, truth, offsets = bytearray(), [], []
    for seconds, kind, number, pid, index in sorted(events, key=lambda e: (e[0], e[1], e[2])):
        if kind == -2:
            offsets.append(len(out))
            out += tables(writer, tagged)
        elif kind == -1:
            out += tables(writer, tagged)
        elif kind == 0:
            out += b"".join(pes_with_pts(writer, pid, pts(seconds), AUDIO_FRAME, stream_id=0xC0))
        else:
            text = owner(100 * number + index, pc_cid=PC_CIDS[number], seconds=seconds)
            out += b"".join(pes_with_pts(writer, pid, pts(seconds), id3(text)))
            truth.append({"program": number, "pid": pid, "pts": pts(seconds), "owner": text})
    return bytes(out), truth, offsets


def main(folder):
    os.makedirs(os.path.join(folder, "hls"), exist_ok=True)
    truth = {}
    for name, tagged in [("two-programs.ts", {1, 2}), ("one-tagged.ts", {1})]:
        data, tags, _ = stream(tagged)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        truth[name] = tags
    data, tags, offsets = stream({1, 2}, cuts=(6.75, 13.25))
    bounds = [0] + offsets + [len(data)]
    playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:7\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
    for index, (start, end) in enumerate(zip(bounds, bounds[1:])):
        with open(os.path.join(folder, "hls", f"seg{index}.ts"), "wb") as f:
            f.write(data[start:end])
        playlist += "#EXTINF:%.3f,\nseg%d.ts\n" % ([6.75, 6.5, 6.75][index], index)
    with open(os.path.join(folder, "hls", "index.m3u8"), "w") as f:
        f.write(playlist + "#EXT-X-ENDLIST\n")
    truth["hls/index.m3u8"] = tags
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "samples/mpts")
