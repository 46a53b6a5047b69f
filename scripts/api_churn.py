#!/usr/bin/env python3
"""Adds N channels over serve's API (each pointing at a closed port, so each fails and retries),
waits 3 s, deletes them, waits 2 s, three times, printing serve's resident memory (all, private,
file-backed; MB) before and after each cycle, then 70 s later (an ended channel's cancelled wait
holds its memory until the wait would have ended, a minute at most), with the ratio of the last
resident memory to the first. Usage: api_churn.py PORT PID [N]
(serve's config must list 127.0.0.1 under api_hosts; the API without tokens)."""
import http.client, json, sys, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 3000


def memory():
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = int(line.split()[1]) // 1024
    return fields


api = http.client.HTTPConnection("127.0.0.1", port)


def ask(method, path, body=None):
    api.request(method, path, body=body)
    answer = api.getresponse()
    answer.read()
    return answer.status


# One channel added and removed first, so that the code paths are in memory before the baseline.
ask("PUT", "/channels/w", json.dumps({"name": "w", "url": "http://127.0.0.1:9/w.m3u8"}))
time.sleep(1.5)
ask("DELETE", "/channels/w")
time.sleep(2)
before = memory()
print("before", before)
for cycle in range(3):
    for i in range(count):
        assert ask("PUT", f"/channels/x{i}", json.dumps({"name": f"x{i}", "url": f"http://127.0.0.1:9/x{i}.m3u8"})) in (200, 201)
    full = memory()
    time.sleep(3)
    for i in range(count):
        assert ask("DELETE", f"/channels/x{i}") == 204
    time.sleep(2)
    print(f"cycle {cycle}: {count} channels {full}, deleted {memory()}")
time.sleep(70)
after = memory()
print(f"70 s later {after}: resident memory {after['VmRSS'] / before['VmRSS']:.2f} times what it was before")
