#!/usr/bin/env python3
"""Streams written to the rules of Nielsen's ID3 Tag Validator (user guide 1.8F), each clean or
with one planted defect, and the ground truth: samples/validator/NAME.ts and truth.json, which
says for each file what the Validator would find (checks that fail, findings with their PTS).
Shares no code with id3-meter: the TS comes from scripts/ts_writer.py, the tags are built here.
Usage: validator_samples.py FOLDER"""
import json, os, struct, sys

sys.path.insert(0, os.path.dirname(__file__))
from ts_writer import Writer, crc32  # noqa: E402

NULL_CID = "X100zdCIGeIlgZnkYj6UvQ=="
PC_CID = "R8WHe7pEBeqBhu8jTeXydg=="
FD_CID = "Q2xlYW5GRENJRGZvclRlc3Q="
START = 900_000  # 10 s, in 90 kHz ticks


def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def owner(index, pc_cid=PC_CID, fd_cid=FD_CID, pc_offset=None, fd_offset=None, seconds=0.0):
    """A 249-character Nielsen owner string; offsets advance with the tag's time by default."""
    watermark = ("W%07d" % index).ljust(168, "w")
    pc = pc_offset if pc_offset is not None else 36_000 + int(seconds)
    fd = fd_offset if fd_offset is not None else 36_000 + int(seconds)
    text = f"www.nielsen.com/{pc_cid}/{fd_cid}/{watermark}/{pc:05d}/{fd:05d}/00"
    assert len(text) == 249, len(text)
    return text


def info_owner(index):
    return owner(index, NULL_CID, NULL_CID, 0, 0)


def id3(owner_text, private=b"A"):
    """ID3v2.4 with one PRIV frame: 271 bytes when the private data is the one byte A."""
    frame_data = owner_text.encode() + b"\x00" + private
    frame = b"PRIV" + syncsafe(len(frame_data)) + b"\x00\x00" + frame_data
    return b"ID3\x04\x00\x00" + syncsafe(len(frame)) + frame


def pes_without_pts(writer, pid, payload):
    pes = b"\x00\x00\x01\xBD" + struct.pack(">H", len(payload) + 3) + b"\x80\x00\x00" + payload
    return [writer.packet(pid, offset == 0, pes[offset:offset + 184]) for offset in range(0, len(pes), 184)]


def pes_with_pts(writer, pid, pts, payload, stream_id=0xBD):
    field = bytes([0x21 | ((pts >> 29) & 0xE), (pts >> 22) & 0xFF, ((pts >> 14) & 0xFE) | 1, (pts >> 7) & 0xFF, ((pts << 1) & 0xFE) | 1])
    pes = bytes([0, 0, 1, stream_id]) + struct.pack(">H", len(payload) + 8) + b"\x80\x80\x05" + field + payload
    return [writer.packet(pid, offset == 0, pes[offset:offset + 184]) for offset in range(0, len(pes), 184)]


AUDIO_PID = 0x101
# One ADTS frame header (AAC LC, 48 kHz, mono) and a few bytes: enough to be audio to a demuxer.
AUDIO_FRAME = bytes([0xFF, 0xF1, 0x4C, 0x40, 0x01, 0x7F, 0xFC]) + bytes(4)


def tables(writer, pids, descriptor=True):
    """PAT and a PMT declaring AAC audio and `pids` as timed-ID3 streams (stream_type 0x15)."""
    pat = bytes([0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xF0, 0x00])
    meta = bytes([0x26, 0x0D, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x0F]) if descriptor else b""
    pmt = bytearray([0x02, 0xB0, 0, 0, 1, 0xC1, 0, 0, 0xE0 | (AUDIO_PID >> 8), AUDIO_PID & 0xFF, 0xF0, 0x00,
                     0x0F, 0xE0 | (AUDIO_PID >> 8), AUDIO_PID & 0xFF, 0xF0, 0x00])
    for pid in pids:
        pmt += bytes([0x15, 0xE0 | (pid >> 8), pid & 0xFF, 0xF0, len(meta)]) + meta
    pmt[2] = len(pmt) - 3 + 4
    return writer.section(0, pat) + writer.section(0x1000, bytes(pmt))


def stream(events, pids=(0x102,), descriptor=True, audio_until=None, audio_shift=0.0):
    """TS bytes of `events`: (seconds, pid, tag bytes, has PTS), tables before every tag, and an
    audio PES every second from 0 s to `audio_until` (10 s past the last event by default), its
    PTS `audio_shift` seconds off the time it is muxed at."""
    writer = Writer()
    out = bytearray(tables(writer, list(pids), descriptor))
    end = audio_until if audio_until is not None else max(e[0] for e in events) + 10
    audio = [(float(t), AUDIO_PID, None, True) for t in range(0, int(end) + 1)]
    for seconds, pid, tag, has_pts in sorted(events + audio, key=lambda e: (e[0], e[1])):
        if tag is None:
            out += b"".join(pes_with_pts(writer, pid, pts(seconds + audio_shift), AUDIO_FRAME, stream_id=0xC0))
            continue
        out += tables(writer, list(pids), descriptor)
        out += b"".join(pes_with_pts(writer, pid, pts(seconds), tag) if has_pts else pes_without_pts(writer, pid, tag))
    return bytes(out)


def box(kind, body):
    return struct.pack(">I", 8 + len(body)) + kind + body


def emsg(seconds, tag, scheme="www.nielsen.com:id3:v1", value="1", event_id=0):
    """An emsg box, version 1 (ISO/IEC 23009-1 5.10.3.3): times in a 90 kHz timescale."""
    body = bytes([1, 0, 0, 0]) + struct.pack(">IQII", 90_000, pts(seconds), 0xFFFFFFFF, event_id)
    return box(b"emsg", body + scheme.encode() + b"\x00" + value.encode() + b"\x00" + tag)


def fragments(events):
    """A CMAF-style segment: styp, then each (seconds, tag, value) as an emsg before its
    fragment's empty moof and mdat, as packagers interleave them."""
    out = box(b"styp", b"cmfs" + bytes(4) + b"cmfscmf2")
    for index, (seconds, tag, value) in enumerate(events):
        out += emsg(seconds, tag, value=value, event_id=index)
        out += box(b"moof", box(b"mfhd", bytes(4) + struct.pack(">I", index + 1))) + box(b"mdat", b"")
    return out


def pts(seconds):
    return START + round(seconds * 90_000)


def data_tags(times, pid=0x102, **kwargs):
    return [(t, pid, id3(owner(i, seconds=t, **kwargs)), True) for i, t in enumerate(times)]


def main(folder):
    os.makedirs(folder, exist_ok=True)
    truth = {}

    def write(name, events, failing, findings, **kwargs):
        with open(os.path.join(folder, name + ".ts"), "wb") as file:
            file.write(stream(events, **kwargs))
        truth[name] = {"failing": sorted(failing), "findings": findings}

    every10 = [10.0 * i for i in range(12)]
    # Twelve DATA tags 10 s apart, INFO tags 0.1 s after two of them: what Nielsen streams look like.
    write("clean", data_tags(every10) + [(20.1, 0x102, id3(info_owner(100)), True), (80.1, 0x102, id3(info_owner(101)), True)],
          [], {})
    # One DATA tag 15 s after the one before: one tag-duration error, tolerated (7).
    spaced = [t if t < 60 else t + 5 for t in every10]
    write("one_long_spacing", data_tags(spaced), [], {"tag_duration": [pts(65.0)]})
    # DATA tags 30 s apart: past the 9 s the Validator allows between a 10 s tag's end and the next.
    write("time_gap", data_tags([0, 10, 20, 50, 60, 70]), [], {"tag_duration": [pts(50.0)], "time_gap": [pts(50.0)]})
    # Two timed-ID3 PIDs, each clean, a quarter of a second apart: judged apart, nothing found.
    write("two_pids", data_tags(every10) + data_tags([t + 0.25 for t in every10], pid=0x103), [], {}, pids=(0x102, 0x103))
    # The PMT without the metadata descriptor: found once, and it fails.
    write("no_descriptor", data_tags(every10), ["pmt_descriptor"], {"pmt_descriptor": [pts(0.0)]}, descriptor=False)
    # One metadata PES without a PTS: found once (tolerated: 4), and no 0 s spacing made of it.
    events = data_tags(every10)
    events[5] = (50.0, 0x102, events[5][2], False)
    write("pes_without_pts", events, [], {"metadata_pes_pts": [pts(40.0)]})
    # A null PC CID with a non-zero offset on one DATA tag (-55; tolerated: 32).
    events = data_tags(every10)
    events[4] = (40.0, 0x102, id3(owner(4, pc_cid=NULL_CID, seconds=40.0)), True)
    write("null_cid_offset", events, [], {"cid_ts_offset": [pts(40.0)]})
    # A PRIV frame without its private byte A (-3): a tag-format error, which fails.
    events = data_tags(every10)
    events[3] = (30.0, 0x102, id3(owner(3, seconds=30.0), private=b""), True)
    write("no_private_byte", events, ["tag_format"], {"tag_format": [pts(30.0)]})
    # Placeholder PC CIDs (with offset 0) for 40 s: past the SDK's 10-20 s.
    events = data_tags(every10)
    for i in range(3, 8):
        events[i] = (10.0 * i, 0x102, id3(owner(i, pc_cid=NULL_CID, pc_offset=0, seconds=10.0 * i)), True)
    write("placeholder_run", events, ["placeholder_run"], {"placeholder_run": [pts(30.0)]})
    # 400 s of DATA tags and no INFO tag: the Validator wants one within 310 s.
    long = [10.0 * i for i in range(41)]
    write("no_info_tags", data_tags(long), ["info_tag_count"], {"info_tag_interval": [pts(400.0)]})
    # The same with an INFO tag every 300 s: clean.
    write("info_every_300s", data_tags(long) + [(0.1, 0x102, id3(info_owner(200)), True), (300.1, 0x102, id3(info_owner(201)), True)],
          [], {})
    # The program's audio 30 s ahead of every tag: each tag is out of sync with it (test 22 flags
    # over 15 s, tolerates 7).
    write("tags_off_audio", data_tags(every10), ["tag_placement"], {"tag_placement": [pts(t) for t in every10]}, audio_shift=30.0)
    # 240 s of media whose tags stop at 110 s: the first to the last DATA tag is 130 s short, and
    # 12 DATA tags are fewer than one every 12 s (test 1).
    write("tags_stop_early", data_tags(every10), ["coverage", "data_tag_count"], {}, audio_until=240)
    # PC offsets that run 30 s for every 10 s of PTS (the SDK's clock is wrong): 11 tag-time
    # errors, past the 5 tolerated (test 23). The FD offsets, which advance with the PTS, are fine.
    write("pc_offset_drift", [(t, 0x102, id3(owner(i, pc_offset=36_000 + 3 * int(t), seconds=t)), True) for i, t in enumerate(every10)],
          ["tag_time"], {"tag_time": [pts(t) for t in every10[1:]]})
    # The same of the FD offsets alone: after 50 s they run backwards (6 errors, past the 5).
    write("fd_offset_drift", [(t, 0x102, id3(owner(i, fd_offset=36_000 + int(t if t <= 50 else 100 - t), seconds=t)), True)
                              for i, t in enumerate(every10)],
          ["tag_time"], {"tag_time": [pts(t) for t in every10[6:]]})
    # Nielsen's emsg scheme with a value other than 1 on one tag (fMP4): found once, and it fails.
    with open(os.path.join(folder, "emsg_value.m4s"), "wb") as file:
        file.write(fragments([(t, id3(owner(i, seconds=t)), "2" if i == 4 else "1") for i, t in enumerate(every10)]))
    truth["emsg_value"] = {"failing": ["emsg_value"], "findings": {"emsg_value": [pts(40.0)]}, "file": "emsg_value.m4s"}
    with open(os.path.join(folder, "truth.json"), "w") as file:
        json.dump(truth, file, indent=1, sort_keys=True)
        file.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
