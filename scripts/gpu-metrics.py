#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarizes the GPU metrics of an Nsight Systems profile (exported as
SQLite: nsys export --type sqlite) taken with --gpu-metrics-devices: the mean
of every sampled metric over the samples in which the GPU was busy with
memory-bound work — graphics/compute engine active (a metric named
"GR Active") at least --min-gr percent and DRAM read bandwidth (a metric
whose name starts "DRAM Read") at least --min-dram percent. bench_queue
--ops OP --copy-log2 10 makes those samples the operation's: its copy
baseline then stays in the L2.

usage: gpu-metrics.py [--min-gr P] [--min-dram P] PROFILE.sqlite [LABEL]
"""
import sqlite3
import sys


def main(argv):
    min_gr, min_dram = 90.0, 10.0
    args = list(argv[1:])
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--min-gr":
            min_gr = float(args.pop(0))
        elif opt == "--min-dram":
            min_dram = float(args.pop(0))
        else:
            print(f"gpu-metrics: unknown option {opt}", file=sys.stderr)
            return 2
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    path = args[0]
    label = args[1] if len(args) > 1 else path
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    if "GPU_METRICS" not in tables or "TARGET_INFO_GPU_METRICS" not in tables:
        print(f"{label}: no GPU metrics in the profile (tables: {', '.join(sorted(tables))})")
        return 1
    names = {}
    for mid, name in db.execute("select distinct metricId, metricName from TARGET_INFO_GPU_METRICS"):
        names[mid] = name
    samples = {}
    for ts, mid, value in db.execute("select timestamp, metricId, value from GPU_METRICS"):
        samples.setdefault(ts, {})[names.get(mid, str(mid))] = value

    def first(prefix):
        return next((n for n in names.values() if n.startswith(prefix)), None)

    gr, dram = first("GR Active"), first("DRAM Read")
    if gr is None or dram is None:
        print(f"{label}: no GR Active / DRAM Read metric (metrics: {', '.join(names.values())})")
        return 1
    busy = [s for s in samples.values() if s.get(gr, 0) >= min_gr and s.get(dram, 0) >= min_dram]
    print(f"{label}: {len(busy)} of {len(samples)} samples busy ({gr} >= {min_gr}, "
          f"{dram} >= {min_dram})")
    if not busy:
        return 1
    for name in sorted(set(names.values())):
        vals = [s[name] for s in busy if name in s]
        if vals:
            print(f"  {name:60s} {sum(vals) / len(vals):10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
