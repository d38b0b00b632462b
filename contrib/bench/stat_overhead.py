#!/usr/bin/env python3
"""Cost of counting with `memscope stat` next to `perf stat`, measured in the same run.

1. Counting a command: a page-fault-heavy workload alone, under perf stat and under
   memscope stat (same events), interleaved (the order rotates each round); per round, each
   tool's slowdown over the alone run of the same round; medians with interquartile ranges.
2. The sampler: system-wide, 6 software events, -I 10 for --seconds, memscope and perf
   alternating; CPU time (user + system) and peak RSS of the tool process itself, from wait4()
   of the tool (contrib/bench/rusage: a child forked by Python would report Python's own
   resident set as its peak), and the intervals each delivered.

Usage: stat_overhead.py [--build DIR] [--repeat N] [--sampler-runs N] [--seconds S] [--write docs/performance.md]
"""
import argparse
import os
import pathlib
import statistics
import tempfile

import perfdoc  # beside this script
from benchutil import measured, quartiles, spread

EVENTS = "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
START, END = "<!-- stat-overhead:start -->", "<!-- stat-overhead:end -->"


def interval_count(path, nr_events):
    """Intervals in a -x, output (the -o file of either): lines whose first
    field is a time, one per event per interval."""
    count = 0
    for line in pathlib.Path(path).read_text().splitlines():
        try:
            float(line.split(",")[0])
            count += 1
        except ValueError:
            pass
    return count // nr_events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--sampler-runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    memscope = str(build / "memscope")
    work = [str(build / "contrib/bench/touchmem"), str(args.mb), "--repeat", "4"]

    configs = {
        "alone": work,
        "perf stat": ["perf", "stat", "-x,", "-o", "/dev/null", "-e", EVENTS, "--"] + work,
        "memscope stat": [memscope, "stat", "-x,", "-o", "/dev/null", "-e", EVENTS, "--"] + work,
    }
    names = list(configs)
    for name in names:  # warm up: page cache, first-touch effects
        measured(build, configs[name])
    wall = {name: [] for name in names}
    for r in range(args.repeat):
        for name in names[r % 3:] + names[:r % 3]:
            wall[name].append(measured(build, configs[name]).wall_s)
    slowdown = {name: [t / a - 1 for t, a in zip(wall[name], wall["alone"])] for name in names}

    nr = len(EVENTS.split(","))
    sampler = {"memscope": ([], [], []), "perf": ([], [], [])}
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out.csv"
        cmds = {
            "memscope": ([memscope, "stat", "-a", "-I", "10", "-x,", "-o", str(out), "-e", EVENTS, "--", "sleep",
                          str(args.seconds)], None),
            "perf": (["perf", "stat", "-a", "-I", "10", "-x,", "-o", str(out), "-e", EVENTS,
                      "--", "sleep", str(args.seconds)], None),
        }
        for r in range(args.sampler_runs):
            for name in (["memscope", "perf"] if r % 2 == 0 else ["perf", "memscope"]):
                cmd, stdout = cmds[name]
                usage = measured(build, cmd, stdout=stdout)
                sampler[name][0].append(usage.cpu_s)
                sampler[name][1].append(usage.maxrss_kib)
                sampler[name][2].append(interval_count(out, nr))

    lines = [
        START,
        "Measured with `python3 contrib/bench/stat_overhead.py --build build --repeat %d --sampler-runs %d "
        "--seconds %g` (workload: `touchmem %d --repeat 4`, %s page faults; events: `%s`). Medians, "
        "interquartile range in brackets." % (args.repeat, args.sampler_runs, args.seconds, args.mb,
                                             format(args.mb * 256 * 4, ","), EVENTS),
        "",
        "| run | wall time | slowdown vs alone (paired per round) |",
        "|---|---|---|",
    ]
    for name in names:
        lines.append("| %s | %s | %s |" % (name, spread(wall[name], "%.1f", 1e3, " ms"),
                                          "-" if name == "alone" else spread(slowdown[name], "%+.1f", 100, "%")))
    lines += [
        "",
        "Sampler, system-wide, %d events x %d CPUs, `-I 10` for %g s, %d alternating runs per tool (CPU time "
        "and peak RSS of the tool process, from wait4):" % (nr, os.cpu_count(), args.seconds, args.sampler_runs),
        "",
        "| tool | CPU time | CPU per second | peak RSS | intervals delivered |",
        "|---|---|---|---|---|",
    ]
    for name, (cpu, rss, count) in sampler.items():
        lines.append("| %s stat | %s | %s | %s | %s of %d |" % (
            name, spread(cpu, "%.1f", 1e3, " ms"), spread(cpu, "%.2f", 100 / args.seconds, "%"),
            spread(rss, "%.0f", 1, " KiB"), spread(count, "%.0f"), int(args.seconds * 100)))
    ratio = statistics.median(sampler["memscope"][0]) / statistics.median(sampler["perf"][0])
    lines += ["", "memscope / perf sampler CPU (medians): %.2f" % ratio, END]
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope stat: counting overhead", START, END, text)


if __name__ == "__main__":
    main()
