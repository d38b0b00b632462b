#!/usr/bin/env python3
"""How fast `memscope stat -p PID` starts counting a process with many threads, next to
`perf stat -p PID`, in the same run.

For each thread count, a process with that many (sleeping) threads is started
(contrib/bench/threads N 0 0 RUN 0); then, alternately, each tool attaches to it with
-I 100 and is stopped with SIGINT 2 s later (--stop-after-ms). Two figures per run:
- start-up: the time from starting the tool to its first interval line, minus the
  100 ms interval (what the user waits for before counting starts);
- CPU: the tool's user + system time for the whole run (attach, 2 s idle, detach),
  from wait4() of the tool itself (contrib/bench/rusage).
Medians over the runs, with the interquartile range.

Usage: attach_startup.py [--build DIR] [--threads 16,64,256,512] [--runs N] [--write docs/performance.md]
"""
import argparse
import json
import pathlib
import subprocess
import time

import perfdoc  # beside this script
from benchutil import quartiles

EVENTS = "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
START, END = "<!-- attach-startup:start -->", "<!-- attach-startup:end -->"
INTERVAL_MS = 100


def one_run(rusage, cmd, stop_after_ms):
    """(seconds to the first interval line, CPU seconds of the tool)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([rusage, "--signal", "2", "--after", str(stop_after_ms), "--"] + cmd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = None
    for line in proc.stdout:
        field = line.split(",")[0].strip()
        if first is None and field[:1].isdigit():
            first = time.perf_counter() - t0
    err = proc.stderr.read()
    proc.wait()
    usage = json.loads(err[err.rindex("rusage: ") + 8:].splitlines()[0])
    if first is None:
        raise SystemExit("no interval line from %s:\n%s" % (" ".join(cmd), err))
    return first - INTERVAL_MS / 1e3, usage["user_s"] + usage["sys_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", default="16,64,256,512")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--stop-after-ms", type=int, default=2000)
    ap.add_argument("--baseline", help="another build directory whose memscope runs alongside (before/after)")
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    rusage = str(build / "contrib/bench/rusage")
    counts = [int(n) for n in args.threads.split(",")]
    rows = []
    for n in counts:
        run_ms = (args.runs * 2 + 2) * (args.stop_after_ms + 1500) + 5000
        work = subprocess.Popen([str(build / "contrib/bench/threads"), str(n), "0", "0", str(run_ms), "0", "0"],
                                stdout=subprocess.PIPE, text=True)
        pid = work.stdout.readline().split()[1]
        tools = {
            "memscope": [str(build / "memscope"), "stat", "-x,", "--log-fd", "1", "-I", str(INTERVAL_MS), "-p", pid, "-e", EVENTS],
            "perf": ["perf", "stat", "-x,", "--log-fd", "1", "-I", str(INTERVAL_MS), "-p", pid, "-e", EVENTS],
        }
        if args.baseline:
            tools["baseline"] = [str(pathlib.Path(args.baseline) / "memscope")] + tools["memscope"][1:]
        res = {name: ([], []) for name in tools}
        for name, cmd in tools.items():  # warm up
            one_run(rusage, cmd, args.stop_after_ms)
        names = list(tools)
        for r in range(args.runs):
            for name in names[r % len(names):] + names[:r % len(names)]:
                start, cpu = one_run(rusage, tools[name], args.stop_after_ms)
                res[name][0].append(start)
                res[name][1].append(cpu)
        work.kill()
        work.wait()
        rows.append((n, res))

    lines = [
        START,
        "Measured with `python3 contrib/bench/attach_startup.py --build build --threads %s --runs %d%s` "
        "(events: `%s`; medians of %d alternating runs, interquartile range in brackets)."
        % (args.threads, args.runs, " --baseline BUILD" if args.baseline else "", EVENTS, args.runs),
        "",
        "| threads | tool | start-up | CPU | start-up / perf's |",
        "|---|---|---|---|---|",
    ]
    for n, res in rows:
        fmt = lambda q: "%.1f ms [%.1f, %.1f]" % (q[1] * 1e3, q[0] * 1e3, q[2] * 1e3)
        perf_start = quartiles(res["perf"][0])[1]
        for name, (start, cpu) in res.items():
            lines.append("| %d | %s | %s | %s | %.2f |" % (n, name, fmt(quartiles(start)), fmt(quartiles(cpu)),
                                                          quartiles(start)[1] / perf_start))
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope stat -p: attach start-up", START, END, text)


if __name__ == "__main__":
    main()
