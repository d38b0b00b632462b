#!/usr/bin/env python3
"""CPU of the running kdamond (the thread DAMON monitors with) next to memscope's own while
memscope reads it passively: `memscope stat -a -e damon.* -I 1000` for --seconds, alternating with
windows of the same length without memscope, so the kdamond's extra cost of the tracepoint being
read shows as the difference.

The kdamond's CPU is utime+stime of /proc/PID/stat (clock ticks; the pid from
/sys/kernel/mm/damon/admin/kdamonds/N/pid), memscope's from wait4(). Medians over --repeat pairs,
percent of one CPU.

Usage: damon_cpu.py [--build DIR] [--seconds S] [--repeat N]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import time

ADMIN = pathlib.Path("/sys/kernel/mm/damon/admin/kdamonds")
TICK = os.sysconf("SC_CLK_TCK")


def running_kdamond():
    for kd in sorted(ADMIN.glob("[0-9]*")):
        if (kd / "state").read_text().strip() == "on":
            intervals = kd / "contexts/0/monitoring_attrs/intervals"
            return (int((kd / "pid").read_text()), kd.name, (kd / "contexts/0/operations").read_text().strip(),
                    int((intervals / "sample_us").read_text()), int((intervals / "aggr_us").read_text()))
    raise SystemExit("no kdamond runs: nothing to read passively")


def thread_cpu(pid):
    """utime + stime of a thread, seconds."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def window(pid, seconds, memscope=None):
    """(kdamond CPU %, memscope CPU %) over one window."""
    before, t0 = thread_cpu(pid), time.monotonic()
    mine = None
    if memscope:
        cmd = [memscope, "stat", "-a", "-I", "1000", "-e",
               "damon.accessed_bytes,damon.hot_bytes,damon.cold_bytes,damon.access_rate_bytes",
               "--", "sleep", str(seconds)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if status:
            raise SystemExit(f"{' '.join(cmd)}: exit status {status}")
        mine = usage.ru_utime + usage.ru_stime
    else:
        time.sleep(seconds)
    wall = time.monotonic() - t0
    kd = (thread_cpu(pid) - before) / wall * 100
    return kd, (mine / wall * 100 if mine is not None else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(pathlib.Path(__file__).resolve().parents[2] / "build"))
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    memscope = str(pathlib.Path(a.build) / "memscope")
    pid, index, ops, sample_us, aggr_us = running_kdamond()
    print(f"kdamond {index} (pid {pid}, {ops}, sample {sample_us // 1000} ms, aggregation {aggr_us // 1000} ms); "
          f"windows of {a.seconds:.0f} s, {a.repeat} pairs; load {os.getloadavg()[0]:.1f}")
    alone, read, ours = [], [], []
    for _ in range(a.repeat):
        alone.append(window(pid, a.seconds)[0])
        kd, mine = window(pid, a.seconds, memscope)
        read.append(kd)
        ours.append(mine)
    med = statistics.median
    print("| what | median % of a CPU | min-max |")
    print("|---|---|---|")
    print(f"| kdamond alone | {med(alone):.3f} | {min(alone):.3f}-{max(alone):.3f} |")
    print(f"| kdamond while memscope reads it | {med(read):.3f} | {min(read):.3f}-{max(read):.3f} |")
    print(f"| memscope stat -a -I 1000 -e damon.* | {med(ours):.3f} | {min(ours):.3f}-{max(ours):.3f} |")


if __name__ == "__main__":
    main()
