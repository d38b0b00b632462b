#!/usr/bin/env python3
"""How long `memscope report --lua SCRIPT` takes over a long recording.

Writes a synthetic recording of a 1-hour run at 10 Hz (36,000 frames) with 50 series - per-CPU
page-faults on a 2-node, 16-CPU machine, the eBPF proc.* series, pages allocated per node -
then times each built-in script over it (median of --repeat runs, wall clock, the whole
command: reading, parsing, the Lua callbacks and the report).

Usage: lua_report.py [--build DIR] [--frames N] [--repeat N] [--write docs/performance.md]
"""
import argparse
import json
import os
import pathlib
import platform
import random
import resource
import re
import statistics
import subprocess
import sys
import tempfile
import time

import perfdoc  # beside this script
from benchutil import quartiles

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ["summary.lua", "faults.lua", "remote_ratio.lua", "bandwidth.lua", "topdown.lua", "numa_balance.lua"]
START, END = "<!-- lua_report.py begin -->", "<!-- lua_report.py end -->"


def write_recording(path, frames, interval_ns=100_000_000):
    cpus = [[c, c % 8, 0, c // 8, c // 8] for c in range(16)]
    series = [{"name": "page-faults", "kind": "counter", "cpu": c, "node": c // 8, "socket": c // 8} for c in range(16)]
    series += [{"name": "context-switches", "kind": "counter", "cpu": c, "node": c // 8, "socket": c // 8}
               for c in range(16)]
    for name in ("proc.faults", "proc.faults_user", "proc.faults_kernel", "proc.faults_read", "proc.faults_write",
                 "proc.oncpu_ns", "proc.offcpu_ns", "proc.switches", "proc.migrations", "proc.migrations_cross_node",
                 "proc.numa_task_moves", "proc.numa_task_swaps", "proc.pages_migrated", "proc.pages_alloc_unplaced"):
        series.append({"name": name, "kind": "counter"})
    series += [{"name": "proc.pages_alloc", "kind": "counter", "node": n} for n in (0, 1)]
    series.append({"name": "proc.processes", "kind": "gauge"})
    series.append({"name": "proc.bpf_drops", "kind": "counter"})
    assert len(series) == 50
    header = {"format": "memscope-recording", "version": 1, "memscope": "bench",
              "start": {"time": "2026-01-01T00:00:00.000Z", "unix_ns": 1767225600000000000},
              "interval_ns": interval_ns, "target": "synthetic 1-hour run",
              "host": {"hostname": "bench", "kernel": "bench", "arch": "x86_64", "cpus": cpus, "nodes": [0, 1],
                       "distance": [[10, 21], [21, 10]], "pmus": ["software", "tracepoint"]},
              "series": series}
    rnd = random.Random(1)
    with open(path, "w") as f:
        f.write(json.dumps(header, separators=(",", ":")) + "\n")
        for i in range(frames):
            values = [rnd.randrange(0, 5000) for _ in series]
            f.write('{"t":%d,"d":%d,"v":[%s]}\n' % ((i + 1) * interval_ns, interval_ns, ",".join(map(str, values))))
        f.write(json.dumps({"end": "the command exited", "frames": frames}) + "\n")


def run_timed(cmd):
    """Wall clock, CPU time (user + system) and time inside Lua callbacks of one run of cmd."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MEMSCOPE_LUA_STATS="1"))
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"{cmd} failed:\n{res.stderr}")
    in_lua = sum(float(m) for m in re.findall(r"lua stats: .*?, ([0-9.]+) s", res.stderr))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), in_lua


def time_report(memscope, recording, scripts, repeat):
    cmd = [memscope, "report"]
    for script in scripts:
        cmd += ["--lua", str(script)]
    runs = [run_timed(cmd + [str(recording)]) for _ in range(repeat)]
    return tuple(quartiles(r[i] for r in runs) for i in range(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("MEMSCOPE_BUILD", ROOT / "build"))
    ap.add_argument("--frames", type=int, default=36000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", help="put the results in this markdown file, under '## Lua reports'")
    args = ap.parse_args()
    memscope = str(pathlib.Path(args.build) / "memscope")
    with tempfile.TemporaryDirectory() as tmp:
        rec = pathlib.Path(tmp) / "long.rec"
        write_recording(rec, args.frames)
        size = rec.stat().st_size
        (pathlib.Path(tmp) / "empty.lua").write_text("-- reads the file, runs no callback\n")
        rows = [("(no callbacks: reading the file)", time_report(memscope, rec, [pathlib.Path(tmp) / "empty.lua"],
                                                                args.repeat))]
        for script in SCRIPTS:
            rows.append((script, time_report(memscope, rec, [script], args.repeat)))
        rows.append(("all six at once", time_report(memscope, rec, SCRIPTS, args.repeat)))
    cell = lambda q: f"{q[1]:6.3f}s [{q[0]:.3f}, {q[2]:.3f}]"
    lines = [f"{'report':34s} {'wall':>22s} {'CPU':>22s} {'in Lua':>22s}"]
    lines += [f"{name:34s} {cell(wall):>22s} {cell(cpu):>22s} {cell(lua):>22s}" for name, (wall, cpu, lua) in rows]
    text = "\n".join([
        START,
        f"Measured {time.strftime('%Y-%m-%d')}, kernel {platform.release()}, {os.cpu_count()} CPUs, with:",
        "",
        "```",
        f"contrib/bench/lua_report.py --frames {args.frames} --repeat {args.repeat} --write docs/performance.md",
        "```",
        "",
        f"A synthetic recording of a 1-hour run at 10 Hz: {args.frames} frames x 50 series "
        f"({size / 1e6:.1f} MB of JSON Lines); `memscope report --lua SCRIPT FILE`, the whole command "
        f"(reading the file, the callbacks, the report): median wall clock and CPU time (user + system) "
        f"of {args.repeat} runs with their interquartile range in brackets, and the time spent inside the scripts' callbacks (MEMSCOPE_LUA_STATS=1):",
        "",
        "```",
        *lines,
        "```",
        END,
    ])
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "Lua reports", START, END, text)


if __name__ == "__main__":
    main()
