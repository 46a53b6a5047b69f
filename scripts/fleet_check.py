#!/usr/bin/env python3
"""What a fleet run delivered and cost: every channel's tags of the generator's segments, lost or
doubled, pacing error, and serve's CPU and memory over the generator's, from serve's records.

Usage: fleet_check.py N RECORDS START STOP SERVE_TICKS0 SERVE_TICKS1 GEN_TICKS0 GEN_TICKS1 HZ
                      PEAK_RSS_KB PEAK_PRIVATE_KB PEAK_THREADS PEAK_SOCKETS
(scripts/bench-fleet.sh, scripts/bench-soak.sh)
"""
import collections, json, statistics, sys
n, path = int(sys.argv[1]), sys.argv[2]
start, stop = float(sys.argv[3]), float(sys.argv[4])
serve_cpu, gen_cpu = (int(sys.argv[6]) - int(sys.argv[5])) / int(sys.argv[9]), (int(sys.argv[8]) - int(sys.argv[7])) / int(sys.argv[9])
rss, anon, threads, sockets = map(int, sys.argv[10:14])
wall = stop - start
sends = collections.defaultdict(list)
# A line that is not a record is a defect of serve's output: counted and shown, not skipped quietly.
torn = []
for number, line in enumerate(open(path, errors="replace"), 1):
    try:
        record = json.loads(line)
    except ValueError:
        torn.append((number, line))
        continue
    if record.get("type") == "send_id3":
        sends[record["channel"]].append(record)
# The generator's tags: segment s of every channel has one at start + s * 2 s + k s + 1/3 s, k = 0, 1.
START_PTS, SEGMENT, TAGS = 900_000, 180_000, (30_000, 120_000)
lost = doubled = expected_total = 0
payload_channels = collections.defaultdict(set)
errors = []
for channel, records in sends.items():
    seqs = [r["media_sequence"] for r in records]
    # The last segment may still have been playing at the stop: it is left out.
    expected = {(START_PTS + s * SEGMENT + k) % (1 << 33) for s in range(min(seqs), max(seqs)) for k in TAGS}
    got = collections.Counter(r["pts"] for r in records if r["media_sequence"] < max(seqs))
    expected_total += len(expected)
    lost += len(expected - set(got))
    doubled += sum(count - 1 for count in got.values() if count > 1)
    for r in records:
        payload_channels[r["payload"]].add(channel)
    pts0 = records[0]["pts"]
    rel = [(r["pts"] - pts0) / 90000 for r in records]
    t0 = statistics.median(r["sent_at"] - x for r, x in zip(records, rel))
    errors += [abs(r["sent_at"] - (t0 + x)) * 1000 for r, x in zip(records, rel)]
errors.sort()
p = lambda q: errors[min(len(errors) - 1, int(q * len(errors)))] if errors else float("nan")
shared = sum(1 for channels in payload_channels.values() if len(channels) > 1)
delivered = sum(len(r) for r in sends.values())
for number, line in torn[:3]:
    print(f"  NOT A RECORD, line {number}: {line[:300]!r}")
print(f"N={n}: {len(sends)} of {n} channels delivered; {len(torn)} lines not JSON; {delivered} sendID3 calls; "
      f"{expected_total} tags in the segments played, {lost} lost, {doubled} doubled, {shared} on two channels")
# The generator serves the same segments and playlists whatever serve does: its CPU is this run's
# baseline, and serve's ratio to it moves less with the host's load than either alone.
print(f"  serve CPU {100 * serve_cpu / wall:.1f}% of one core over {wall:.0f} s (generator {100 * gen_cpu / wall:.1f}%, "
      f"ratio {serve_cpu / gen_cpu if gen_cpu else float('nan'):.2f}); "
      f"peak RSS {rss / 1024:.0f} MB, private {anon / 1024:.0f} MB = {anon / n:.0f} KB per channel")
print(f"  pacing |sent_at - due| p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms, max {errors[-1] if errors else 0:.1f} ms "
      f"(one frame = 33.4 ms); peak threads {threads}, peak open sockets {sockets}")
