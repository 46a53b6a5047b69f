#!/usr/bin/env python3
"""GET /healthz on a fresh connection every 0.1 s for SECONDS, as a kubelet's probe, first with
nothing else going on (the baseline), then while 5,000 connections are opened at once and left
silent. Prints each phase's slowest and median answer and the ratio of the slowest to the
baseline's, and the probes that failed (exit 1 then). Usage: api_flood.py PORT [SECONDS]"""
import socket, statistics, sys, threading, time

port = int(sys.argv[1])
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 6


failed = []


def probes(duration):
    times = []
    start = time.time()
    while time.time() - start < duration:
        asked = time.time()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as probe:
                probe.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
                answer = probe.recv(64)
        except OSError as error:
            # A probe's connection closed before its request was read (an eviction): counted, said.
            failed.append(f"{type(error).__name__}: {error}")
            continue
        if not answer.startswith(b"HTTP/1.1 200"):
            failed.append(f"answered {answer!r}")
            continue
        times.append(time.time() - asked)
        time.sleep(0.1)
    return times


held = []


def flood():
    for _ in range(5_000):
        connection = socket.socket()
        connection.setblocking(False)
        try:
            connection.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        held.append(connection)


quiet = probes(seconds)
flooding = threading.Thread(target=flood)
flooding.start()
loud = probes(seconds)
flooding.join()
print(f"api flood: quiet slowest {max(quiet) * 1000:.1f} ms (median {statistics.median(quiet) * 1000:.1f}), "
      f"under 5,000 connections slowest {max(loud) * 1000:.1f} ms (median {statistics.median(loud) * 1000:.1f}), "
      f"ratio {max(loud) / max(quiet):.1f}; {len(quiet) + len(loud)} probes answered, {len(failed)} failed")
if failed:
    raise SystemExit("api flood: probes that failed: " + "; ".join(failed))
