#!/usr/bin/env python3
"""An independent reader of timed ID3 in MPEG-TS, sharing no code with id3-meter or libavformat.

Reads each TS file named (or the segments of a local HLS media playlist, as one stream, sub-ranges
of a file with EXT-X-BYTERANGE included), finds
the PIDs that the PMT declares with stream_type 0x15 (descriptor or not), reassembles their PES
packets, joins a tag continued in PES packets without a PTS, gives a PES without a PTS the PID's
previous PTS, and prints one JSON line per Nielsen PRIV frame: {"pts": ..., "payload": ...}.
For fMP4/CMAF (a playlist with EXT-X-MAP), reads the emsg boxes with an ID3 scheme: version 1
at presentation_time / timescale, version 0 at the following fragment's earliest tfdt (in the
track timescales from the init segment) plus presentation_time_delta / timescale.
Used by `make verify` to cross-check `id3-meter scan`.
"""
import json
import os
import struct
import sys


def packets(data):
    start = next(i for i in range(188) if data[i] == 0x47 and (i + 188 >= len(data) or data[i + 188] == 0x47))
    for offset in range(start, len(data) - 187, 188):
        yield data[offset:offset + 188]


def payload_of(packet):
    control = (packet[3] >> 4) & 3
    if not control & 1:
        return b""
    return packet[5 + packet[4]:] if control & 2 else packet[4:]


def pes_units(data):
    """Yields (pid, pts, payload) for each PES on a PID the PMT declares as stream_type 0x15."""
    pmt_pids, id3_pids, buffers = set(), set(), {}
    for packet in packets(data):
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        unit_start = bool(packet[1] & 0x40)
        payload = payload_of(packet)
        if pid == 0 and unit_start:
            section = payload[1 + payload[0]:]
            length = ((section[1] & 0x0F) << 8) | section[2]
            for i in range(8, 3 + length - 4, 4):
                if (section[i] << 8) | section[i + 1]:
                    pmt_pids.add(((section[i + 2] & 0x1F) << 8) | section[i + 3])
        elif pid in pmt_pids and unit_start:
            section = payload[1 + payload[0]:]
            length = ((section[1] & 0x0F) << 8) | section[2]
            i = 12 + (((section[10] & 0x0F) << 8) | section[11])
            while i < 3 + length - 4:
                es_pid = ((section[i + 1] & 0x1F) << 8) | section[i + 2]
                if section[i] == 0x15:
                    id3_pids.add(es_pid)
                i += 5 + (((section[i + 3] & 0x0F) << 8) | section[i + 4])
        elif pid in id3_pids:
            if unit_start:
                if pid in buffers:
                    yield (pid,) + finish(buffers.pop(pid))
                buffers[pid] = bytearray(payload)
            elif pid in buffers:
                buffers[pid] += payload
    for pid, buffer in buffers.items():
        yield (pid,) + finish(buffer)


def missing(payload):
    """Bytes the tags at the start of `payload` declare beyond its end."""
    offset = 0
    while payload[offset:offset + 3] == b"ID3" and offset + 10 <= len(payload):
        version, flags = payload[offset + 3], payload[offset + 5]
        offset += 10 + syncsafe(payload[offset + 6:offset + 10]) + (10 if version == 4 and flags & 0x10 else 0)
    return max(0, offset - len(payload))


def tags(data):
    """Yields (pts, bytes) per tag: PES payloads, joined where a tag continues in the next PES."""
    pending, last_pts = {}, {}
    for pid, pts, payload in pes_units(data):
        if pid in pending and not payload.startswith(b"ID3"):
            pending[pid][1].extend(payload)
        else:
            if pid in pending:
                yield pending.pop(pid)
            pending[pid] = (pts if pts is not None else last_pts.get(pid), bytearray(payload))
        if pts is not None:
            last_pts[pid] = pts
        if not missing(pending[pid][1]):
            yield pending.pop(pid)
    yield from pending.values()


def finish(pes):
    header_length = pes[8]
    pts = None
    if pes[7] & 0x80:
        p = pes[9:14]
        pts = ((p[0] >> 1) & 7) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1
    length = (pes[4] << 8) | pes[5]
    body = pes[9 + header_length:6 + length] if length else pes[9 + header_length:]
    return pts, bytes(body)


def syncsafe(b):
    return (b[0] << 21) | (b[1] << 14) | (b[2] << 7) | b[3]


def deunsync(b):
    return b.replace(b"\xff\x00", b"\xff")


def walk(body, start, syncsafe_sizes, unsync_frames):
    """The whole frames (id, flags, data) from `start`, and whether the chain adds up: nothing
    but zero padding after the last one."""
    frames, i = [], start
    while i + 10 <= len(body) and body[i] != 0:
        frame_id = body[i:i + 4]
        if not all(48 <= c <= 57 or 65 <= c <= 90 for c in frame_id):
            return frames, False
        size = syncsafe(body[i + 4:i + 8]) if syncsafe_sizes else int.from_bytes(body[i + 4:i + 8], "big")
        if i + 10 + size > len(body):
            return frames, False
        data = body[i + 10:i + 10 + size]
        if unsync_frames or body[i + 9] & 0x02:
            data = deunsync(data)
        frames.append((frame_id, body[i + 9], data))
        i += 10 + size
    return frames, not any(body[i:])


def readings(version, flags, body):
    """The ways writers mean a tag's body (start, sync-safe sizes, per-frame unsync): the
    spec's first, then the mistakes players read around."""
    starts = [0]
    if flags & 0x40 and len(body) >= 4:
        length = int.from_bytes(body[:4], "big") + 4 if version == 3 else syncsafe(body[:4])
        if 6 <= length <= len(body):
            starts = [length, 0]
    sizes = [version == 4, version != 4]
    whole = deunsync(body)
    for data, unsync_frames in ([(body, True), (whole, False)] if version == 4 and flags & 0x80 else [(body, False)]):
        for start in starts:
            for syncsafe_sizes in sizes:
                yield data, start, syncsafe_sizes, unsync_frames


def nielsen_owners(payload):
    """The Nielsen PRIV owners of the back-to-back tags in `payload`, read as a lenient player
    does: the first reading whose frame chain adds up, else the one with the most whole frames
    (a tag cut short, or with garbage after its frames, still gives its whole frames)."""
    offset = 0
    while offset + 10 <= len(payload) and payload[offset:offset + 3] == b"ID3":
        version, flags, size = payload[offset + 3], payload[offset + 5], syncsafe(payload[offset + 6:offset + 10])
        body = payload[offset + 10:offset + 10 + size]
        offset += 10 + size + (10 if version == 4 and flags & 0x10 else 0)
        if version == 3 and flags & 0x80:
            body = deunsync(body)
        best = None
        for data, start, syncsafe_sizes, unsync_frames in readings(version, flags, body):
            frames, fits = walk(data, start, syncsafe_sizes, unsync_frames)
            if fits:
                best = frames
                break
            if best is None or len(frames) > len(best):
                best = frames
        for frame_id, frame_flags, data in best or []:
            if version == 4 and frame_flags & 0x0C or version == 3 and frame_flags & 0xC0:
                continue  # compressed or encrypted: not read
            if version == 4 and frame_flags & 0x01:
                data = data[4:]
            if frame_id == b"PRIV":
                owner = data.split(b"\0", 1)[0].decode("latin-1")
                if owner.startswith("www.nielsen.com"):
                    yield owner


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[start + 8:start + 16])[0], 16
        elif size == 0:
            size = end - start
        if size < header or start + size > end:
            return
        yield kind.decode("latin-1"), start + header, start + size
        start += size


def child(data, start, end, kind):
    return next(((s, e) for k, s, e in boxes(data, start, end) if k == kind), None)


def timescales(init):
    scales = {}
    for kind, start, end in boxes(init):
        if kind != "moov":
            continue
        for kind2, s2, e2 in boxes(init, start, end):
            if kind2 != "trak":
                continue
            tkhd, mdia = child(init, s2, e2, "tkhd"), child(init, s2, e2, "mdia")
            mdhd = child(init, mdia[0], mdia[1], "mdhd")
            skip = 20 if init[tkhd[0]] == 1 else 12
            track = struct.unpack(">I", init[tkhd[0] + skip:tkhd[0] + skip + 4])[0]
            skip = 20 if init[mdhd[0]] == 1 else 12
            scales[track] = struct.unpack(">I", init[mdhd[0] + skip:mdhd[0] + skip + 4])[0]
    return scales


def emsg_tags(segment, scales):
    """Yields (pts, payload) for each emsg with an ID3 scheme."""
    top = list(boxes(segment))
    starts = {}
    for index, (kind, start, end) in enumerate(top):
        if kind == "moof":
            times = []
            for kind2, s2, e2 in boxes(segment, start, end):
                if kind2 == "traf":
                    tfhd, tfdt = child(segment, s2, e2, "tfhd"), child(segment, s2, e2, "tfdt")
                    track = struct.unpack(">I", segment[tfhd[0] + 4:tfhd[0] + 8])[0]
                    wide = segment[tfdt[0]] == 1
                    base = struct.unpack(">Q" if wide else ">I", segment[tfdt[0] + 4:tfdt[0] + (12 if wide else 8)])[0]
                    times.append(base * 90000 // scales[track])
            starts[index] = min(times)
    for index, (kind, start, end) in enumerate(top):
        if kind != "emsg":
            continue
        version, body = segment[start], segment[start + 4:end]
        if version == 0:
            scheme, value, rest = body.split(b"\0", 2)
            scale, delta = struct.unpack(">II", rest[:8])
            following = [i for i in sorted(starts) if i > index] or sorted(starts)[-1:]
            pts, data = starts[following[0]] + delta * 90000 // scale, rest[16:]
        else:
            scale, time = struct.unpack(">IQ", body[:12])
            scheme, value, data = body[20:].split(b"\0", 2)
            pts = time * 90000 // scale
        if scheme in (b"https://aomedia.org/emsg/ID3", b"https://developer.apple.com/streaming/emsg-id3", b"www.nielsen.com:id3:v1"):
            yield pts % (1 << 33), data


def byte_range(text, following):
    """RFC 8216 4.3.2.2: "<n>[@<o>]"; without o, the range follows the previous one of the resource."""
    length, _, offset = text.partition("@")
    return (int(offset) if offset else following, int(length))


def files(argument):
    """The pieces to read, (path, offset, length or None for all), and the init section's piece."""
    if argument.endswith(".m3u8"):
        folder = os.path.dirname(argument)
        init = None
        pieces, ends, pending = [], {}, None
        with open(argument) as playlist:
            for line in map(str.strip, playlist):
                if line.startswith("#EXT-X-MAP:"):
                    path = os.path.join(folder, line.split('URI="', 1)[1].split('"', 1)[0])
                    init = (path, 0, None)
                    if 'BYTERANGE="' in line:
                        init = (path,) + byte_range(line.split('BYTERANGE="', 1)[1].split('"', 1)[0], 0)
                elif line.startswith("#EXT-X-BYTERANGE:"):
                    pending = line.split(":", 1)[1]
                elif line and not line.startswith("#"):
                    path = os.path.join(folder, line)
                    if pending:
                        offset, length = byte_range(pending, ends.get(path))
                        ends[path] = offset + length
                        pieces.append((path, offset, length))
                        pending = None
                    else:
                        pieces.append((path, 0, None))
        return pieces, init
    return [(argument, 0, None)], None


def read(piece):
    path, offset, length = piece
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read() if length is None else f.read(length)


for argument in sys.argv[1:]:
    pieces, init = files(argument)
    if init:
        scales = timescales(read(init))
        found = [tag for piece in pieces for tag in emsg_tags(read(piece), scales)]
    else:
        found = tags(b"".join(read(piece) for piece in pieces))
    for pts, payload in found:
        for owner in nielsen_owners(bytes(payload)):
            print(json.dumps({"pts": pts, "payload": owner}))
