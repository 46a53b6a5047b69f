#!/usr/bin/env python3
"""Writes to stdout about N MB (argv[1]) of MPEG-TS whose every timed-ID3 PES is damaged: every
other one loses its middle TS packet (a continuity error), the rest hold bytes that are no ID3
tag. For the hostile-input table (scripts/hostile-table.py)."""
import struct, sys


def crc32(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


counters = {}


def packet(pid, start, payload):
    counter = counters.get(pid, 0)
    counters[pid] = (counter + 1) & 15
    flags = (0x40 if start else 0) | (pid >> 8)
    if len(payload) < 184:
        stuffing = 184 - len(payload)
        field = bytes([stuffing - 1]) + (b"\x00" + b"\xff" * (stuffing - 2) if stuffing > 1 else b"")
        return bytes([0x47, flags, pid & 0xFF, 0x30 | counter]) + field + payload
    return bytes([0x47, flags, pid & 0xFF, 0x10 | counter]) + payload


def section(pid, table):
    return packet(pid, True, b"\x00" + table + struct.pack(">I", crc32(table)))


pat = bytes([0, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, 0xF0, 0x00])
pmt = bytearray([0x02, 0xB0, 0, 0, 1, 0xC1, 0, 0, 0xE1, 0x02, 0xF0, 0x00, 0x15, 0xE1, 0x02, 0xF0, 0x00])
pmt[2] = len(pmt) - 3 + 4
block = section(0, pat) + section(0x1000, bytes(pmt))
for index in range(2000):
    pts = index * 9000
    field = bytes([0x21 | ((pts >> 29) & 0xE), (pts >> 22) & 0xFF, ((pts >> 14) & 0xFE) | 1, (pts >> 7) & 0xFF, ((pts << 1) & 0xFE) | 1])
    payload = b"ID3" + bytes([4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F]) + b"\x01" * 300
    pes = b"\x00\x00\x01\xBD" + struct.pack(">H", len(payload) + 8) + b"\x80\x80\x05" + field + payload
    packets = [packet(0x102, offset == 0, pes[offset:offset + 184]) for offset in range(0, len(pes), 184)]
    if index % 2 == 0:
        packets.pop(1)
    block += b"".join(packets)
for _ in range(int(sys.argv[1]) * (1 << 20) // len(block)):
    sys.stdout.buffer.write(block)
