"""DAMON's hot and cold bytes per process from physical regions: the host's own paddr kdamond,
read passively, joined with each large process's resident pages (/proc/PID/pagemap), in
`top -b` (HOT_B, COLD_B) and in a `record -a` replayed by top. Asserts only on the test's own
processes."""
import pathlib
import subprocess
import sys
import time

import pytest

from conftest import run
from test_damon import skip_without_kdamond_and_pagemap

MIB = 1 << 20
ADMIN = pathlib.Path("/sys/kernel/mm/damon/admin/kdamonds")

# 256 MiB written once (in huge pages where the kernel can: physically contiguous memory, so
# that DAMON's regions, which sample one page each, soon separate the buffer from its
# neighbours), then either written again and again (hot) or left alone (cold).
WORKLOAD = """
import mmap, sys, time
m = mmap.mmap(-1, 256 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_HUGEPAGE)
mv = memoryview(m)
mv[::4096] = b"\\x01" * 65536
print("ready", flush=True)
hot = sys.argv[1] == "hot"
i = 0
while True:
    if hot:
        i += 1
        mv[::4096] = bytes([i & 255]) * 65536
    else:
        time.sleep(1)
"""


def aggregation_s():
    """The running kdamond's aggregation interval, in seconds (from its sysfs files)."""
    for kd in sorted(ADMIN.glob("[0-9]*")):
        if (kd / "state").read_text().strip() == "on":
            return int((kd / "contexts/0/monitoring_attrs/intervals/aggr_us").read_text()) / 1e6
    pytest.skip("no kdamond is on")


@pytest.fixture
def running_kdamond(memscope):
    skip_without_kdamond_and_pagemap(memscope, "per-process bytes from physical regions read pagemap's page frames: root only")


@pytest.fixture
def workloads(tmp_path):
    """A hot and a cold 256 MiB process, each ready (its buffer resident) before the test goes on."""
    script = tmp_path / "buf.py"
    script.write_text(WORKLOAD)
    procs = {}
    try:
        for kind in ("hot", "cold"):
            p = subprocess.Popen([sys.executable, str(script), kind], stdout=subprocess.PIPE, text=True)
            assert p.stdout.readline().strip() == "ready"
            procs[kind] = p
        yield {kind: p.pid for kind, p in procs.items()}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()


def process_rows(text):
    """top -b: each update's process rows by pid, as {column: text}."""
    updates = []
    for block in text.split("top: update=")[1:]:
        rows, names = {}, None
        for line in block.splitlines():
            f = line.split()
            if f[:3] == ["PID", "THR", "FAULTS/s"]:
                names = f
            elif names and f and f[0].isdigit() and len(f) >= len(names):
                rows[int(f[0])] = dict(zip(names[:-1], f[:len(names) - 1]))
            elif names and not f:
                names = None
        updates.append(rows)
    return updates


def mib(cell):
    return None if cell in (None, "n/a") else float(cell) / MIB


def hot_and_cold_seen(updates, pids):
    """The first update (index) where the hot process has >= 200 MiB hot and, in that update or an
    earlier one, the cold process >= 200 MiB cold and < 56 MiB hot; None when none has."""
    hot_at = cold_at = None
    for i, u in enumerate(updates):
        h = u.get(pids["hot"], {})
        c = u.get(pids["cold"], {})
        if hot_at is None and (mib(h.get("HOT_B")) or 0) >= 200:
            hot_at = i
        if cold_at is None and (mib(c.get("COLD_B")) or 0) >= 200 and mib(c.get("HOT_B")) is not None \
                and mib(c.get("HOT_B")) < 56:
            cold_at = i
    return None if hot_at is None or cold_at is None else max(hot_at, cold_at)


def test_top_and_record_show_hot_and_cold_bytes_of_each_process(memscope, running_kdamond, workloads, tmp_path):
    """Whole-machine top: the hot workload's row reaches >= 200 MiB hot and the cold one's >= 200 MiB
    cold (idle for one aggregation: --damon-cold-age) and < 56 MiB hot, within 24 aggregations
    (DAMON's regions adapt to the buffers over several). record -a, run beside it, holds the same
    per-process series: top --input replays them into rows that show the same."""
    aggr = aggregation_s()
    cold_age = max(1, int(aggr))
    deadline_s = 24 * aggr
    rec = tmp_path / "procs.rec"
    record = subprocess.Popen([memscope, "record", "-a", "-I", "1000", "-e", "damon.hot_bytes,damon.cold_bytes",
                               "--damon-cold-age", str(cold_age), "-o", str(rec), "--", "sleep", str(int(deadline_s + 60))],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    top = subprocess.Popen([memscope, "top", "-b", "-I", "1000", "-n", str(int(deadline_s)),
                            "--damon-cold-age", str(cold_age)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    text, seen = "", None
    try:
        for line in top.stdout:
            text += line
            if line.startswith("top: update=") and hot_and_cold_seen(process_rows(text), workloads) is not None:
                seen = True
                break
        # One more aggregation, so that the recording holds the join top showed.
        time.sleep(aggr + 2)
    finally:
        top.terminate()
        record.send_signal(2)
        top_err = top.communicate(timeout=60)[1]
        rec_err = record.communicate(timeout=120)[1]
    updates = process_rows(text)
    assert seen, ("not within 24 aggregations", [(u.get(workloads["hot"]), u.get(workloads["cold"]))
                                                  for u in updates[-3:]], top_err)
    assert "per process: the 32 largest processes by resident memory" in rec_err, rec_err
    assert record.returncode == 0, rec_err
    res = run([memscope, "top", "-b", "--input", str(rec)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert hot_and_cold_seen(process_rows(res.stdout), workloads) is not None, res.stdout[-3000:]
