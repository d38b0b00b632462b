#!/usr/bin/env python3
"""What `memscope top` costs to start and per update as the process table grows, next to procps
top in the same run (and, with --before, an older memscope build).

Start-up: CPU time (user+sys, from wait4) of `top -b -n 1 -I 100`: loading the catalog and the
eBPF probes, the first frame and the first screen printed. Per update: CPU of `-n N` minus CPU of
`-n 1`, over N - 1. Each is measured with the host as it is, then with IDLE sleeping processes
added (contrib/bench/churn forks them) and churn forking ACTIVE short-lived processes a second:
the process table a loaded host has. Medians over --repeat runs, each tool in rotating order.

Usage: top_scale.py [--build DIR] [--before DIR] [--idle 1000] [--active 20] [--updates 10]
                    [--repeat 5] [--write docs/performance.md]
Needs root (eBPF).
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import time

import perfdoc  # beside this script

START, END = "<!-- top-scale:start -->", "<!-- top-scale:end -->"


def cpu_of(cmd):
    """CPU seconds (user + sys) of cmd, run to its end."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit status {status}")
    return usage.ru_utime + usage.ru_stime


def commands(tools, updates):
    """(name, start-up command, N-update command) for each tool."""
    out = []
    for name, memscope in tools:
        base = [memscope, "top", "-b"]
        out.append((name, base + ["-n", "1", "-I", "100"], base + ["-n", str(updates), "-I", "1000"]))
    procps = shutil.which("top")
    if procps:
        out.append(("procps top", [procps, "-b", "-n", "1", "-d", "0.1"],
                    [procps, "-b", "-n", str(updates), "-d", "1"]))
    return out


def measure(cmds, updates, repeat):
    """name -> (start-up samples, per-update samples), in seconds."""
    results = {name: ([], []) for name, _, _ in cmds}
    for r in range(repeat):
        order = cmds[r % len(cmds):] + cmds[:r % len(cmds)]
        for name, first, many in order:
            start = cpu_of(first)
            total = cpu_of(many)
            results[name][0].append(start)
            results[name][1].append((total - start) / (updates - 1))
    return results


def spread(values):
    return "%.1f..%.1f" % (min(values) * 1e3, max(values) * 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--before", help="an older build directory to measure beside it")
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--active", type=int, default=20)
    ap.add_argument("--updates", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    tools = [("memscope top", str(build / "memscope"))]
    if args.before:
        tools.append(("memscope top (before)", str(pathlib.Path(args.before).resolve() / "memscope")))
    cmds = commands(tools, args.updates)

    tables = []
    for label, idle in (("as the host is", 0), (f"+{args.idle} idle, {args.active}/s short-lived", args.idle)):
        load = None
        if idle:
            seconds = 3600
            load = subprocess.Popen([str(build / "contrib" / "bench" / "churn"), str(args.active), str(seconds), "0",
                                     str(idle)], stdout=subprocess.PIPE, text=True, start_new_session=True)
            assert load.stdout.readline().startswith("ready")
            time.sleep(1)
        try:
            processes = len([p for p in os.listdir("/proc") if p.isdigit()])
            tables.append((label, processes, measure(cmds, args.updates, args.repeat)))
        finally:
            if load:
                os.killpg(load.pid, 15)
                load.wait()

    lines = [START,
             "Measured with `sudo python3 contrib/bench/top_scale.py --build build%s --idle %d --active %d "
             "--updates %d --repeat %d` (%d CPUs; medians of %d runs in rotating order, min..max in "
             "brackets; ms of CPU)." % (f" --before {args.before}" if args.before else "", args.idle,
                                        args.active, args.updates, args.repeat, os.cpu_count(), args.repeat),
             "",
             "| processes | program | start-up to the first screen | per update | per update / procps top's |",
             "|---|---|---|---|---|"]
    for label, processes, results in tables:
        procps = statistics.median(results["procps top"][1]) if "procps top" in results else None
        for name, (starts, updates) in results.items():
            per = statistics.median(updates)
            ratio = "%.2f" % (per / procps) if procps else "-"
            lines.append("| %d (%s) | %s | %.1f [%s] | %.2f [%s] | %s |" % (
                processes, label, name, statistics.median(starts) * 1e3, spread(starts), per * 1e3,
                spread(updates), ratio))
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope top start-up and per-update cost", START, END, text)


if __name__ == "__main__":
    main()
