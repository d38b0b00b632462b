#!/usr/bin/env python3
"""Cost of counting with `memscope stat` next to `perf stat`, measured in the same run.

1. Counting a command: a page-fault-heavy workload alone, under perf stat and under
   memscope stat (same events), interleaved, repeated; median wall time and slowdown.
2. The sampler: system-wide, 6 software events, -I 10 for a few seconds; CPU time and
   peak RSS of memscope and of perf.

Usage: stat_overhead.py [--build DIR] [--repeat N] [--write docs/performance.md]
"""
import argparse
import pathlib
import resource
import statistics
import subprocess
import sys
import time

import perfdoc  # beside this script

EVENTS = "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
START, END = "<!-- stat-overhead:start -->", "<!-- stat-overhead:end -->"


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def child_usage(cmd):
    """CPU seconds (user+sys) and peak RSS (KiB) of cmd and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    memscope = str(build / "memscope")
    work = [str(build / "contrib/bench/touchmem"), "100", "--repeat", "4"]

    configs = {
        "alone": work,
        "perf stat": ["perf", "stat", "-x,", "-e", EVENTS, "--"] + work,
        "memscope stat": [memscope, "stat", "-x,", "-e", EVENTS, "--"] + work,
    }
    for cmd in configs.values():  # warm up: page cache, first-touch effects
        timed(cmd)
    times = {name: [] for name in configs}
    for _ in range(args.repeat):
        for name, cmd in configs.items():
            times[name].append(timed(cmd))
    med = {name: statistics.median(v) for name, v in times.items()}

    # The sampler at 100 Hz. perf's own RSS is measured the same way (RUSAGE_CHILDREN
    # peak is a high-water mark, so measure memscope first, then perf in a fresh process).
    sampler = {}
    for name, cmd in (("memscope", [memscope, "stat", "-a", "-I", "10", "-x,", "-e", EVENTS,
                                    "--", "sleep", str(args.seconds)]),
                      ("perf", ["perf", "stat", "-a", "-I", "10", "-x,", "-e", EVENTS,
                                "--", "sleep", str(args.seconds)])):
        out = subprocess.run([sys.executable, __file__, "--usage-of"] + cmd,
                             capture_output=True, text=True, check=True).stdout.split()
        sampler[name] = (float(out[0]), int(out[1]))

    lines = [
        START,
        "Measured with `python3 contrib/bench/stat_overhead.py --build build --repeat %d` "
        "(workload: `touchmem 100 --repeat 4`, 102,400 page faults; events: `%s`)." % (args.repeat, EVENTS),
        "",
        "| run | median wall time | slowdown vs alone |",
        "|---|---|---|",
    ]
    for name in configs:
        lines.append("| %s | %.1f ms | %+.1f%% |" % (name, med[name] * 1e3,
                                                    (med[name] / med["alone"] - 1) * 100))
    lines += [
        "",
        "memscope / perf wall time: %.3f" % (med["memscope stat"] / med["perf stat"]),
        "",
        "Sampler, system-wide, 6 events, `-I 10` for %.0f s (CPU time of the counting tool, peak RSS):" % args.seconds,
        "",
        "| tool | CPU time | CPU per second | peak RSS |",
        "|---|---|---|---|",
    ]
    for name, (cpu, rss) in sampler.items():
        lines.append("| %s stat | %.1f ms | %.2f%% | %d KiB |" % (name, cpu * 1e3, cpu / args.seconds * 100, rss))
    lines += ["", "memscope / perf sampler CPU: %.2f" % (sampler["memscope"][0] / sampler["perf"][0]), END]
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope stat: counting overhead", START, END, text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--usage-of":
        cpu, rss = child_usage(sys.argv[2:])
        print(cpu, rss)
    else:
        main()
