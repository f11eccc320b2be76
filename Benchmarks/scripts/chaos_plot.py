#!/usr/bin/env python3
"""Plots the chaos soak's CSV (imagecache-bench chaos-soak): one panel per sampled series over
time, with the fault windows shaded and named, so a reader sees what each fault did.

Usage: chaos_plot.py CSV PNG
"""
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("no samples in " + sys.argv[1])
t = [float(r["seconds"]) / 60 for r in rows]


def series(key, scale=1.0):
    return [float(r[key]) / scale if r[key] not in ("", "-1") else float("nan") for r in rows]


panels = [
    ("RSS (MiB)", [("rss", series("rss_kib", 1024)), ("memory_limit", series("memory_limit_mib"))]),
    ("open fds / threads", [("fds", series("fds")), ("threads", series("threads"))]),
    ("disk cache (MiB) / WAL (MiB) / job table (KiB)", [("disk", series("disk_bytes", 1 << 20)), ("WAL", series("wal_bytes", 1 << 20)),
                                                        ("jobs.json KiB", series("job_table_bytes", 1024))]),
    ("disk entries", [("entries", series("disk_entries"))]),
    ("memcached connections", [(f"node {i}", series(f"mc{i}_connections")) for i in range(3)]),
    ("requests per sample", [("ok", series("ok")), ("refused", series("refused")), ("unexplained", series("unexplained")), ("hung", series("hung"))]),
    ("memory-hit latency (ms)", [("p50", series("memory_hit_p50_us", 1000)), ("p99", series("memory_hit_p99_us", 1000))]),
]
fig, axes = plt.subplots(len(panels), 1, figsize=(12, 2.2 * len(panels)), sharex=True)
windows, start = [], None
for i, r in enumerate(rows):
    phase = r["phase"]
    fault = phase not in ("warm-up", "calm", "tail")
    if fault and (start is None or rows[i - 1]["phase"] != phase):
        start = (t[i], phase)
    if start and (not fault or i == len(rows) - 1 or rows[i + 1]["phase"] != phase):
        windows.append((start[0], t[i], start[1]))
        start = None
for ax, (title, lines) in zip(axes, panels):
    for a, b, name in windows:
        ax.axvspan(a, b, color="tab:red", alpha=0.08)
    for label, values in lines:
        ax.plot(t, values, label=label, linewidth=1)
    ax.set_ylabel(title, fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
for a, b, name in windows:
    axes[0].text((a + b) / 2, 1.02, name, transform=axes[0].get_xaxis_transform(), fontsize=6, rotation=60, ha="left")
axes[-1].set_xlabel("minutes")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
