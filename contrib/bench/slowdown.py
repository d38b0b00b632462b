#!/usr/bin/env python3
"""Workload slowdown under system-wide sampling: a STREAM triad (contrib/bench/triad, which
times its own loop) alone, under `memscope record -a -I MS` and under `perf stat -a -I MS`,
at 1 Hz, 10 Hz, 100 Hz and 1 kHz.

A busy machine makes single runs meaningless, so each round runs, for every rate, the three
(alone, memscope, perf) back to back in a rotating order, and each tool's slowdown is paired
with the alone run of the same triple: (ns per pass under the tool / ns per pass alone) - 1.
The table gives, per tool and rate, the mean paired slowdown with its 95% confidence interval
(Student's t over the rounds) and the median, twice: from the triad's wall time per pass (what
the user sees; other load on the machine lands in it too) and from its threads' own CPU time per
pass (time spent waiting for a CPU is left out, interrupts the threads took and cache or memory
interference stay in: the part of the cost a tool adds to the work itself).

Usage: slowdown.py [--build DIR] [--rounds N] [--mb MB] [--seconds S] [--rates 1000,100,10,1]
                   [--write docs/performance.md]
"""
import argparse
import math
import os
import pathlib
import re
import statistics
import subprocess
import tempfile
import time

import perfdoc  # beside this script

EVENTS = "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
START, END = "<!-- slowdown:start -->", "<!-- slowdown:end -->"
NS_PER_PASS = re.compile(r" ns_per_pass=([0-9.]+) cpu_ns_per_pass=([0-9.]+)")
# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom (beyond: the normal's).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def mean_ci(values):
    """(mean, half width of its 95% confidence interval)."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, float("nan")
    t = T975[n - 2] if n - 1 <= len(T975) else 1.960
    return mean, t * statistics.stdev(values) / math.sqrt(n)


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    match = NS_PER_PASS.search(res.stdout)
    if res.returncode != 0 or not match:
        raise SystemExit("slowdown: %s failed (%d):\n%s\n%s" % (" ".join(cmd), res.returncode, res.stdout,
                                                               res.stderr))
    return float(match.group(1)), float(match.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--mb", type=int, default=64, help="megabytes per array (3 arrays per thread)")
    ap.add_argument("--seconds", type=float, default=2.0, help="length of one triad run")
    ap.add_argument("--rates", default="1000,100,10,1", help="intervals in ms")
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    memscope = str(build / "memscope")
    triad = [str(build / "contrib/bench/triad"), str(args.mb), str(args.seconds)]
    rates = [int(r) for r in args.rates.split(",")]
    load_before = os.getloadavg()[0]
    diffs = {(tool, ms, kind): [] for tool in ("memscope", "perf") for ms in rates for kind in (0, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        rec = pathlib.Path(tmp) / "run.rec"
        run(triad)  # warm up
        for r in range(args.rounds):
            for ms in rates:
                modes = {
                    "alone": triad,
                    "memscope": [memscope, "record", "-a", "-I", str(ms), "-e", EVENTS, "-o", str(rec), "--"] + triad,
                    "perf": ["perf", "stat", "-a", "-I", str(ms), "-x,", "-o", "/dev/null", "-e", EVENTS, "--"] + triad,
                }
                names = list(modes)
                order = names[(r + ms) % 3:] + names[:(r + ms) % 3]
                ns = {}
                for name in order:
                    if name == "memscope" and rec.exists():
                        rec.unlink()
                    ns[name] = run(modes[name])
                for tool in ("memscope", "perf"):
                    for kind in (0, 1):
                        diffs[(tool, ms, kind)].append(ns[tool][kind] / ns["alone"][kind] - 1)
    load_after = os.getloadavg()[0]

    hz = lambda ms: "%g Hz" % (1000 / ms) if ms > 1 else "1 kHz"
    lines = [
        START,
        "Measured with `python3 contrib/bench/slowdown.py --build build --rounds %d --mb %d --seconds %g --rates %s` "
        "(%d CPUs, triad with one thread per CPU, 3 x %d MB per thread; events `%s` on every CPU; load average "
        "%.1f before, %.1f after). Slowdown of the triad's own loop, paired with an alone run in the same "
        "round: mean with its 95%% confidence interval, and the median, over %d rounds; per pass of wall "
        "time and of the triad threads' CPU time."
        % (args.rounds, args.mb, args.seconds, args.rates, os.cpu_count(), args.mb, EVENTS, load_before,
           load_after, args.rounds),
        "",
        "| rate | per pass | memscope record -a: mean [95% CI] | median | perf stat -a -I: mean [95% CI] | median |",
        "|---|---|---|---|---|---|",
    ]
    for ms in sorted(rates, reverse=True):
        for kind, what in ((0, "wall time"), (1, "CPU time")):
            cells = []
            for tool in ("memscope", "perf"):
                values = diffs[(tool, ms, kind)]
                mean, half = mean_ci(values)
                cells.append("%+.2f%% [%+.2f, %+.2f]" % (mean * 100, (mean - half) * 100, (mean + half) * 100))
                cells.append("%+.2f%%" % (statistics.median(values) * 100))
            lines.append("| %s (-I %d) | %s | %s |" % (hz(ms), ms, what, " | ".join(cells)))
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "Workload slowdown under sampling", START, END, text)


if __name__ == "__main__":
    main()
