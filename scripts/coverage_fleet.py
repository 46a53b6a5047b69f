#!/usr/bin/env python3
"""Fills a collector's PostgreSQL database (its schema made by `id3-meter collect`) with what a
fleet's collector keeps for DAYS days of CHANNELS channels from a redundant pair of meters, as
the report reads it once the collector has folded its hours: a creditable tag every 10 s (six a
minute, at :05 to :55) and an INFO tag every 5 minutes, both meters alike; GAPS gaps a channel
a day (1 to 10 minutes without a tag, seeded), each with its `no_tags` alert records.

MODE `hours` writes what a month at 10,000 channels leaves to read: each channel's hours as the
collector folds them (`coverage_hours`, the text of Sources/ID3MeterReport/Coverage/
CoverageHourText.swift), the minutes a report reads besides them (around each gap, at each
day's edges) and the alerts. The month's minutes themselves (864 million rows, some 80 GB)
are not written.
MODE `minutes` writes every minute as well and no hours: the report folds them itself. The
bench checks, on a small instance, that both give the same report.

Usage: coverage_fleet.py DATABASE_URL FIRST_DAY_UNIX DAYS CHANNELS GAPS MODE; prints the gaps planted."""
import random
import subprocess
import sys

url, first, days, channels, gaps, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
assert mode in ("hours", "minutes")
random.seed(56)
METERS = ("n1", "n2")
GAP = 30.0
INFO_LIMIT = 310.0
first_minute = first // 60
# The minutes the days reach: from the one before the first day to the first of the day after.
minutes = range(first_minute - 1, first_minute + days * 1440 + 1)


def copy(table, columns):
    """A COPY of rows (tuples) into `table`, fed as they are made."""
    process = subprocess.Popen(["psql", "-X", "-q", url, "-c", f"COPY {table} ({columns}) FROM STDIN"],
                               stdin=subprocess.PIPE, text=True, bufsize=1 << 20)
    return process


def field(value):
    return "\\N" if value is None else str(value)


def minute_row(channel, minute, meter):
    base = minute * 60
    info = 1 if minute % 5 == 0 else 0
    values = (channel, minute, meter, 6, info, 0, 0, base + 5.0, base + 55.0, None, None,
              base + 7.0 if info else None, base + 7.0 if info else None)
    return "\t".join(field(v) for v in values) + "\n"


def hour_text(hour, present):
    """The hour folded as CoverageHour(hour:minutes:) folds it, `present` its minutes with tags."""
    credited, creditable, info, stretches, spans = 0, 0, 0, [], []
    for minute in present:
        credited |= 1 << (minute - hour * 60)
        creditable += 6
        base = minute * 60
        if stretches and base + 5.0 - stretches[-1][1] < GAP:
            stretches[-1][1] = base + 55.0
        else:
            stretches.append([base + 5.0, base + 55.0])
        if minute % 5 == 0:
            info += 1
            spans.append(base + 7.0)
    words = ["1", str(credited), str(creditable), str(info), "0", "0", str(len(stretches))]
    for low, high in stretches:
        words += [repr(low), repr(high)]
    if spans:
        intervals = [b - a for a, b in zip(spans, spans[1:])]
        words += [repr(spans[0]), repr(spans[-1]), repr(max(intervals, default=0.0)), str(sum(1 for i in intervals if i > INFO_LIMIT))]
    else:
        words.append("-")
    words.append(str(len(METERS)))
    for meter in METERS:
        words += [f"{len(meter)}:{meter}", str(credited), str(creditable)]
    return " ".join(words)


coverage = copy("coverage", "channel, minute, meter, creditable, info, placeholder, invalid, first_at, last_at, hole_from, hole_to, info_first, info_last")
hours = copy("coverage_hours", "channel, hour, summary") if mode == "hours" else None
records = copy("records", "batch, type, sent_at, channel, meter, tag_id, payload, record")
planted = 0
first_hour, end_hour = first_minute // 60, (first_minute + days * 1440) // 60
edges = {first_minute + day * 1440 + offset for day in range(days + 1) for offset in (-1, 0)}
CLEAN = (1 << 60) - 1


def clean_hour(hour):
    """hour_text of an hour with every minute's tags, written out: most of a month's hours."""
    base = hour * 3600
    meters = " ".join(f"{len(m)}:{m} {CLEAN} 360" for m in METERS)
    return f"1 {CLEAN} 360 12 0 0 1 {base + 5.0!r} {base + 3595.0!r} {base + 7.0!r} {base + 3307.0!r} 300.0 0 {len(METERS)} {meters}"


assert clean_hour(first // 3600) == hour_text(first // 3600, range(first // 60, first // 60 + 60))
for number in range(1, channels + 1):
    channel = f"ch{number:05d}"
    holes = set()
    for day in range(days):
        for _ in range(gaps):
            start = first_minute + day * 1440 + random.randrange(0, 1430)
            length = random.randint(1, 10)
            holes.update(range(start, start + length))
            for active, at in ((True, start * 60 + 25.0), (False, (start + length) * 60 + 5.0)):
                record = '{"active":%s,"alert":"no_tags","channel":"%s","meter":"n1","sent_at":%s,"type":"alert"}' % (
                    "true" if active else "false", channel, repr(at))
                records.stdin.write(f"bench\talert\t{at!r}\t{channel}\tn1\t\\N\t\\N\t{record}\n")
            planted += 1
    # The minutes a report reads besides the hours: each side of a gap, each day's edges.
    wanted = minutes if mode == "minutes" else sorted(
        {m for hole in holes for m in (hole - 1, hole + 1)} | edges)
    for minute in wanted:
        if minute in holes or minute not in minutes:
            continue
        for meter in METERS:
            coverage.stdin.write(minute_row(channel, minute, meter))
    if hours:
        touched = {hole // 60 for hole in holes}
        for hour in range(first_hour, end_hour):
            text = hour_text(hour, [m for m in range(hour * 60, hour * 60 + 60) if m not in holes]) if hour in touched else clean_hour(hour)
            hours.stdin.write(f"{channel}\t{hour}\t{text}\n")
for process in (coverage, hours, records):
    if process:
        process.stdin.close()
        assert process.wait() == 0
channel_rows = "".join(f"ch{n:05d}\t{first - 86400.0!r}\t{first + days * 86400.0!r}\t\\N\n" for n in range(1, channels + 1))
subprocess.run(["psql", "-X", "-q", url, "-c", "COPY channels (channel, first_at, last_at, deleted_at) FROM STDIN"],
               input=channel_rows, text=True, check=True)
if hours:
    folded = "".join(f"ch{n:05d}\t{end_hour}\n" for n in range(1, channels + 1))
    subprocess.run(["psql", "-X", "-q", url, "-c", "COPY coverage_folded (channel, through) FROM STDIN"], input=folded, text=True, check=True)
print(planted)
