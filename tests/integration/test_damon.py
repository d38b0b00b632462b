"""The damon source in passive mode: it reads the host's running kdamond through the
damon:damon_aggregated tracepoint, shows bytes per node, and never changes that kdamond."""
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

from conftest import run
from stat_output import counter_output

ADMIN = pathlib.Path("/sys/kernel/mm/damon/admin/kdamonds")
MIB = 1 << 20

# Keeps 256 MiB of anonymous memory hot: one write to every 4 KiB page, over and over.
HOT_BUFFER = """
import mmap, sys, time
m = mmap.mmap(-1, 256 << 20)
mv = memoryview(m)
mv[::4096] = b"\\x01" * 65536
end = time.monotonic() + float(sys.argv[1])
i = 0
while time.monotonic() < end:
    i += 1
    mv[::4096] = bytes([i & 255]) * 65536
"""


def damon_why(memscope):
    """None when the damon source can run here, else why not (memscope's own words)."""
    res = run([memscope, "list", "--sources"])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.split()[:2] == ["damon", "yes"]:
            return None
        if line.split()[:2] == ["damon", "no"]:
            return lines[i + 1].split("why not: ", 1)[1]
    pytest.fail("no damon source in list --sources:\n" + res.stdout)


def skip_without_kdamond_and_pagemap(memscope, why_root):
    """Per-process bytes from physical regions need a kdamond to read and pagemap's page frames."""
    why = damon_why(memscope)
    if why is not None:
        pytest.skip(f"no kdamond to read passively here: {why}")
    if os.geteuid() != 0:
        pytest.skip(why_root)


def kdamond_state():
    """Every readable file of every kdamond (state, pid, operations, intervals, schemes, targets)."""
    state = {}
    for path in sorted(ADMIN.rglob("*")):
        if path.is_file() and not path.name.startswith("update_schemes") and path.name != "commit":
            try:
                state[str(path)] = path.read_text()
            except OSError as e:
                state[str(path)] = f"error {e.errno}"
    return state


def node_rows(text):
    """stat -x, --per-node -I: (time, node, value or None, event) of each line."""
    rows = []
    for line in text.splitlines():
        f = line.split(",")
        if len(f) >= 6 and re.fullmatch(r"[0-9.]+", f[0]) and f[1].startswith("N"):
            rows.append((float(f[0]), int(f[1][1:]), int(f[3]) if f[3].isdigit() else None, f[5]))
    return rows


@pytest.fixture
def running_kdamond(memscope):
    why = damon_why(memscope)
    if why is not None:
        pytest.skip(f"no kdamond to read passively here: {why}")


def test_hot_buffer_shows_up_as_accessed_bytes_on_node0(memscope, running_kdamond, tmp_path):
    """A 256 MiB buffer this test keeps hot is in the bytes accessed on node 0 within two
    aggregations (5 s each by default): 256 MiB more than the least of the 11 s before it (the
    rest of the machine's accesses), in the same run; every aggregation memscope read covers the
    whole monitored range (the histogram's buckets add up to the same bytes every time)."""
    script = tmp_path / "hot.py"
    script.write_text(HOT_BUFFER)
    quiet_s, hot_s = 11, 16
    res = run([memscope, "stat", "-a", "-x,", "--per-node", "-I", "1000",
               "-e", "damon.accessed_bytes,damon.access_rate_bytes", "--",
               "sh", "-c", f'sleep {quiet_s}; exec "{sys.executable}" "{script}" {hot_s} >/dev/null'], timeout=120)
    assert res.returncode == 0, res.stderr
    assert re.search(r"damon: reading kdamond \d+ \(pid \d+, paddr, sample \S+ \S+, aggregation", res.stderr), \
        res.stderr
    accessed, buckets = {}, {}
    for t, node, value, event in node_rows(counter_output(res.stderr)):
        if node != 0 or value is None:
            continue
        if event == "damon.accessed_bytes":
            accessed[t] = value
        elif event == "damon.access_rate_bytes":
            buckets[t] = value      # the buckets of one node, added up by --per-node
    quiet = [v for t, v in accessed.items() if t <= quiet_s]
    # Two aggregations of 5 s after the buffer is hot (and the second or so it takes to touch it).
    hot = [v for t, v in accessed.items() if quiet_s + 1 < t <= quiet_s + 12.5]
    assert quiet and hot, accessed
    assert max(hot) >= 256 * MIB and max(hot) - min(quiet) >= 256 * MIB, (quiet, hot)
    # Each aggregation's regions cover the kdamond's whole target: the same total every interval,
    # no more than the machine's memory.
    totals = set(buckets.values())
    assert len(totals) == 1, buckets
    mem_total = int(re.search(r"MemTotal:\s+(\d+) kB", pathlib.Path("/proc/meminfo").read_text())[1]) * 1024
    assert 256 * MIB < totals.pop() <= mem_total + (1 << 30), buckets


def test_the_kdamond_is_never_written(memscope, running_kdamond, tmp_path):
    """memscope opens nothing under /sys/kernel/mm/damon for writing, and the kdamond's files say
    the same before and after (the same thread: it was not restarted)."""
    before = kdamond_state()
    trace = tmp_path / "trace"
    res = run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", str(trace), memscope, "stat", "-a",
               "-m", "damon.accessed_bytes,damon.hot_bytes,damon.cold_bytes", "--", "sleep", "6"], timeout=90,
              env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))   # LeakSanitizer cannot run under ptrace
    assert res.returncode == 0, res.stderr
    after = kdamond_state()
    assert after == before
    opened = [l for l in trace.read_text().splitlines() if "/kernel/mm/damon" in l or "kdamonds" in l]
    assert opened, "memscope did not read the kdamond's files"
    written = [l for l in opened if "O_WRONLY" in l or "O_RDWR" in l or "O_CREAT" in l or "O_TRUNC" in l]
    assert written == []


def test_bad_threshold_names_the_option(memscope):
    res = run([memscope, "stat", "--damon-cold-age", "0", "-a", "-m", "damon.cold_bytes", "true"])
    assert res.returncode == 2
    assert "--damon-cold-age 0: expected seconds from 1 to 86400" in res.stderr
    res = run([memscope, "stat", "--damon-hot", "101", "-e", "damon.hot_bytes", "true"])
    assert res.returncode == 2
    assert "--damon-hot 101: expected a percentage of a region's samples from 1 to 100" in res.stderr


def test_an_unknown_damon_series_is_a_usage_error(memscope):
    res = run([memscope, "stat", "-a", "-e", "damon.warm_bytes", "true"])
    assert res.returncode == 2
    assert "'damon.warm_bytes' is not a DAMON series" in res.stderr


def test_hot_threshold_moves_bytes_between_hot_and_not(memscope, running_kdamond):
    """--damon-hot 1 counts every accessed region as hot: hot = accessed in the same aggregation;
    at 100 only regions accessed in every sample are, never more than at 1."""
    def run_with(pct):
        res = run([memscope, "stat", "-a", "-x,", "--damon-hot", str(pct), "-e",
                   "damon.accessed_bytes,damon.hot_bytes", "--", "sleep", "6"], timeout=60)
        assert res.returncode == 0, res.stderr
        vals = {}
        for line in counter_output(res.stderr).splitlines():
            f = line.split(",")
            if len(f) >= 3 and f[0].isdigit():
                vals[f[2]] = int(f[0])
        return vals
    low = run_with(1)
    assert low["damon.hot_bytes"] == low["damon.accessed_bytes"], low
    high = run_with(100)
    assert high["damon.hot_bytes"] <= high["damon.accessed_bytes"], high


def test_top_shows_hot_and_cold_bytes_per_node(memscope, running_kdamond):
    """top's node panel: HOT_B and COLD_B of node 0 once an aggregation has been read, together no
    more than the node's memory."""
    res = run([memscope, "top", "-b", "-n", "4", "-I", "2500", "--damon-hot", "10"], timeout=90)
    assert res.returncode == 0, res.stderr
    blocks = res.stdout.split("top: update=")
    header = next(l for l in blocks[-1].splitlines() if l.startswith("NODE "))
    cols = header.split()
    row = next(l for l in blocks[-1].splitlines() if l.startswith("0 ")).split()
    hot, cold = row[cols.index("HOT_B")], row[cols.index("COLD_B")]
    assert hot != "n/a" and cold != "n/a", res.stdout
    node_mem = int(re.search(r"MemTotal:\s+(\d+) kB",
                             pathlib.Path("/sys/devices/system/node/node0/meminfo").read_text())[1]) * 1024
    assert 0 < float(hot) + float(cold) <= node_mem, (hot, cold, node_mem)


def test_metrics_endpoint_exports_damon_bytes_per_node(memscope, running_kdamond):
    """live's /metrics: damon.accessed_bytes as a gauge with the node label, once an aggregation
    has been read (within 12 s: two aggregations of 5 s)."""
    from live_server import Live

    live = Live(memscope, ["--no-ui", "--listen", "127.0.0.1:0", "-a", "-I", "500", "-m", "damon.accessed_bytes"])
    try:
        deadline, found = time.time() + 12, None
        while time.time() < deadline and not found:
            text = live.metrics()
            found = re.search(r'^memscope_damon_accessed_bytes\{[^}]*node="0"[^}]*\} (\d+(?:\.\d+)?(?:e\+\d+)?)$',
                              text, re.M)
            time.sleep(0.5)
        assert found, text
        assert "# TYPE memscope_damon_accessed_bytes gauge" in text
        assert float(found.group(1)) > 0
    finally:
        live.stop()


def test_doctor_and_list_say_whose_kdamond_is_read(memscope, running_kdamond):
    """doctor names the kdamond (index, thread, operations, intervals from its sysfs files)."""
    kd = next(k for k in sorted(ADMIN.glob("[0-9]*")) if (k / "state").read_text().strip() == "on")
    pid = (kd / "pid").read_text().strip()
    aggr_us = int((kd / "contexts/0/monitoring_attrs/intervals/aggr_us").read_text())
    res = run([memscope, "doctor"])
    line = next((l for l in res.stdout.splitlines() if "DAMON" in l), "")
    assert line.startswith("  ok    DAMON: kdamond " + kd.name + " (pid " + pid + ", paddr, "), res.stdout
    assert f"aggregation {aggr_us // 1000000} s" in line or f"aggregation {aggr_us // 1000} ms" in line, line
    assert "never changed" in line
