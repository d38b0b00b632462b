#!/usr/bin/env python3
"""What memscope live costs: the collector's CPU with the web server and one page streaming,
next to the same session without a client and memscope stat (no server at all), in one run;
and the bytes per second the page receives at -I 100 with 50 series (NUMAscope's live mode
stores 28 KiB/s at 10 Hz).

The 50 series are 50 tracepoints counted system-wide (-a), one chart column each. CPU time
(user+sys) comes from wait4 of memscope through contrib/bench/rusage; each run lasts
--seconds and ends with SIGINT. Runs alternate between the three setups, --repeat times;
medians with interquartile ranges.

Usage: live_overhead.py [--build DIR] [--seconds S] [--repeat N] [--write docs/performance.md]
"""
import argparse
import http.client
import os
import pathlib
import socket
import threading
import time

import benchutil  # beside this script
import perfdoc

START, END = "<!-- live-overhead:start -->", "<!-- live-overhead:end -->"
TRACEFS = pathlib.Path("/sys/kernel/tracing/events")


def tracepoints(n):
    """n tracepoints this kernel has, from subsystems every Linux has."""
    names = []
    for sub in ("sched", "kmem", "timer", "irq", "exceptions", "signal", "task", "workqueue", "syscalls",
                "raw_syscalls", "power", "writeback", "filemap", "mmap_lock", "migrate", "compaction"):
        d = TRACEFS / sub
        if d.is_dir():
            names += sorted(f"{sub}:{e.name}" for e in d.iterdir() if (e / "id").exists()
                            and not e.name.startswith(("sys_enter_", "sys_exit_")))
    if len(names) < n:
        raise SystemExit(f"this kernel has {len(names)} of the {n} tracepoints asked for")
    return names[:n]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stream_client(port, result, stop):
    """A page's stream: bytes received and over how long, from the first byte."""
    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/stream")
            r = conn.getresponse()
            break
        except OSError:
            time.sleep(0.05)
    else:
        return
    first = None
    while not stop.is_set():
        try:
            chunk = r.fp.read1(65536)
        except OSError:
            break
        if not chunk:
            break
        now = time.monotonic()
        if first is None:
            first = now
            result["bytes"] = 0
            continue  # the history sent at once: what matters is the rate after it
        result["bytes"] += len(chunk)
        result["seconds"] = now - first
    conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--interval", type=int, default=100)
    ap.add_argument("--series", type=int, default=50)
    ap.add_argument("--write")
    args = ap.parse_args()
    memscope = str(pathlib.Path(args.build) / "memscope")
    events = ",".join(tracepoints(args.series))
    common = ["-a", "-I", str(args.interval), "-e", events]
    ms = args.seconds * 1000
    cpu = {"stat": [], "live": [], "live+page": []}
    rates = []
    for _ in range(args.repeat):
        u = benchutil.measured(args.build, [memscope, "stat", "-x,", "-o", "/dev/null"] + common, signal_after_ms=ms)
        cpu["stat"].append(u.cpu_s / u.wall_s)
        port = free_port()
        u = benchutil.measured(args.build, [memscope, "live", "--no-ctl", "--listen", f"127.0.0.1:{port}"] + common,
                               signal_after_ms=ms)
        cpu["live"].append(u.cpu_s / u.wall_s)
        port = free_port()
        result, stop = {}, threading.Event()
        client = threading.Thread(target=stream_client, args=(port, result, stop), daemon=True)
        client.start()
        u = benchutil.measured(args.build, [memscope, "live", "--no-ctl", "--listen", f"127.0.0.1:{port}"] + common,
                               signal_after_ms=ms)
        stop.set()
        client.join(10)
        cpu["live+page"].append(u.cpu_s / u.wall_s)
        if result.get("seconds"):
            rates.append(result["bytes"] / result["seconds"])

    hz = 1000 / args.interval
    lines = [START, "",
             f"`contrib/bench/live_overhead.py --seconds {args.seconds:g} --repeat {args.repeat}`: "
             f"{args.series} tracepoints counted system-wide at -I {args.interval} ({hz:g} Hz) on this machine "
             f"({os.cpu_count()} CPUs); CPU of memscope itself as a share of one CPU, median [interquartile range] "
             f"over {args.repeat} runs of {args.seconds:g} s, alternating.", "",
             "| setup | memscope CPU |", "|---|---|",
             f"| memscope stat -x, (no server) | {benchutil.spread(cpu['stat'], '%.2f', 100, ' %')} |",
             f"| memscope live, no client | {benchutil.spread(cpu['live'], '%.2f', 100, ' %')} |",
             f"| memscope live, one page streaming | {benchutil.spread(cpu['live+page'], '%.2f', 100, ' %')} |",
             ""]
    if rates:
        lines += [f"Bytes sent to the page: {benchutil.spread(rates, '%.0f', 1 / 1024 * 1024, ' B/s')} "
                  f"({benchutil.spread(rates, '%.2f', 1 / 1024, ' KiB/s')}) for {args.series} series at {hz:g} Hz; "
                  f"NUMAscope stores 28 KiB/s at 10 Hz, a tenth of that is 2.8 KiB/s. The values are "
                  f"these tracepoints' counts per interval on an idle machine, mostly a few digits each; "
                  f"larger counts take a byte per digit more.", ""]
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope live", START, END, text)


if __name__ == "__main__":
    main()
