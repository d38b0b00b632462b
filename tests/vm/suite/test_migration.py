"""Pages moved between nodes with move_pages(2) and migratepages(8): the kernel's
pgmigrate_success counts them one by one, and memscope must count the same."""
import json
import re
import subprocess

import pytest

from .helpers import WORKLOADS, require_event, run, stat_rows, vmstat

NPAGES = 2048


def move_pages_cmd():
    # Pages first land on node 0 (CPU and memory of node 0), then move to node 1.
    return ["numactl", "--cpunodebind=0", "--membind=0", "python3", WORKLOADS / "move_pages.py", NPAGES, 1]


def test_move_pages_counted_by_the_kernel(thp_off, no_background_migration):
    res = run(move_pages_cmd())
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["before"] == {"0": NPAGES}, out
    assert out["status"] == {"1": NPAGES}, out
    assert out["after"] == {"1": NPAGES}, out
    # Measured around the one move_pages call: nothing else starts to migrate in the guest, but
    # pages NUMA balancing marked before it was switched off may still move when touched; the
    # kernel counts those in numa_pages_migrated too, and move_pages' pages only in
    # pgmigrate_success.
    v = out["vmstat"]
    assert v["pgmigrate_success"] - v["numa_pages_migrated"] == NPAGES, out
    assert v["pgmigrate_fail"] == 0, out


def test_move_pages_counted_by_memscope(memscope, thp_off, no_background_migration):
    require_event(memscope, "proc.pages_migrated")
    res = run([memscope, "stat", "-e", "proc.pages_migrated", "-x,", "--self-describing", "--", *move_pages_cmd()])
    assert res.returncode == 0, res.stderr
    rows = [r for r in stat_rows(res.stderr + "\n" + res.stdout)
            if r["time"] == "total" and r["event"] == "proc.pages_migrated"]
    assert rows, res.stdout
    assert sum(r["value"] for r in rows) == NPAGES, rows


def numa_maps(pid):
    """{vma start: {node: pages}} from /proc/PID/numa_maps."""
    vmas = {}
    with open(f"/proc/{pid}/numa_maps") as f:
        for line in f:
            fields = line.split()
            vmas[fields[0]] = {int(m.group(1)): int(m.group(2))
                               for m in map(re.compile(r"N(\d+)=(\d+)").fullmatch, fields[1:]) if m}
    return vmas


def on_node(vmas, node):
    return sum(pages.get(node, 0) for pages in vmas.values())


@pytest.fixture
def holder(thp_off, no_background_migration):
    """A process with NPAGES touched pages on node 0, waiting for its stdin to close."""
    proc = subprocess.Popen(["numactl", "--cpunodebind=0", "--membind=0", "python3", WORKLOADS / "hold.py",
                             str(NPAGES)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready "), line
        yield proc.pid, format(int(line.split()[1], 16), "x")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def migratepages(pid, memscope=None):
    cmd = ["migratepages", pid, 0, 1]
    if memscope:
        cmd = [memscope, "stat", "-e", "proc.pages_migrated", "-x,", "--self-describing", "--", *cmd]
    before_maps, before = numa_maps(pid), vmstat()
    res = run(cmd)
    after_maps, after = numa_maps(pid), vmstat()
    assert res.returncode == 0, res.stderr
    # migratepages moves the process's private pages; pages it shares (libc, python)
    # stay. What moved is what numa_maps now shows on node 1 and did not before.
    moved = on_node(after_maps, 1) - on_node(before_maps, 1)
    others = {key: after.get(key, 0) - before.get(key, 0)
              for key in ("numa_pages_migrated", "compact_migrate_scanned", "compact_isolated")}
    return moved, after["pgmigrate_success"] - before["pgmigrate_success"], after_maps, res, others


def test_migratepages_counted_by_the_kernel(holder):
    pid, buffer_start = holder
    moved, migrated, after_maps, _, others = migratepages(pid)
    # The whole buffer is on node 1 now, and it is part of what moved.
    assert after_maps[buffer_start] == {1: NPAGES}, after_maps[buffer_start]
    assert moved >= NPAGES, moved
    # With NUMA balancing and proactive compaction off, nothing else starts to migrate. Pages
    # balancing marked before it was switched off still fault and move when touched (the kernel
    # counts those in numa_pages_migrated as well as in pgmigrate_success): take them out.
    assert migrated - others["numa_pages_migrated"] == moved, (migrated, moved, others)


def test_migratepages_counted_by_memscope(memscope, holder):
    require_event(memscope, "proc.pages_migrated")
    pid, _ = holder
    moved, migrated, _, res, others = migratepages(pid, memscope)
    rows = [r for r in stat_rows(res.stderr + "\n" + res.stdout)
            if r["time"] == "total" and r["event"] == "proc.pages_migrated"]
    assert rows, res.stdout
    # migrate_pages(2) moves them in migratepages' own context: that is the task memscope ran.
    assert moved >= NPAGES, moved
    # memscope counts the pages migratepages moved (what numa_maps shows moved); the
    # kernel's pgmigrate_success is system-wide and may add other tasks' migrations.
    assert sum(r["value"] for r in rows) == moved, (rows, migrated, moved)
    assert moved <= migrated - others["numa_pages_migrated"] <= moved + 64, (migrated, moved, others)
