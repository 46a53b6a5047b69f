#!/usr/bin/env python3
"""Fills a collector database (its schema made by `id3-meter collect`) with what the collector
keeps for a line-up's month, as the report reads it: CHANNELS channels, one meter, a creditable
tag every 10 s (six a minute, at :05 to :55) and an INFO tag every 5 minutes, folded by minute
into `coverage` exactly as the collector folds deliveries (CoverageMinute); GAPS gaps a channel a
day (1 to 10 minutes without a tag, at seeded random times) each with its `no_tags` alert
records; `channels` rows. The 77.8 million delivery rows themselves are not written: the
report's queries never read them (CoverageReportTests asks SQLite's planner), and at about
700 bytes each they would take 50 GB.
Usage: coverage_month.py DB FIRST_DAY_UNIX DAYS CHANNELS GAPS; prints the number of gaps planted."""
import json
import random
import sqlite3
import sys

path, first, days, channels, gaps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
db = sqlite3.connect(path)
db.execute("PRAGMA synchronous = OFF")
random.seed(46)
planted = 0


def alert(channel, name, active, at):
    record = {"type": "alert", "sent_at": at, "channel": channel, "meter": "a", "alert": name, "active": active}
    return ("bench", "alert", at, channel, "a", None, None, json.dumps(record, sort_keys=True))


for number in range(1, channels + 1):
    channel = f"ch{number:03d}"
    holes, notable = set(), []
    for day in range(days):
        for _ in range(gaps):
            start = first // 60 + day * 1440 + random.randrange(0, 1430)
            length = random.randint(1, 10)
            holes.update(range(start, start + length))
            notable += [alert(channel, "no_tags", True, start * 60 + 25.0), alert(channel, "no_tags", False, (start + length) * 60 + 5.0)]
            planted += 1
    minutes = range(first // 60 - 1, first // 60 + days * 1440 + 1)

    def rows():
        for minute in minutes:
            if minute in holes:
                continue
            base = minute * 60
            info = 1 if minute % 5 == 0 else 0
            yield (channel, minute, "a", 6, info, 0, 0, base + 5.0, base + 55.0, None, None,
                   base + 7.0 if info else None, base + 7.0 if info else None)

    db.execute("BEGIN")
    db.executemany("INSERT INTO coverage (channel, minute, meter, creditable, info, placeholder, invalid, first_at, last_at, "
                   "hole_from, hole_to, info_first, info_last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
    db.executemany("INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", notable)
    db.execute("INSERT INTO channels (channel, first_at, last_at, deleted_at) VALUES (?, ?, ?, NULL)",
               (channel, first - 86400.0, first + days * 86400.0))
    db.execute("COMMIT")
db.close()
print(planted)
