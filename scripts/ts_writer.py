"""A minimal MPEG-TS writer for the sample scripts (ISO/IEC 13818-1): PAT, a PMT declaring one
timed-ID3 PID (stream_type 0x15), and PES packets on it. Shares no code with id3-meter."""
import struct

ID3_PID = 0x102
PMT_PID = 0x1000


def crc32(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


class Writer:
    def __init__(self):
        self.counters = {}

    def packet(self, pid, start, payload):
        """One TS packet; a short payload is padded with an adaptation field of stuffing."""
        counter = self.counters.get(pid, 0)
        self.counters[pid] = (counter + 1) & 15
        flags = (0x40 if start else 0) | (pid >> 8)
        if len(payload) < 184:
            stuffing = 184 - len(payload)
            field = bytes([stuffing - 1]) + (b"\x00" + b"\xff" * (stuffing - 2) if stuffing > 1 else b"")
            return bytes([0x47, flags, pid & 0xFF, 0x30 | counter]) + field + payload
        return bytes([0x47, flags, pid & 0xFF, 0x10 | counter]) + payload

    def section(self, pid, table):
        return self.packet(pid, True, b"\x00" + table + struct.pack(">I", crc32(table)))

    def tables(self):
        pat = bytes([0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xE0 | (PMT_PID >> 8), PMT_PID & 0xFF])
        # The timed-ID3 stream with its metadata_descriptor (0x26: format 'ID3 ', as Apple's spec has it).
        descriptor = bytes([0x26, 0x0D, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x0F])
        pmt = bytearray([0x02, 0xB0, 0, 0, 1, 0xC1, 0, 0, 0xE0 | (ID3_PID >> 8), ID3_PID & 0xFF, 0xF0, 0x00,
                         0x15, 0xE0 | (ID3_PID >> 8), ID3_PID & 0xFF, 0xF0, len(descriptor)]) + descriptor
        pmt[2] = len(pmt) - 3 + 4
        return self.section(0, pat) + self.section(PMT_PID, bytes(pmt))

    def pes_packets(self, pts, payload):
        """The TS packets of one private_stream_1 PES with a PTS, as a list."""
        field = bytes([0x21 | ((pts >> 29) & 0xE), (pts >> 22) & 0xFF, ((pts >> 14) & 0xFE) | 1, (pts >> 7) & 0xFF, ((pts << 1) & 0xFE) | 1])
        pes = b"\x00\x00\x01\xBD" + struct.pack(">H", len(payload) + 8) + b"\x80\x80\x05" + field + payload
        return [self.packet(ID3_PID, offset == 0, pes[offset:offset + 184]) for offset in range(0, len(pes), 184)]
