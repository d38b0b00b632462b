#!/usr/bin/env python3
"""CPU use of `memscope top` itself, at -I 1000 and -I 250, on the full screen (a pseudo-terminal
with TERM=xterm-256color) and in batch mode, next to procps `top -b` at the same delays.

Each run lasts --seconds; the CPU time (user+sys) comes from wait4() of the child. Start-up
(loading the catalog and the eBPF probes) is measured with one update and subtracted, so the
table shows what top costs per second while it runs. Medians over --repeat runs.

Usage: top_cpu.py [--build DIR] [--seconds S] [--repeat N] [--write docs/performance.md]
"""
import argparse
import fcntl
import os
import pathlib
import pty
import select
import shutil
import statistics
import struct
import subprocess
import termios
import time

import perfdoc  # beside this script

START, END = "<!-- top-cpu:start -->", "<!-- top-cpu:end -->"


def run_measured(cmd, terminal):
    """(cpu seconds, wall seconds) of cmd; on a pseudo-terminal when terminal is True."""
    env = dict(os.environ, TERM="xterm-256color")
    t0 = time.monotonic()
    if terminal:
        pid, fd = pty.fork()
        if pid == 0:
            # A 120x40 terminal, as a window would report it.
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            os.execvpe(cmd[0], cmd, env)
        # Keep reading what it draws, as a terminal would.
        while True:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    if not os.read(fd, 65536):
                        break
                except OSError:
                    break
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
        if not done:
            done, status, usage = os.wait4(pid, 0)
        os.close(fd)
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit status {status}")
    return usage.ru_utime + usage.ru_stime, wall


def median_cpu(cmd, terminal, repeat):
    runs = [run_measured(cmd, terminal) for _ in range(repeat)]
    return statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--intervals", default="1000,250", help="update intervals in ms")
    ap.add_argument("--write")
    args = ap.parse_args()
    memscope = str(pathlib.Path(args.build) / "memscope")
    procps_top = shutil.which("top")

    rows = []
    for interval in (int(i) for i in args.intervals.split(",")):
        updates = max(1, int(args.seconds * 1000 / interval))
        for mode, terminal, extra in (("full screen", True, []), ("batch", False, ["-b"])):
            base = [memscope, "top", "-I", str(interval)] + extra
            start_cpu, start_wall = median_cpu(base + ["-n", "1"], terminal, args.repeat)
            cpu, wall = median_cpu(base + ["-n", str(updates)], terminal, args.repeat)
            steady = (cpu - start_cpu) / max(wall - start_wall, 1e-9)
            rows.append((f"memscope top {mode}", interval, updates, cpu, start_cpu, steady))
        if procps_top:
            cmd = [procps_top, "-b", "-d", str(interval / 1000), "-n", str(updates)]
            cpu, wall = median_cpu(cmd, False, args.repeat)
            rows.append(("procps top -b", interval, updates, cpu, None, cpu / wall))

    processes = len([p for p in os.listdir("/proc") if p.isdigit()])
    lines = [
        START,
        "Measured with `python3 contrib/bench/top_cpu.py --build build --seconds %.0f --repeat %d` "
        "(%d processes on the machine, %d CPUs; medians of %d runs)." % (
            args.seconds, args.repeat, processes, os.cpu_count(), args.repeat),
        "",
        "| program | interval | updates | CPU time | of which start-up | CPU while running |",
        "|---|---|---|---|---|---|",
    ]
    for name, interval, updates, cpu, start, steady in rows:
        # Start-up is measured in separate runs: when it varies by more than the
        # whole steady cost, the difference can come out below zero.
        running = "%.2f%% of one CPU" % (steady * 100) if steady >= 0 else "below the start-up noise"
        lines.append("| %s | %d ms | %d | %.0f ms | %s | %s |" % (
            name, interval, updates, cpu * 1e3, "%.0f ms" % (start * 1e3) if start is not None else "-",
            running))
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope top CPU use", START, END, text)


if __name__ == "__main__":
    main()
