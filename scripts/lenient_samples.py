#!/usr/bin/env python3
"""Writes samples/lenient/: one MPEG-TS file per way real writers get ID3 wrong, each beside the
ground truth of the frames a lenient reader delivers. The tags' frames are written by mutagen
(PyPI), an independent ID3 writer; this script then cuts, pads, garbles, re-sizes and
unsynchronises them as the other tools do, and wraps each in a timed-ID3 PES (scripts/ts_writer.py).
Usage: scripts/lenient_samples.py SAMPLES_FOLDER"""
import json, os, sys, tempfile, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ts_writer import Writer
from mutagen.id3 import ID3, PRIV, TXXX

NIELSEN = ("www.nielsen.com/X100zdCIGeIlgZnkYj6UvQ==/9lRNRnid9uU-VhYatS72Bg==/"
           "nwBa96-6k0Q_bbeYmEFhRCLG7FVo8COyDDKlAcgvbXr4HtGsOYvtxmMmw0XE6oKQb8DhVbtrUZ0ZwsyNpC5n8DpkVAbVgYUkcWZPZDOOTcOqpApRCcO"
           "tj2t3S0XyQ6n0b-EFOsWbk0D1OcwkD0XWjoTqcxGwgPa6E-8JTZc=/36001/36001/00")
PTS = 900_000


def mutagen_tag(version, frames):
    """The bytes mutagen writes for `frames` as ID3v2.`version`, without padding."""
    path = tempfile.mktemp()
    open(path, "wb").close()
    tag = ID3()
    for frame in frames:
        tag.add(frame)
    tag.save(path, v2_version=version, padding=lambda info: 0)
    data = open(path, "rb").read()
    os.unlink(path)
    return data


def syncsafe(value):
    return bytes([(value >> 21) & 0x7F, (value >> 14) & 0x7F, (value >> 7) & 0x7F, value & 0x7F])


def unsyncsafe(b):
    return (b[0] << 21) | (b[1] << 14) | (b[2] << 7) | b[3]


def frames_of(tag):
    """(id, flags, data) of each frame of a clean tag as mutagen wrote it."""
    version, body, out, i = tag[3], tag[10:], [], 0
    while i + 10 <= len(body) and body[i] != 0:
        size = unsyncsafe(body[i + 4:i + 8]) if version == 4 else int.from_bytes(body[i + 4:i + 8], "big")
        out.append((body[i:i + 4], body[i + 8:i + 10], body[i + 10:i + 10 + size]))
        i += 10 + size
    return out


def unsynchronise(data):
    out = bytearray()
    for index, byte in enumerate(data):
        out.append(byte)
        if byte == 0xFF and (index + 1 == len(data) or data[index + 1] >= 0xE0 or data[index + 1] == 0):
            out.append(0)
    return bytes(out)


def tag_bytes(version, flags, body, declared=None):
    return b"ID3" + bytes([version, 0, flags]) + syncsafe(len(body) if declared is None else declared) + body


def frame(frame_id, data, flags=b"\x00\x00", size_bytes=None, size=None):
    length = len(data) if size is None else size
    return frame_id + (size_bytes(length) if size_bytes else syncsafe(length)) + flags + data


def description(data):
    """A TXXX's description, in the frame's text encoding (ID3v2.4 section 4.2)."""
    encoding, text = data[0], data[1:]
    if encoding in (1, 2):
        end = next((i for i in range(0, len(text) - 1, 2) if text[i:i + 2] == b"\0\0"), len(text))
        return text[:end].decode("utf-16" if encoding == 1 else "utf-16-be")
    return text.split(b"\0", 1)[0].decode("latin-1" if encoding == 0 else "utf-8")


def truth(frames, version):
    records = []
    for frame_id, _, data in frames:
        record = {"id": frame_id.decode(), "pts": PTS, "version": version, "nielsen": False}
        if frame_id == b"PRIV":
            owner = data.split(b"\0", 1)[0].decode("latin-1")
            record["owner"], record["nielsen"] = owner, owner.startswith("www.nielsen.com")
        elif frame_id == b"TXXX":
            record["description"] = description(data)
        records.append(record)
    return records


base = [TXXX(encoding=3, desc="writer", text=["mutagen"]), PRIV(owner=NIELSEN, data=b"\x00"),
        PRIV(owner="com.example.sync", data=b"\xff\xe0\xff\x00\xff\xfb\xff")]
v24, v23 = mutagen_tag(4, base), mutagen_tag(3, base)
frames24, frames23 = frames_of(v24), frames_of(v23)
cases = {}

# A tag cut short: its declared size runs past the bytes there; the last frame is incomplete.
tail = mutagen_tag(4, base + [PRIV(owner="zzz.last", data=b"t" * 400)])  # mutagen writes the largest frame last
assert frames_of(tail)[-1][2].startswith(b"zzz.last"), "mutagen put the cut frame last"
cases["cut"] = (tail[:-30], truth(frames_of(tail)[:-1], 4))

# Bytes after the last frame that are neither padding nor a frame.
body = v24[10:] + b"\x01garbage after the last frame"
cases["garbage"] = (tag_bytes(4, 0, body), truth(frames24, 4))

# The extended-header flag set, and no extended header: the frames start at byte 10.
cases["extended-flag"] = (v23[:5] + bytes([0x40]) + v23[6:], truth(frames23, 3))

# ID3v2.4 unsynchronised as a whole, the v2.3 way: sizes before unsynchronisation, no frame flag.
body = unsynchronise(b"".join(frame(i, d) for i, _, d in frames24))
cases["v24-whole-unsync"] = (tag_bytes(4, 0x80, body), truth(frames24, 4))

# ID3v2.4 unsynchronised per frame, as the spec has it: sizes after, frame flag 0x02.
body = b"".join(frame(i, unsynchronise(d), flags=b"\x00\x02") for i, _, d in frames24)
cases["v24-frame-unsync"] = (tag_bytes(4, 0x80, body), truth(frames24, 4))

# ID3v2.3 written with sync-safe frame sizes (the Nielsen PRIV is over 127 bytes, so they differ).
body = b"".join(frame(i, d, size_bytes=syncsafe) for i, _, d in frames23)
cases["v23-syncsafe"] = (tag_bytes(3, 0, body), truth(frames23, 3))

# Frames that cannot be decoded, beside the Nielsen PRIV: compressed (zlib, with its data length
# indicator), encrypted (method byte), and one shorter than its data length indicator requires.
text = b"\x03compressed\x00value"
nielsen_frame = next(f for f in frames24 if f[2].startswith(b"www.nielsen.com"))
undecodable = [
    (b"TXXX", b"\x00\x09", syncsafe(len(text)) + zlib.compress(text)),
    nielsen_frame,
    (b"PRIV", b"\x00\x04", b"\x80" + b"encrypted bytes"),
    (b"TXXX", b"\x00\x01", b"\x00\x00"),
]
body = b"".join(frame(i, d, flags=f) for i, f, d in undecodable)
# Undecoded frames are listed by id only: what they hold is not known.
expected = [{"id": i.decode(), "pts": PTS, "version": 4, "nielsen": False} for i, _, _ in undecodable]
expected[1] = truth([nielsen_frame], 4)[0]
cases["undecodable"] = (tag_bytes(4, 0, body), expected)

out = os.path.join(sys.argv[1], "lenient")
os.makedirs(out, exist_ok=True)
for name, (tag, expected) in cases.items():
    writer = Writer()
    with open(os.path.join(out, f"{name}.ts"), "wb") as f:
        f.write(writer.tables() + b"".join(writer.pes_packets(PTS, tag)))
    with open(os.path.join(out, f"{name}.expected.jsonl"), "w") as f:
        f.writelines(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in expected)
