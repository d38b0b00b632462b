#!/usr/bin/env python3
"""How fast memscope reads a recording: the synthetic 1-hour, 50-series, 10 Hz recording of
lua_report.py (36,000 frames, about 10 MB), read by `memscope report FILE` (no script: the
file read, the frames replayed, the summary) and `memscope stat --input FILE`, next to
`cat FILE` and `wc -l FILE` (the floor of getting the bytes in and finding the lines) and
contrib/bench/intscan FILE (every integer in the file added up: the floor of reading the numbers), with
--baseline DIR the same commands of another build (before/after), all alternating, --runs times.
`report, 1 frame` reads a recording of one frame: the fixed cost of a run (start-up, exit).

Rates are the file's size over the command's CPU time (user + system, wait4 of the command
itself: contrib/bench/rusage) and over its wall time; medians with interquartile ranges.
--cpu N runs every command on CPU N alone (taskset): on a virtual machine a process the
scheduler moves between CPUs can take half as much CPU time again, by chance, which makes the
spread of unpinned runs wider than the differences between the commands.

Usage: read_rate.py [--build DIR] [--baseline DIR] [--frames N] [--runs N] [--cpu N] [--write docs/performance.md]
"""
import argparse
import os
import pathlib
import tempfile

import perfdoc  # beside this script
from benchutil import measured, spread
from lua_report import write_recording

START, END = "<!-- read-rate:start -->", "<!-- read-rate:end -->"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another build directory to compare (e.g. the previous version)")
    ap.add_argument("--frames", type=int, default=36000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--cpu", type=int, help="run every command on this CPU (taskset -c)")
    ap.add_argument("--write")
    args = ap.parse_args()
    pin = ["taskset", "-c", str(args.cpu)] if args.cpu is not None else []
    builds = [("memscope", pathlib.Path(args.build))]
    if args.baseline:
        builds.append(("baseline", pathlib.Path(args.baseline)))
    with tempfile.TemporaryDirectory() as tmp:
        rec = pathlib.Path(tmp) / "hour.rec"
        write_recording(rec, args.frames)
        one = pathlib.Path(tmp) / "one.rec"
        write_recording(one, 1)
        size = rec.stat().st_size
        cmds = {}
        for label, build in builds:
            cmds["%s report" % label] = [str(build / "memscope"), "report", str(rec)]
            cmds["%s stat --input" % label] = [str(build / "memscope"), "stat", "--input", str(rec), "-o", "/dev/null"]
            cmds["%s report, 1 frame" % label] = [str(build / "memscope"), "report", str(one)]
        cmds["cat"] = ["cat", str(rec)]
        cmds["wc -l"] = ["wc", "-l", str(rec)]
        cmds["integer scan"] = [str(builds[0][1] / "contrib/bench/intscan"), str(rec)]
        names = list(cmds)
        res = {name: ([], []) for name in names}
        tool_build = builds[0][1]
        for r in range(args.runs):
            for name in names[r % len(names):] + names[:r % len(names)]:
                usage = measured(tool_build, pin + cmds[name])
                res[name][0].append(usage.cpu_s)
                res[name][1].append(usage.wall_s)
    lines = [
        START,
        "Measured with `python3 contrib/bench/read_rate.py --build build --frames %d --runs %d%s%s` (%d CPUs%s; a "
        "%.1f MB recording of %d frames x 50 series; medians of %d alternating runs, interquartile range in "
        "brackets; load average %.1f at the end)." % (args.frames, args.runs,
                                                      " --baseline BUILD" if args.baseline else "",
                                                      " --cpu %d" % args.cpu if args.cpu is not None else "",
                                                      os.cpu_count(),
                                                      ", every command on CPU %d" % args.cpu
                                                      if args.cpu is not None else "",
                                                      size / 1e6, args.frames, args.runs, os.getloadavg()[0]),
        "",
        "| command | CPU time | MB/s of CPU time | wall time |",
        "|---|---|---|---|",
    ]
    for name in names:
        cpu, wall = res[name]
        rates = [size / 1e6 / max(c, 1e-6) for c in cpu]
        lines.append("| %s | %s | %s | %s |" % (name, spread(cpu, "%.3f", 1, " s"),
                                                "-" if "1 frame" in name else spread(rates, "%.0f"),
                                                spread(wall, "%.3f", 1, " s")))
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "Reading recordings", START, END, text)


if __name__ == "__main__":
    main()
