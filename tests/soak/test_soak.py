"""memscope stays fast for as long as it runs: two minutes of `record -a -I 10` while a workload
forks 200 short-lived processes a second (each with a thread). The frames a second memscope
delivers at the end are those it delivered at the start, and its own memory and open descriptors
do not grow: the eBPF task table forgets exited threads and the series table reuses the indices
of processes that are gone. Everything is asserted on memscope's own process."""
import json
import os
import pathlib
import statistics
import subprocess
import time

from proc_status import status_kib

SECONDS = 120
WINDOW = 20          # seconds compared at the start and at the end
RATE = 200           # processes forked a second


def cpu_ticks(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime + stime (proc(5) fields 14 and 15)


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_soak_with_fork_churn(memscope, build_dir, tmp_path):
    rec = tmp_path / "soak.rec"
    churn = build_dir / "contrib" / "bench" / "churn"
    # A small ASan quarantine: the sanitizer's own cache of freed memory would fill for minutes.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4"
    proc = subprocess.Popen([memscope, "record", "-a", "-I", "10", "-e", "proc.faults,proc.threads,proc.processes",
                             "-o", str(rec), "--", str(churn), str(RATE), str(SECONDS), "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    samples = []
    try:
        start = time.monotonic()
        # Samples while the workload runs, not while memscope ends.
        while proc.poll() is None and time.monotonic() - start < SECONDS - 10:
            time.sleep(5)
            if proc.poll() is None:
                samples.append((time.monotonic() - start, status_kib(proc.pid, "VmRSS"), fds(proc.pid), cpu_ticks(proc.pid)))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    forked = int(out.split("forked ")[1].split()[0])
    assert forked >= RATE * SECONDS * 0.8, out

    frames, series, retired = [], 0, 0
    for line in rec.read_text().splitlines():
        record = json.loads(line)
        if "v" in record:
            frames.append((record["t"] / 1e9, len(record["v"])))
        elif "series" in record and "t" in record:
            series += len(record["series"])
        elif "retire" in record:
            retired += len(record["retire"])
        elif "brief" in record:   # a process's whole life in one frame (format 5): added and retired
            series += len(record["brief"])
            retired += len(record["brief"])
    end = frames[-1][0]
    first = sum(1 for t, _ in frames if 2 <= t < 2 + WINDOW) / WINDOW
    last = sum(1 for t, _ in frames if end - 2 - WINDOW <= t < end - 2) / WINDOW
    widths = [n for _, n in frames]
    hz = os.sysconf("SC_CLK_TCK")
    early = [s for s in samples if s[0] >= 30]
    cpu_ms_per_frame = (early[-1][3] - early[0][3]) / hz * 1000 / max(1, (early[-1][0] - early[0][0]) * last)
    print(f"\nsoak: {len(frames)} frames in {end:.0f} s; {first:.1f} frames/s in the first {WINDOW} s, "
          f"{last:.1f} in the last; {series} series added, {retired} retired; frame length "
          f"{widths[0]}..{max(widths)} (last {widths[-1]}); RSS {early[0][1]}..{early[-1][1]} KiB, "
          f"fds {early[0][2]}..{early[-1][2]}; {cpu_ms_per_frame:.2f} ms of CPU a frame")
    # The processes came and went: their series were added and retired.
    assert series >= forked and retired >= forked * 0.9
    # Frames a second at the end within 10% of the start.
    assert last >= first * 0.9, (first, last)
    # The frame length follows the processes alive at once, not every process seen.
    assert max(widths) < 3 * (forked / SECONDS + 200), max(widths)
    # Memory and descriptors flat after the first 30 s.
    rss = [s[1] for s in early]
    assert max(rss) <= rss[0] * 1.10 + 1024, rss
    assert len({s[2] for s in early}) == 1, [s[2] for s in early]
