#!/usr/bin/env python3
"""Where a latency tail comes from, from a `show load --trace FILE` trace (or TRACE= in show.sh).

Prints the mean latency per connection (a generator or server that serves connections
unfairly shows a slope by index), and how the slowest 5 % of answers spread over time in
10 ms windows: a tail caused by stretches where the server did less work (another tenant on
its core) crowds into few windows, whose answer rate drops; a structural tail spreads evenly.

    Benchmarks/scripts/trace_summary.py TRACE...
"""
import collections
import sys

for path in sys.argv[1:]:
    rows = [line.split() for line in open(path) if line.strip()]
    times = [int(r[0]) for r in rows]
    connections = [int(r[1]) for r in rows]
    latencies = [float(r[2]) for r in rows]
    ordered = sorted(latencies)
    p95 = ordered[int(len(ordered) * 0.95)]
    print(f"== {path}: {len(rows)} answers, mean {sum(latencies) / len(latencies):.0f} µs, p95 {p95:.0f} µs")
    per_connection = collections.defaultdict(list)
    for connection, latency in zip(connections, latencies):
        per_connection[connection].append(latency)
    print("mean by connection (µs): " + " ".join(
        f"{c}:{sum(v) / len(v):.0f}" for c, v in sorted(per_connection.items())))
    answers = collections.Counter(t // 10_000_000 for t in times)
    tail = collections.Counter(t // 10_000_000 for t, latency in zip(times, latencies) if latency >= p95)
    worst = sorted(answers, key=lambda window: -tail[window])
    tenth = worst[:max(1, len(answers) // 10)]
    share = sum(tail[w] for w in tenth) / max(1, sum(tail.values()))
    typical = sorted(answers.values())[len(answers) // 2]
    slow = sorted(answers[w] for w in tenth)[len(tenth) // 2]
    print(f"slowest 5 %: {100 * share:.0f} % of them in the 10 % of 10 ms windows that hold most; "
          f"answers per window there (median) {slow}, elsewhere {typical}")
