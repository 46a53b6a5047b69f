#!/usr/bin/env python3
"""Sample-encrypted HLS (RFC 8216bis METHOD=SAMPLE-AES, Apple's "MPEG-2 Stream Encryption Format
for HTTP Live Streaming"), with Nielsen tags planted in the clear, and the ground truth:

  FOLDER/ts/      H.264 + AAC MPEG-TS (made by the ffmpeg CLI), re-muxed here: the video NAL
                  units (types 1 and 5) and the ADTS frames encrypted as the spec says, the
                  stream types 0xDB and 0xCF with their descriptors, a timed-ID3 PID left clear.
                  index.m3u8 names a FairPlay key (skd://) and an identity key.
  FOLDER/packed/  AAC packed audio: each segment's timestamp tag, then ADTS frames encrypted as
                  the spec says, Nielsen tags between them in the clear.
  FOLDER/fmp4-cbcs/, FOLDER/fmp4-cenc/  the ffmpeg CLI's fMP4 HLS (H.264 + AAC), encrypted here
                  as ISO/IEC 23001-7 says (encv/enca with sinf/tenc, pssh, senc/saiz/saio, the
                  trun offsets moved), ID3 in emsg v1 boxes in the clear; Widevine and
                  PlayReady key tags (and FairPlay for cbcs), METHOD=SAMPLE-AES / SAMPLE-AES-CTR.
  FOLDER/master.m3u8  the TS as a variant and the packed audio as its rendition, with an EXT-X-SESSION-KEY.
  FOLDER/mislabelled.m3u8  a segment encrypted whole (AES-128) under a SAMPLE-AES key tag:
                  its tags cannot be read, and a reader must say so.
  FOLDER/truth.json   every planted tag: segment, PTS (90 kHz), owner.

No key file is written: a reader of timed ID3 must never ask for one. Shares no code with
id3-meter (tags from validator_samples.py, packets from ts_writer.py).
Usage: protected_samples.py FOLDER"""
import base64, json, os, struct, subprocess, sys, tempfile

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

sys.path.insert(0, os.path.dirname(__file__))
from ts_writer import Writer  # noqa: E402
from validator_samples import id3, owner  # noqa: E402

KEY = bytes(range(16))
IV = bytes(range(16, 32))
VIDEO_PID, AUDIO_PID, ID3_PID, PMT_PID = 0x100, 0x101, 0x102, 0x1000
SEGMENT_SECONDS = 4
TAG_EVERY = 2.0  # seconds


def cbc(data):
    """AES-128-CBC of whole 16-byte blocks, the chain restarted with IV (as each NAL unit and ADTS frame is)."""
    assert len(data) % 16 == 0
    encryptor = Cipher(algorithms.AES(KEY), modes.CBC(IV)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def encrypt_adts_frame(frame):
    """SAMPLE-AES AAC: the ADTS header and 16 bytes after it clear, then whole blocks, the rest clear."""
    header = 7 if frame[1] & 1 else 9
    clear = header + 16
    blocks = (len(frame) - clear) // 16 * 16
    if blocks <= 0:
        return frame
    return frame[:clear] + cbc(frame[clear:clear + blocks]) + frame[clear + blocks:]


def adts_frames(data):
    frames, offset = [], 0
    while offset + 7 <= len(data):
        assert data[offset] == 0xFF and data[offset + 1] & 0xF0 == 0xF0, "not ADTS at %d" % offset
        length = ((data[offset + 3] & 3) << 11) | (data[offset + 4] << 3) | (data[offset + 5] >> 5)
        frames.append(data[offset:offset + length])
        offset += length
    return frames


def unescape(nal):
    out, zeros = bytearray(), 0
    for byte in nal:
        if zeros >= 2 and byte == 3:
            zeros = 0
            continue
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def escape(nal):
    out, zeros = bytearray(), 0
    for byte in nal:
        if zeros >= 2 and byte <= 3:
            out.append(3)
            zeros = 0
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def encrypt_nal(nal):
    """SAMPLE-AES H.264: slices (types 1 and 5) over 48 bytes; 32 bytes clear, then one block in ten
    encrypted (one chain per NAL unit), the last partial block clear; emulation prevention again."""
    if nal[0] & 0x1F not in (1, 5) or len(nal) <= 48:
        return nal
    raw = bytearray(unescape(nal))
    picked, offset = [], 32
    while len(raw) - offset > 16:
        picked.append(offset)
        offset += 16 + 144
    cipher = cbc(b"".join(bytes(raw[o:o + 16]) for o in picked))
    for index, o in enumerate(picked):
        raw[o:o + 16] = cipher[index * 16:(index + 1) * 16]
    return escape(bytes(raw))


def nal_units(data):
    """(start, end) of each NAL unit of an Annex B access unit; a four-byte start code's zero is not the NAL unit's."""
    starts, i = [], data.find(b"\x00\x00\x01")
    while i >= 0:
        starts.append(i + 3)
        i = data.find(b"\x00\x00\x01", i + 3)
    units = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 3 if index + 1 < len(starts) else len(data)
        while index + 1 < len(starts) and end > start and data[end - 1] == 0:
            end -= 1
        units.append((start, end))
    return units


def encrypt_annex_b(data):
    """Each NAL unit of an access unit encrypted, everything between them kept."""
    out, kept = bytearray(), 0
    for start, end in nal_units(data):
        out += data[kept:start] + encrypt_nal(data[start:end])
        kept = end
    return bytes(out + data[kept:])


def is_keyframe(data):
    return any(data[start] & 0x1F == 5 for start, end in nal_units(data) if end > start)


def read_pes(ts):
    """The PES packets of the video and audio PIDs, in mux order: (pid, pts, dts, payload)."""
    units, current = [], {}
    for offset in range(0, len(ts) - 187, 188):
        packet = ts[offset:offset + 188]
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        if pid not in (VIDEO_PID, AUDIO_PID) or not packet[3] & 0x10:
            continue
        start = 4 + (1 + packet[4] if packet[3] & 0x20 else 0)
        if packet[1] & 0x40:
            current[pid] = bytearray()
            units.append((pid, current[pid]))
        if pid in current:
            current[pid] += packet[start:]
    parsed = []
    for pid, pes in units:
        flags, header_length = pes[7], pes[8]
        pts = dts = read_timestamp(pes[9:14])
        if flags & 0x40:
            dts = read_timestamp(pes[14:19])
        parsed.append((pid, pts, dts, bytes(pes[9 + header_length:])))
    return parsed


def read_timestamp(b):
    return ((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1


def timestamp(prefix, value):
    return bytes([prefix | ((value >> 29) & 0xE) | 1, (value >> 22) & 0xFF, ((value >> 14) & 0xFE) | 1,
                  (value >> 7) & 0xFF, ((value << 1) & 0xFE) | 1])


def pes_packets(writer, pid, stream_id, pts, dts, payload):
    if dts is not None and dts != pts:
        header = b"\x80\xC0\x0A" + timestamp(0x30, pts) + timestamp(0x10, dts)
    else:
        header = b"\x80\x80\x05" + timestamp(0x20, pts)
    length = len(header) + len(payload)
    pes = bytes([0, 0, 1, stream_id]) + struct.pack(">H", length if length < 65536 and pid != VIDEO_PID else 0) + header + payload
    return [writer.packet(pid, offset == 0, pes[offset:offset + 184]) for offset in range(0, len(pes), 184)]


def tables(writer, audio_config):
    pat = bytes([0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xE0 | (PMT_PID >> 8), PMT_PID & 0xFF])
    # private_data_indicator descriptors (0x0F) name the encrypted formats; the audio's
    # registration descriptor (0x05, 'apad') carries its setup: type, priming, version, config.
    setup = b"zaac" + b"\x00\x00" + b"\x01" + bytes([len(audio_config)]) + audio_config
    video = bytes([0x0F, 4]) + b"zavc"
    audio = bytes([0x0F, 4]) + b"aacd" + bytes([0x05, 4 + len(setup)]) + b"apad" + setup
    meta = bytes([0x26, 0x0D, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x0F])
    pmt = bytearray([0x02, 0xB0, 0, 0, 1, 0xC1, 0, 0, 0xFF, 0xFF, 0xF0, 0x00])  # no PCR PID
    for stream_type, pid, descriptors in ((0xDB, VIDEO_PID, video), (0xCF, AUDIO_PID, audio), (0x15, ID3_PID, meta)):
        pmt += bytes([stream_type, 0xE0 | (pid >> 8), pid & 0xFF, 0xF0, len(descriptors)]) + descriptors
    pmt[2] = len(pmt) - 3 + 4
    return writer.section(0, pat) + writer.section(PMT_PID, bytes(pmt))


def audio_specific_config(frame):
    profile = (frame[2] >> 6) + 1
    frequency = (frame[2] >> 2) & 0xF
    channels = ((frame[2] & 1) << 2) | (frame[3] >> 6)
    return bytes([(profile << 3) | (frequency >> 1), ((frequency & 1) << 7) | (channels << 3)])


def ffmpeg(arguments, output):
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + arguments + [output], check=True)


def transport_stream(work, folder, truth):
    source = os.path.join(work, "clear.ts")
    ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x90:rate=30", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
            "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-bf", "0", "-threads", "1",
            "-c:a", "aac", "-b:a", "32k", "-ac", "1", "-f", "mpegts"], source)
    units = read_pes(open(source, "rb").read())
    first = min(pts for pid, pts, _, _ in units if pid == VIDEO_PID)
    config = audio_specific_config(next(payload for pid, _, _, payload in units if pid == AUDIO_PID))
    # Tags every TAG_EVERY seconds from half a second in, each muxed before the first unit due after it.
    end = max(pts for _, pts, _, _ in units)
    tag_times = [first + round((0.5 + TAG_EVERY * i) * 90_000) for i in range(int((end - first) / 90_000 / TAG_EVERY))]
    writer = Writer()
    segments, current = [], None
    pending = list(tag_times)
    for pid, pts, dts, payload in units:
        if pid == VIDEO_PID and is_keyframe(payload) and (current is None or dts - current["start"] >= SEGMENT_SECONDS * 90_000):
            current = {"start": dts, "bytes": bytearray(tables(writer, config)), "name": "seg%d.ts" % len(segments)}
            segments.append(current)
        if current is None:
            continue
        while pending and pending[0] <= (dts if pid == VIDEO_PID else pts):
            tag_pts = pending.pop(0)
            text = owner(len(truth), seconds=(tag_pts - first) / 90_000)
            current["bytes"] += b"".join(pes_packets(writer, ID3_PID, 0xBD, tag_pts, None, id3(text)))
            truth.append({"playlist": "ts/index.m3u8", "segment": current["name"], "pts": tag_pts, "owner": text})
        if pid == VIDEO_PID:
            current["bytes"] += b"".join(pes_packets(writer, pid, 0xE0, pts, dts, encrypt_annex_b(payload)))
        else:
            frames = adts_frames(payload)
            current["bytes"] += b"".join(pes_packets(writer, pid, 0xC0, pts, None, b"".join(map(encrypt_adts_frame, frames))))
    os.makedirs(os.path.join(folder, "ts"), exist_ok=True)
    durations = []
    for index, segment in enumerate(segments):
        with open(os.path.join(folder, "ts", segment["name"]), "wb") as f:
            f.write(segment["bytes"])
        following = segments[index + 1]["start"] if index + 1 < len(segments) else end
        durations.append((following - segment["start"]) / 90_000)
    keys = ['#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://id3-meter-sample",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"',
            '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="keys/ts.key",IV=0x%s' % IV.hex()]
    playlist(os.path.join(folder, "ts", "index.m3u8"), keys, [(s["name"], d) for s, d in zip(segments, durations)])
    return segments


def playlist(path, keys, segments, version=5):
    lines = ["#EXTM3U", "#EXT-X-VERSION:%d" % version, "#EXT-X-TARGETDURATION:%d" % max(round(d + 0.5) for _, d in segments),
             "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD"] + keys
    for name, duration in segments:
        lines += ["#EXTINF:%.3f," % duration, name]
    with open(path, "w") as f:
        f.write("\n".join(lines + ["#EXT-X-ENDLIST", ""]))


def transport_stream_timestamp(pts):
    """Packed audio's first ID3 tag: PRIV com.apple.streaming.transportStreamTimestamp, 33 bits in 8 bytes."""
    data = b"com.apple.streaming.transportStreamTimestamp\x00" + struct.pack(">Q", pts)
    frame = b"PRIV" + struct.pack(">I", len(data)) + b"\x00\x00" + data
    size = len(frame)
    return b"ID3\x04\x00\x00" + bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F]) + frame


def packed_audio(work, folder, truth):
    source = os.path.join(work, "tone.aac")
    ffmpeg(["-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000", "-t", "12", "-ac", "1", "-c:a", "aac", "-b:a", "64k",
            "-f", "adts"], source)
    frames = adts_frames(open(source, "rb").read())
    per_segment = 188  # 1024 samples a frame at 48 kHz: 1920 ticks of 90 kHz, 4.01 s a segment
    start = 900_000
    os.makedirs(os.path.join(folder, "packed"), exist_ok=True)
    listed = []
    for index, first in enumerate(range(0, len(frames), per_segment)):
        name = "seg%d.aac" % index
        segment_pts = start + first * 1920
        out = bytearray(transport_stream_timestamp(segment_pts))
        chunk = frames[first:first + per_segment]
        for number, frame in enumerate(chunk):
            # Tags before the first frame and half way: their time is that of the frame after them.
            if number in (0, per_segment // 2):
                tag_pts = segment_pts + number * 1920
                text = owner(len(truth), seconds=(tag_pts - start) / 90_000)
                out += id3(text)
                truth.append({"playlist": "packed/index.m3u8", "segment": name, "pts": tag_pts, "owner": text})
            out += encrypt_adts_frame(frame)
        with open(os.path.join(folder, "packed", name), "wb") as f:
            f.write(out)
        listed.append((name, len(chunk) * 1024 / 48_000))
    playlist(os.path.join(folder, "packed", "index.m3u8"), ['#EXT-X-KEY:METHOD=SAMPLE-AES,URI="keys/packed.key",IV=0x%s' % IV.hex()],
             listed)


# ---- fMP4 (ISO/IEC 23001-7 common encryption) ----

WIDEVINE = bytes.fromhex("edef8ba979d64acea3c827dcd51d21ed")
PLAYREADY = bytes.fromhex("9a04f07998404286ab92e65be0885f95")
KID = bytes(range(0xA0, 0xB0))
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"mvex", b"moof", b"traf", b"dinf", b"edts"}
# Bytes before a sample entry's child boxes (ISO/IEC 14496-12 VisualSampleEntry, AudioSampleEntry v0).
ENTRY_FIELDS = {b"avc1": 78, b"mp4a": 28}


class Box:
    """A box as type, the bytes before its children (or all its content) and its children."""
    def __init__(self, kind, head=b"", children=None):
        self.kind, self.head, self.children = kind, head, children

    def find(self, kind):
        return next((child for child in self.children or [] if child.kind == kind), None)

    def bytes(self):
        content = self.head + b"".join(child.bytes() for child in self.children or [])
        return struct.pack(">I", 8 + len(content)) + self.kind + content


def parse_boxes(data, kind=None):
    boxes, offset = [], 0
    while offset + 8 <= len(data):
        size, box_kind = struct.unpack(">I4s", data[offset:offset + 8])
        assert size >= 8, "box %r of size %d" % (box_kind, size)
        boxes.append(parse_box(box_kind, data[offset + 8:offset + size]))
        offset += size
    return boxes


def parse_box(kind, content):
    if kind in CONTAINERS:
        return Box(kind, b"", parse_boxes(content))
    if kind == b"stsd":
        return Box(kind, content[:8], parse_boxes(content[8:]))
    if kind in ENTRY_FIELDS:
        fields = ENTRY_FIELDS[kind]
        return Box(kind, content[:fields], parse_boxes(content[fields:]))
    return Box(kind, content)


def full_box(kind, version, flags, body):
    return Box(kind, bytes([version]) + flags.to_bytes(3, "big") + body)


def tenc(pattern, constant_iv):
    """Version 1 (pattern fields); a constant IV (cbcs) or an 8-byte IV in each sample (cenc)."""
    if constant_iv:
        body = bytes([0, pattern, 1, 0]) + KID + bytes([16]) + IV
    else:
        body = bytes([0, 0, 1, 8]) + KID
    return full_box(b"tenc", 1, 0, body)


def protect_entry(entry, scheme, pattern):
    """avc1 -> encv, mp4a -> enca, with the sinf saying what it was and how it is encrypted."""
    sinf = Box(b"sinf", b"", [Box(b"frma", entry.kind), full_box(b"schm", 0, 0, scheme + struct.pack(">I", 0x10000)),
                                 Box(b"schi", b"", [tenc(pattern, scheme == b"cbcs")])])
    protected = b"encv" if entry.kind == b"avc1" else b"enca"
    return Box(protected, entry.head, entry.children + [sinf])


def pssh_boxes():
    widevine = b"\x12\x10" + KID + b"\x48\xe3\xdc\x95\x9b\x06"  # key_id, protection_scheme 'cbcs'
    header = ('<WRMHEADER xmlns="http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader" version="4.3.0.0">'
              '<DATA><PROTECTINFO><KIDS><KID VALUE="oKGio6SlpqeoqaqrrK2urw==" ALGID="AESCBC"/></KIDS></PROTECTINFO>'
              '</DATA></WRMHEADER>').encode("utf-16-le")
    record = struct.pack("<HH", 1, len(header)) + header
    playready = struct.pack("<IH", 6 + len(record), 1) + record
    return [full_box(b"pssh", 0, 0, system + struct.pack(">I", len(data)) + data)
            for system, data in ((WIDEVINE, widevine), (PLAYREADY, playready))]


def cbcs_pattern(data):
    """One block in ten, from the first; a chain per subsample from the constant IV."""
    picked = [o for o in range(0, len(data) - 15, 160)]
    cipher = cbc(b"".join(data[o:o + 16] for o in picked))
    out = bytearray(data)
    for index, o in enumerate(picked):
        out[o:o + 16] = cipher[index * 16:(index + 1) * 16]
    return bytes(out)


def ctr(data, iv8, offset):
    """AES-CTR from the sample's 8-byte IV, the counter running on through the sample's subsamples."""
    counter = iv8 + (offset // 16).to_bytes(8, "big")
    encryptor = Cipher(algorithms.AES(KEY), modes.CTR(counter)).encryptor()
    skip = offset % 16
    return (encryptor.update(bytes(skip) + data) + encryptor.finalize())[skip:]


def subsamples(sample):
    """(clear, protected) pairs of an AVC sample: slice NAL units keep their 4-byte length and 32
    bytes clear, the rest protected in whole blocks; other NAL units and remainders clear."""
    pairs, clear, offset = [], 0, 0
    while offset < len(sample):
        length = struct.unpack(">I", sample[offset:offset + 4])[0]
        nal_type = sample[offset + 4] & 0x1F
        protected = (length - 32) // 16 * 16 if nal_type in (1, 5) and length > 48 else 0
        clear += 4 + length - protected
        if protected:
            while clear > 0xFFFF:
                pairs.append((0xFFFF, 0))
                clear -= 0xFFFF
            pairs.append((clear, protected))
            clear = 0
        offset += 4 + length
    if clear or not pairs:
        pairs.append((clear, 0))
    return pairs


def encrypt_sample(sample, video, scheme, sample_iv):
    """The sample encrypted and its subsample pairs (`None`: the whole sample, for audio; CTR to its
    last byte, CBC to its last whole block)."""
    if not video and scheme == b"cenc":
        return ctr(sample, sample_iv, 0), None
    if not video:
        whole = len(sample) // 16 * 16
        return cbc(sample[:whole]) + sample[whole:], None
    pairs, out, offset, counted = subsamples(sample), bytearray(), 0, 0
    for clear, protected in pairs:
        out += sample[offset:offset + clear]
        part = sample[offset + clear:offset + clear + protected]
        out += cbcs_pattern(part) if scheme == b"cbcs" else ctr(part, sample_iv, counted)
        counted += protected
        offset += clear + protected
    return bytes(out), pairs


def trun_samples(trun, tfhd):
    """The data offset and (size) of each sample of a `trun` (ffmpeg's: sizes in the run or tfhd's default)."""
    flags = int.from_bytes(trun.head[1:4], "big")
    count = struct.unpack(">I", trun.head[4:8])[0]
    offset, position = 8, None
    if flags & 0x1:
        position = struct.unpack(">i", trun.head[8:12])[0]
        offset += 4
    if flags & 0x4:
        offset += 4
    tfhd_flags = int.from_bytes(tfhd.head[1:4], "big")
    default_size, field = None, 8 + (8 if tfhd_flags & 0x1 else 0) + (4 if tfhd_flags & 0x2 else 0) + (4 if tfhd_flags & 0x8 else 0)
    if tfhd_flags & 0x10:
        default_size = struct.unpack(">I", tfhd.head[field:field + 4])[0]
    sizes = []
    for _ in range(count):
        if flags & 0x100:
            offset += 4
        if flags & 0x200:
            sizes.append(struct.unpack(">I", trun.head[offset:offset + 4])[0])
            offset += 4
        else:
            sizes.append(default_size)
        offset += (4 if flags & 0x400 else 0) + (4 if flags & 0x800 else 0)
    return position, sizes


def emsg_v1(presentation, message_id, scheme, value, data):
    body = struct.pack(">IQII", 90_000, presentation, 0, message_id) + scheme + b"\x00" + value + b"\x00" + data
    return full_box(b"emsg", 1, 0, body).bytes()


def encrypt_fragment(data, scheme, video_track, tags, ivs):
    """A segment (styp, sidx..., moof, mdat) with its samples encrypted, senc/saiz/saio in each
    traf, `tags` as emsg boxes before the moof, the offsets that moved set again."""
    boxes, offset, layout = [], 0, []
    while offset < len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        layout.append((kind, offset, size))
        offset += size
    moof_start = next(o for k, o, _ in layout if k == b"moof")
    moof = parse_box(b"moof", data[moof_start + 8:moof_start + dict((k, s) for k, _, s in layout)[b"moof"]])
    out = bytearray(data)
    for traf in (box for box in moof.children if box.kind == b"traf"):
        tfhd, trun = traf.find(b"tfhd"), traf.find(b"trun")
        assert int.from_bytes(tfhd.head[1:4], "big") & 0x20000, "ffmpeg's fragments are default-base-is-moof"
        video = struct.unpack(">I", tfhd.head[4:8])[0] == video_track
        position, sizes = trun_samples(trun, tfhd)
        sample_start, entries, info_sizes = moof_start + position, b"", []
        for size in sizes:
            sample_iv = next(ivs)
            encrypted, pairs = encrypt_sample(data[sample_start:sample_start + size], video, scheme, sample_iv)
            out[sample_start:sample_start + size] = encrypted
            entry = (b"" if scheme == b"cbcs" else sample_iv)
            if pairs is not None:
                entry += struct.pack(">H", len(pairs)) + b"".join(struct.pack(">HI", c, p) for c, p in pairs)
            entries += entry
            info_sizes.append(len(entry))
            sample_start += size
        senc = full_box(b"senc", 0, 2 if video else 0, struct.pack(">I", len(sizes)) + entries)
        if entries:
            traf.children += [full_box(b"saiz", 0, 0, bytes([0]) + struct.pack(">I", len(sizes)) + bytes(info_sizes)),
                              full_box(b"saio", 0, 0, struct.pack(">II", 1, 0))]
        traf.children.append(senc)
    old_size = dict((k, s) for k, _, s in layout)[b"moof"]
    growth = len(moof.bytes()) - old_size
    # The samples moved by what the moof grew; saio points at each senc's first entry from the moof's start.
    for traf in (box for box in moof.children if box.kind == b"traf"):
        trun = traf.find(b"trun")
        flags = int.from_bytes(trun.head[1:4], "big")
        if flags & 0x1:
            position = struct.unpack(">i", trun.head[8:12])[0] + growth
            trun.head = trun.head[:8] + struct.pack(">i", position) + trun.head[12:]
    cursor = 8
    for traf in moof.children:
        if traf.kind == b"traf":
            inner = cursor + 8
            for child in traf.children:
                if child.kind == b"senc":
                    senc_entries = inner + 8 + 4 + 4  # header, version/flags, sample_count
                    saio = traf.find(b"saio")
                    if saio is not None:
                        saio.head = saio.head[:8] + struct.pack(">I", senc_entries)
                inner += len(child.bytes())
        cursor += len(traf.bytes())
    serial = moof.bytes()
    assert len(serial) == old_size + growth
    emsgs = b"".join(tags)
    result = bytearray()
    for kind, start, size in layout:
        box = bytes(out[start:start + size])
        if kind == b"sidx":
            # Each reference spans the emsg boxes, the moof and the mdat: it grew by both.
            field = 20 + (4 if box[8] == 0 else 8)
            references = field + (4 if box[8] == 0 else 8) + 4
            for r in range(references, len(box), 12):
                size_field = struct.unpack(">I", box[r:r + 4])[0]
                grown = (size_field & 0x7FFFFFFF) + growth + len(emsgs)
                box = box[:r] + struct.pack(">I", (size_field & 0x80000000) | grown) + box[r + 4:]
        if kind == b"moof":
            result += emsgs + serial
        else:
            result += box
    return bytes(result)


def fragmented(work, folder, truth, scheme):
    """The ffmpeg CLI's fMP4 HLS (H.264 + AAC), encrypted here as `scheme` (cbcs or cenc)."""
    name = "fmp4-" + scheme.decode()
    source = os.path.join(work, name)
    os.makedirs(source, exist_ok=True)
    ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x90:rate=30", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
            "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-bf", "0", "-threads", "1",
            "-c:a", "aac", "-b:a", "32k", "-ac", "1", "-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "4",
            "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "init.mp4",
            "-hls_segment_filename", os.path.join(source, "seg%d.m4s")], os.path.join(source, "index.m3u8"))
    init = parse_boxes(open(os.path.join(source, "init.mp4"), "rb").read())
    moov = next(box for box in init if box.kind == b"moov")
    video_track, timescale = None, None
    for trak in (box for box in moov.children if box.kind == b"trak"):
        stsd = trak.find(b"mdia").find(b"minf").find(b"stbl").find(b"stsd")
        entry = stsd.children[0]
        if entry.kind == b"avc1":
            video_track = struct.unpack(">I", trak.find(b"tkhd").head[12:16])[0]
            mdhd = trak.find(b"mdia").find(b"mdhd").head
            timescale = struct.unpack(">I", mdhd[12:16])[0]
        stsd.children[0] = protect_entry(entry, scheme, 0x19 if entry.kind == b"avc1" else 0)
    moov.children += pssh_boxes()
    out_folder = os.path.join(folder, name)
    os.makedirs(out_folder, exist_ok=True)
    with open(os.path.join(out_folder, "init.mp4"), "wb") as f:
        f.write(b"".join(box.bytes() for box in init))
    names = sorted((n for n in os.listdir(source) if n.endswith(".m4s")), key=lambda n: int(n[3:-4]))
    starts = []
    for n in names:
        moof = next(box for box in parse_boxes(open(os.path.join(source, n), "rb").read()) if box.kind == b"moof")
        for traf in (box for box in moof.children if box.kind == b"traf"):
            if struct.unpack(">I", traf.find(b"tfhd").head[4:8])[0] == video_track:
                tfdt = traf.find(b"tfdt").head
                starts.append(int.from_bytes(tfdt[4:], "big"))
    ends = starts[1:] + [starts[-1] + 4 * timescale]
    ivs = (struct.pack(">Q", 0x1000 + i) for i in range(10 ** 6))
    schemes = [(b"https://aomedia.org/emsg/ID3", b""), (b"www.nielsen.com:id3:v1", b"1")]
    time, listed = 0.5, []
    for index, n in enumerate(names):
        tags = []
        while time * timescale < ends[index]:
            pts = round(time * 90_000)
            text = owner(len(truth), seconds=time)
            event_scheme, event_value = schemes[len(tags) % 2]
            tags.append(emsg_v1(pts, len(truth), event_scheme, event_value, id3(text)))
            truth.append({"playlist": name + "/index.m3u8", "segment": n, "pts": pts, "owner": text})
            time += TAG_EVERY
        data = open(os.path.join(source, n), "rb").read()
        with open(os.path.join(out_folder, n), "wb") as f:
            f.write(encrypt_fragment(data, scheme, video_track, tags, ivs))
        listed.append((n, (ends[index] - starts[index]) / timescale))
    method = "SAMPLE-AES" if scheme == b"cbcs" else "SAMPLE-AES-CTR"
    widevine, playready = (base64.b64encode(box.bytes()).decode() for box in pssh_boxes())
    keys = ['#EXT-X-KEY:METHOD=%s,URI="data:text/plain;base64,%s",KEYID=0x%s,KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",KEYFORMATVERSIONS="1"'
            % (method, widevine, KID.hex()),
            '#EXT-X-KEY:METHOD=%s,URI="data:text/plain;charset=UTF-16;base64,%s",KEYFORMAT="com.microsoft.playready",KEYFORMATVERSIONS="1"'
            % (method, playready)]
    if scheme == b"cbcs":
        keys.insert(0, '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://id3-meter-sample",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"')
    playlist(os.path.join(out_folder, "index.m3u8"), keys + ['#EXT-X-MAP:URI="init.mp4"'], listed, version=7)


def main(folder):
    os.makedirs(folder, exist_ok=True)
    truth = []
    with tempfile.TemporaryDirectory() as work:
        segments = transport_stream(work, folder, truth)
        packed_audio(work, folder, truth)
        fragmented(work, folder, truth, b"cbcs")
        fragmented(work, folder, truth, b"cenc")
    with open(os.path.join(folder, "master.m3u8"), "w") as f:
        f.write("\n".join([
            "#EXTM3U", "#EXT-X-VERSION:5",
            '#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://id3-meter-session",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"',
            '#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="keys/session.key",IV=0x%s' % IV.hex(),
            '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="main",DEFAULT=YES,URI="packed/index.m3u8"',
            '#EXT-X-STREAM-INF:BANDWIDTH=200000,CODECS="avc1.42c00d,mp4a.40.2",AUDIO="aac"', "ts/index.m3u8", ""]))
    # The first TS segment encrypted whole, as AES-128 would, but declared SAMPLE-AES.
    clear = bytes(segments[0]["bytes"])
    padded = clear + bytes([16 - len(clear) % 16]) * (16 - len(clear) % 16)
    with open(os.path.join(folder, "mislabelled.ts"), "wb") as f:
        f.write(cbc(padded))
    playlist(os.path.join(folder, "mislabelled.m3u8"), ['#EXT-X-KEY:METHOD=SAMPLE-AES,URI="keys/mislabelled.key",IV=0x%s' % IV.hex()],
             [("mislabelled.ts", 4.0), ("ts/seg1.ts", 4.0)])
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump({"key": KEY.hex(), "iv": IV.hex(), "tags": truth}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
