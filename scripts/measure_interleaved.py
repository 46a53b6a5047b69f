#!/usr/bin/env python3
"""Times several commands in turn, RUNS rounds (each round runs every command once), so that
the machine's drift over the run touches them alike: for each command in the order given,
prints "median_wall_s cpu_s_of_that_run peak_rss_kib" (peak: the largest of its runs).
Usage: measure_interleaved.py RUNS -- CMD ARGS... -- CMD ARGS... ; output discarded, a failing
command is reported on stderr and makes the exit status 1."""
import os
import statistics
import subprocess
import sys
import time

runs = int(sys.argv[1])
commands, current = [], None
for arg in sys.argv[2:]:
    if arg == "--":
        current = []
        commands.append(current)
    else:
        current.append(arg)

results = [[] for _ in commands]
failed = False
for _ in range(runs):
    for index, command in enumerate(commands):
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            print(f"measure_interleaved.py: failed ({status}): {' '.join(command)}", file=sys.stderr)
            failed = True
        results[index].append((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss))

for runs_of_command in results:
    ordered = sorted(runs_of_command)
    wall, cpu, _ = ordered[(len(ordered) - 1) // 2]
    print(f"{wall:.3f} {cpu:.3f} {max(r[2] for r in runs_of_command)}")
sys.exit(1 if failed else 0)
