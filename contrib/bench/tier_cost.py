#!/usr/bin/env python3
"""What the memory tier statistics cost memscope stat.

1. Per-node files: `memscope stat -a -I 100` reading /proc/vmstat only, then the same with the
   tier metrics (each node's vmstat and meminfo) added. The read syscalls of memscope
   (/proc/PID/io syscr) over a steady window, per interval: the difference is the reads the
   tier files add, which should be one per file (two per node).
2. Per-process node counts: --procs processes holding 1 MiB each; `memscope stat -I 1000 -p
   PIDS -e numa_maps/bytes` (every process's /proc/PID/numa_maps each interval) against the
   same command counting vmstat/pgfault only, for --seconds each. The difference in CPU time
   (user+sys from wait4) over the run's length is what the per-process node counts cost, in
   percent of one CPU. Medians over --repeat runs.

Usage: tier_cost.py [--build DIR] [--procs N] [--seconds S] [--repeat N] [--write docs/performance.md]
"""
import argparse
import os
import pathlib
import signal
import statistics
import subprocess
import time

import benchutil  # beside this script
import perfdoc

START, END = "<!-- tier-cost:start -->", "<!-- tier-cost:end -->"
TIER_METRICS = "tier.promoted_pages,tier.demoted_pages,numa.used_bytes,numa.free_bytes"


def syscr(pid):
    for line in open(f"/proc/{pid}/io"):
        if line.startswith("syscr:"):
            return int(line.split()[1])
    raise SystemExit(f"/proc/{pid}/io has no syscr")


def reads_per_interval(memscope, extra, seconds):
    """Read syscalls per -I 100 interval of memscope stat -a over a steady window."""
    cmd = [memscope, "stat", "-a", "-I", "100", "-x,", "-e", "vmstat/pgfault"] + extra
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)                      # start-up done: catalog, sources open
        r0, t0 = syscr(proc.pid), time.monotonic()
        time.sleep(seconds)
        r1, t1 = syscr(proc.pid), time.monotonic()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    return (r1 - r0) / ((t1 - t0) / 0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--procs", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    memscope = str(build / "memscope")
    touchmem = str(build / "contrib" / "bench" / "touchmem")
    nodes = len([d for d in os.listdir("/sys/devices/system/node") if d.startswith("node") and d[4:].isdigit()])

    base = [reads_per_interval(memscope, [], args.seconds) for _ in range(args.repeat)]
    tier = [reads_per_interval(memscope, ["-m", TIER_METRICS], args.seconds) for _ in range(args.repeat)]
    added = statistics.median(tier) - statistics.median(base)

    holders = [subprocess.Popen([touchmem, "1", "--hold-ms", "3600000"]) for _ in range(args.procs)]
    try:
        time.sleep(1.0)
        pids = ",".join(str(p.pid) for p in holders)
        ms = int(args.seconds * 1000)
        costs = []
        for _ in range(args.repeat):
            counted = benchutil.measured(build, [memscope, "stat", "-I", "1000", "-x,", "-o", "/dev/null", "-e", "numa_maps/bytes",
                                                 "-p", pids], signal_after_ms=ms)
            plain = benchutil.measured(build, [memscope, "stat", "-I", "1000", "-x,", "-o", "/dev/null", "-e", "vmstat/pgfault",
                                               "-p", pids], signal_after_ms=ms)
            costs.append((counted.cpu_s - plain.cpu_s) / counted.wall_s)
    finally:
        for p in holders:
            p.kill()
        for p in holders:
            p.wait()

    lines = [
        START,
        "Measured with `python3 contrib/bench/tier_cost.py --build build --procs %d --seconds %.0f --repeat %d` "
        "(%d CPUs, %d NUMA node%s; medians of %d runs)." % (
            args.procs, args.seconds, args.repeat, os.cpu_count(), nodes, "" if nodes == 1 else "s", args.repeat),
        "",
        "| what | measured |",
        "|---|---|",
        "| read syscalls per interval, `stat -a -I 100 -e vmstat/pgfault` | %s |" % benchutil.spread(base, "%.2f"),
        "| the same with `-m %s` | %s |" % (TIER_METRICS, benchutil.spread(tier, "%.2f")),
        "| reads the tier files add per interval (nodeN/vmstat and nodeN/meminfo, %d node%s) | %.2f |" % (
            nodes, "" if nodes == 1 else "s", added),
        "| CPU of `-e numa_maps/bytes` over %d processes at -I 1000, beyond the same stat without it | %s |" % (
            args.procs, benchutil.spread(costs, "%.2f", 100, "% of one CPU")),
        END,
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "Memory tier statistics: cost", START, END, text)


if __name__ == "__main__":
    main()
