#!/usr/bin/env python3
"""Load test of `id3-meter collect`, as a fleet posts to it (`make bench-collector`).

A fleet's shape: CHANNELS channels metered by a redundant pair of meters (`a` and `b`), each
delivering every tag, so half the deliveries are duplicates by (channel, tag_id); RECORDS
deliveries in all, in batches of BATCH records as a meter's spool posts them (a second's
records of many channels), posted by POSTERS concurrent connections, a pair's two batches of a
second side by side. For each database (a SQLite file, a PostgreSQL database of its own), on a
collector of its own:

- records/s from the first post to the last answer, every answer's status (a batch not
  answered 2xx the first time is a failure of the run), the collector's CPU;
- what the database kept: one delivery per (channel, tag_id), every batch id once;
- the baseline, taken in the same run on the same machine: the same rows written straight into
  the same schema by the database's fastest path (PostgreSQL `COPY`, SQLite one transaction of
  `executemany`), without HTTP, JSON or deduplication. The ratio is what the collector keeps of
  the database's own speed.

With --collectors N (PostgreSQL), N collectors share the database, each poster posting to one
of them in turn: a fleet's collectors behind a load balancer.

Usage: scripts/bench-collector.py [--meter PATH] [--records N] [--batch N] [--channels N]
       [--posters N] [--stores sqlite,postgres] [--collectors N]
"""
import argparse
import hashlib
import http.client
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START = 1_795_000_000.0


def payload(channel, second):
    """A Nielsen DTVR payload of `channel` at `second` of the run: its own CIDs, offset and block."""
    block = hashlib.sha256(f"{channel}/{second}".encode()).hexdigest()
    offset = 36000 + second
    return f"www.nielsen.com/ch{channel:05d}AAAAAAAAAAAAA==/S1VE5vARhUfW0KCW1ip75A==/{block}{block[:40]}=/{offset}/{offset}/00"


def record(channel, second, meter, index):
    text = payload(channel, second)
    return json.dumps({
        "type": "send_id3", "sent_at": START + second + index * 1e-4, "channel": f"ch{channel:05d}", "meter": meter,
        "payload": text, "tag_id": hashlib.sha256(text.encode()).hexdigest()[:32], "source": f"https://cdn.example/ch{channel}/master.m3u8",
        "segment": f"https://cdn.example/ch{channel}/seg{second // 2}.ts", "media_sequence": second // 2, "discontinuity_sequence": 0,
        "pts": 900000 + second * 90000,
    }, separators=(",", ":"), sort_keys=True)


def batches(records, size, channels):
    """The pair's batches, in posting order: `a`'s k-th then `b`'s k-th. Each meter's records run
    through the seconds, every channel's tag of a second in turn."""
    tags = records // 2
    lines = {"a": [], "b": []}
    for n in range(tags):
        second, channel = divmod(n, channels)
        for meter in ("a", "b"):
            lines[meter].append(record(channel, second, f"bench-{meter}", n % channels))
    bodies = []
    for k in range(0, tags, size):
        for meter in ("a", "b"):
            chunk = lines[meter][k:k + size]
            bodies.append((f"spool-{meter}-batch-{k // size:012d}",
                           '{"batch":"spool-%s-batch-%012d","meter_version":"bench","records":[%s]}' % (meter, k // size, ",".join(chunk))))
    return bodies, lines


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds():
    """CPU of every PostgreSQL server process (the database's share of the machine)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() != "postgres":
                    continue
            total += cpu_seconds(int(entry))
        except OSError:
            continue
    return total


def start_collector(meter, database):
    process = subprocess.Popen([meter, "collect", "--database", database, "--listen", "127.0.0.1:0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        said += line
        found = re.search(r"collecting on http://127\.0\.0\.1:([0-9]+)", line)
        if found:
            def keep():
                for line in process.stderr:
                    said_after.append(line)
            said_after = []
            threading.Thread(target=keep, daemon=True).start()
            process.said = said_after
            return process, int(found.group(1))
    process.kill()
    sys.exit(f"collect did not start on {database}: {said}")


def post_all(ports, bodies, posters):
    work = queue.Queue()
    for item in bodies:
        work.put(item)
    statuses = []
    lock = threading.Lock()

    def poster(port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            try:
                batch, body = work.get_nowait()
            except queue.Empty:
                break
            connection.request("POST", "/records", body=body.encode(), headers={"Content-Type": "application/json", "Idempotency-Key": batch})
            answer = connection.getresponse()
            answer.read()
            with lock:
                statuses.append(answer.status)
        connection.close()

    threads = [threading.Thread(target=poster, args=(ports[index % len(ports)],)) for index in range(posters)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - began, statuses


def psql(url, sql, database=None):
    """Runs `sql` with psql against the server of `url` (its database, or `database`)."""
    target = url if database is None else url.rsplit("/", 1)[0] + "/" + database
    return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", target, "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def baseline_postgres(url, lines):
    psql(url, "DROP DATABASE IF EXISTS bench_baseline")
    psql(url, "CREATE DATABASE bench_baseline")
    schema = ("CREATE TABLE records (id BIGSERIAL PRIMARY KEY, batch TEXT NOT NULL, type TEXT NOT NULL, sent_at DOUBLE PRECISION NOT NULL, "
              "channel TEXT NOT NULL, meter TEXT NOT NULL, tag_id TEXT, payload TEXT, record TEXT NOT NULL);"
              "CREATE INDEX records_channel_time ON records (channel, sent_at); CREATE INDEX records_time ON records (sent_at);"
              "CREATE INDEX records_notable ON records (channel, sent_at) WHERE type <> 'send_id3';")
    psql(url, schema, "bench_baseline")
    rows = []
    for meter, texts in lines.items():
        for text in texts:
            fields = json.loads(text)
            cells = ["b", "send_id3", repr(fields["sent_at"]), fields["channel"], fields["meter"], fields["tag_id"], fields["payload"], text]
            rows.append("\t".join(cell.replace("\\", "\\\\") for cell in cells))
    data = "\n".join(rows) + "\n"
    target = url.rsplit("/", 1)[0] + "/bench_baseline"
    began = time.monotonic()
    subprocess.run(["psql", "-X", "-q", target, "-c", "COPY records (batch, type, sent_at, channel, meter, tag_id, payload, record) FROM STDIN"],
                   input=data, check=True, capture_output=True, text=True)
    seconds = time.monotonic() - began
    psql(url, "DROP DATABASE bench_baseline")
    return len(rows) / seconds


def baseline_sqlite(lines, folder):
    import sqlite3
    connection = sqlite3.connect(os.path.join(folder, "baseline.sqlite"))
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(
        "CREATE TABLE records (id INTEGER PRIMARY KEY AUTOINCREMENT, batch TEXT NOT NULL, type TEXT NOT NULL, sent_at DOUBLE PRECISION NOT NULL, "
        "channel TEXT NOT NULL, meter TEXT NOT NULL, tag_id TEXT, payload TEXT, record TEXT NOT NULL);"
        "CREATE INDEX records_channel_time ON records (channel, sent_at); CREATE INDEX records_time ON records (sent_at);"
        "CREATE INDEX records_notable ON records (channel, sent_at) WHERE type <> 'send_id3';")
    rows = []
    for texts in lines.values():
        for text in texts:
            fields = json.loads(text)
            rows.append(("b", "send_id3", fields["sent_at"], fields["channel"], fields["meter"], fields["tag_id"], fields["payload"], text))
    began = time.monotonic()
    with connection:
        connection.executemany("INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    seconds = time.monotonic() - began
    connection.close()
    return len(rows) / seconds


def kept_sqlite(path):
    import sqlite3
    connection = sqlite3.connect(path)
    deliveries = connection.execute("SELECT count(*), count(DISTINCT channel || '/' || tag_id) FROM records WHERE type = 'send_id3'").fetchone()
    batches = connection.execute("SELECT count(*) FROM batches").fetchone()[0]
    coverage = connection.execute("SELECT coalesce(sum(creditable + info + placeholder + invalid), 0) FROM coverage").fetchone()[0]
    connection.close()
    return deliveries[0], deliveries[1], batches, coverage


def kept_postgres(url):
    deliveries = psql(url, "SELECT count(*) || ' ' || count(DISTINCT (channel, tag_id)) FROM records WHERE type = 'send_id3'").split()
    batches = psql(url, "SELECT count(*) FROM batches")
    coverage = psql(url, "SELECT coalesce(sum(creditable + info + placeholder + invalid), 0) FROM coverage")
    return int(deliveries[0]), int(deliveries[1]), int(batches), int(coverage)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--meter", default=os.path.join(ROOT, ".build/release/id3-meter"))
    parser.add_argument("--records", type=int, default=120_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--channels", type=int, default=1_000)
    parser.add_argument("--posters", type=int, default=8)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--collectors", type=int, default=1)
    options = parser.parse_args()

    bodies, lines = batches(options.records, options.batch, options.channels)
    tags = options.records // 2
    print(f"{options.records} deliveries ({tags} tags, each from two meters) of {options.channels} channels, "
          f"{len(bodies)} batches of {options.batch}, {options.posters} posters")
    failed = False
    folder = tempfile.mkdtemp(prefix="id3meter-bench-collector.")
    for store in options.stores.split(","):
        if store == "sqlite":
            path = os.path.join(folder, "collector.sqlite")
            database = path
            baseline = baseline_sqlite(lines, folder)
        else:
            url = subprocess.run([os.path.join(ROOT, "scripts/postgres-test-db.sh"), "start"], check=True, capture_output=True, text=True).stdout.strip()
            psql(url, "DROP DATABASE IF EXISTS bench_collector")
            psql(url, "CREATE DATABASE bench_collector")
            database = url.rsplit("/", 1)[0] + "/bench_collector"
            baseline = baseline_postgres(url, lines)
        # SQLite is one writer's file: one collector.
        started = [start_collector(options.meter, database) for _ in range(options.collectors if store == "postgres" else 1)]
        cpu_before, server_before, bench_before = sum(cpu_seconds(p.pid) for p, _ in started), server_cpu_seconds(), time.process_time()
        seconds, statuses = post_all([port for _, port in started], bodies, options.posters)
        cpu = sum(cpu_seconds(p.pid) for p, _ in started) - cpu_before
        server = server_cpu_seconds() - server_before
        posters = time.process_time() - bench_before
        for process, _ in started:
            process.terminate()
            process.wait(timeout=30)
        kept = kept_sqlite(path) if store == "sqlite" else kept_postgres(database)
        rate = options.records / seconds
        answers = {status: statuses.count(status) for status in sorted(set(statuses))}
        good = kept[0] == tags and kept[1] == tags and kept[2] == len(bodies) and kept[3] == options.records and set(answers) == {200}
        failed = failed or not good
        name = store if len(started) == 1 else f"{store} x{len(started)}"
        print(f"{name:12} {rate:9.0f} records/s in {seconds:6.2f} s  baseline {baseline:9.0f} rows/s  ratio {rate / baseline:5.3f}  "
              f"CPU: collector{'s' if len(started) > 1 else ''} {100 * cpu / seconds:5.1f}%, database server {100 * server / seconds:5.1f}%, posters {100 * posters / seconds:5.1f}%  answers {answers}  kept {kept[0]} deliveries ({kept[1]} pairs), "
              f"{kept[2]} batches, {kept[3]} folded{'' if good else '  WRONG'}")
        if set(answers) != {200}:
            for process, _ in started:
                print("".join(line for line in process.said if "error" in line or "warning" in line)[:3000])
        if store == "postgres":
            subprocess.run([os.path.join(ROOT, "scripts/postgres-test-db.sh"), "stop"], check=False)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
