#!/usr/bin/env python3
"""Concatenates MPEG-TS files into one continuous stream: continuity counters are renumbered
across the joins, as in one long recording (a plain `cat` would show a continuity error at
every join). Usage: ts_concat.py OUTPUT INPUT COPIES"""
import sys

output, source, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(source, "rb").read()
packets = [bytearray(data[i:i + 188]) for i in range(0, len(data) - 187, 188)]
counters = {}
with open(output, "wb") as out:
    for _ in range(copies):
        for packet in packets:
            pid = (packet[1] & 0x1F) << 8 | packet[2]
            if packet[3] & 0x10:  # only packets with a payload advance the counter
                counter = counters.get(pid, packet[3] & 0x0F)
                packet[3] = packet[3] & 0xF0 | counter
                counters[pid] = (counter + 1) & 0x0F
        out.write(b"".join(packets))
