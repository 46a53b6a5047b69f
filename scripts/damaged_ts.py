#!/usr/bin/env python3
"""Writes to stdout about N MB (argv[1]) of MPEG-TS whose every timed-ID3 PES is damaged: every
other one loses its middle TS packet (a continuity error), the rest hold bytes that are no ID3
tag. For the hostile-input tests and table (scripts/hostile-table.py)."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ts_writer import Writer

writer = Writer()
block = writer.tables()
for index in range(2000):
    packets = writer.pes_packets(index * 9000, b"ID3" + bytes([4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F]) + b"\x01" * 300)
    if index % 2 == 0:
        packets.pop(1)
    block += b"".join(packets)
for _ in range(int(sys.argv[1]) * (1 << 20) // len(block)):
    sys.stdout.buffer.write(block)
