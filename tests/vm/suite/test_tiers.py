"""Memory tiers in the tiered guest (tests/vm/run.sh with MEMSCOPE_VM_TIERED=1): node 2 has
memory and no CPU and HMAT says it is slower, so the kernel puts it in a lower tier. memscope's
topology must be the kernel's (numactl -H, memory_tierN/nodelist), and over a window in which a
workload's pages are demoted to node 2 (by filling node 0) and promoted back, memscope's promotion, demotion and
used-memory counts per node must be the deltas (and the last values) of the kernel's own
nodeN/vmstat and nodeN/meminfo over that window."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from .helpers import WORKLOADS, run, stat_rows

pytestmark = pytest.mark.skipif(os.environ.get("MEMSCOPE_VM_TIERED") != "1",
                                reason="runs in the tiered guest: MEMSCOPE_VM_TIERED=1 tests/vm/run.sh")

NODES = (0, 1, 2)
NPAGES = 8192                        # 32 MiB
TIERING = pathlib.Path("/sys/devices/virtual/memory_tiering")
DEMOTE_KEYS = ("pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged", "pgdemote_proactive")


def node_vmstat(node):
    return {k: int(v) for k, v in (line.split() for line in
                                   pathlib.Path(f"/sys/devices/system/node/node{node}/vmstat").read_text().splitlines())}


def mem_used(node):
    for line in pathlib.Path(f"/sys/devices/system/node/node{node}/meminfo").read_text().splitlines():
        words = line.split()
        if words[2] == "MemUsed:":
            return int(words[3]) * 1024
    raise AssertionError(f"node{node}/meminfo has no MemUsed")


def kernel_tiers():
    """{node: N} from memory_tierN/nodelist."""
    tiers = {}
    for d in TIERING.glob("memory_tier*"):
        for part in (d / "nodelist").read_text().strip().split(","):
            lo, _, hi = part.partition("-")
            for node in range(int(lo), int(hi or lo) + 1):
                tiers[node] = int(d.name[len("memory_tier"):])
    return tiers


def test_topology_and_tiers_are_the_kernels(memscope):
    tiers = kernel_tiers()
    assert set(tiers) == set(NODES), f"the kernel tiers {tiers}"
    assert tiers[0] == tiers[1] < tiers[2], f"node 2 is not in a slower tier than nodes 0-1: {tiers} " \
        f"(HMAT: {pathlib.Path('/sys/devices/system/node/node2/access0/initiators/read_latency').read_text()})"
    hw = run(["numactl", "-H"]).stdout
    cpus = {int(n): c.split() for n, c in re.findall(r"^node (\d+) cpus:(.*)$", hw, re.M)}
    assert cpus == {0: ["0"], 1: ["1"], 2: []}, hw
    res = run([memscope, "list", "--topology"])
    assert res.returncode == 0, res.stderr
    table = res.stdout.split("Memory tiers")[1].split("\n\n")[0]
    shown = {int(m[0]): (int(m[1]), m[2]) for m in re.findall(r"^\s+(\d+)\s+(\d+)\s+(yes|no)\s", table, re.M)}
    assert shown == {n: (tiers[n], "yes" if cpus[n] else "no") for n in NODES}, res.stdout
    assert re.search(r"^\s+0\s+\d+\s+yes\s+-\s+2$", table, re.M), table    # nodes 0 and 1 demote to 2
    nodes = res.stdout.split("\nNUMA nodes\n")[1].split("\n\n")[0]
    assert re.search(r"^\s+2\s+\(no CPUs\)", nodes, re.M), nodes


def test_promotion_demotion_and_used_memory_are_the_kernels(memscope, thp_off):
    """The workload's pages on node 0 are demoted by node 0's own reclaim when a child bound to
    node 0 fills it (no memory.reclaim: pgdemote_proactive stays), then promoted back when it
    touches them: memscope's counts equal the kernel's per node."""
    pathlib.Path("/proc/sys/kernel/numa_balancing").write_text("2")
    pathlib.Path("/sys/kernel/mm/numa/demotion_enabled").write_text("true")
    marker = pathlib.Path("/tmp/memscope-tiers.done")
    marker.unlink(missing_ok=True)
    work = subprocess.Popen(
        # The default policy (local): NUMA balancing scans only VMAs whose policy lets pages move
        # (MPOL_F_MOF, mm/mempolicy.c), which numactl's --localalloc or --membind would not.
        ["numactl", "--cpunodebind=0", sys.executable, "-u", str(WORKLOADS / "tiered.py"), str(NPAGES), "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=WORKLOADS)
    try:
        assert work.stdout.readline().strip() == "ready"
        before = {n: node_vmstat(n) for n in NODES}
        stat = subprocess.Popen(
            [memscope, "stat", "--log-fd", "1", "-a", "--per-node", "-x,", "--self-describing", "-I", "1000", "-m",
             "tier.promoted_pages,tier.demoted_pages,numa.used_bytes", "--",
             "sh", "-c", f"while [ ! -e {marker} ]; do sleep 0.2; done"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = stat.stdout.readline()           # the header: counting has begun
        assert first.startswith("time,"), first + stat.stderr.read()
        work.stdin.write("go\n")
        work.stdin.flush()
        done = work.stdout.readline()
        # Used memory while memscope still runs (its own memory, ~40 MiB on node 0 with ASan, is
        # freed when it exits) and the workload still holds its pages.
        used = {n: mem_used(n) for n in NODES}
        marker.touch()
        out, err = stat.communicate(timeout=120)
        used_after = {n: mem_used(n) for n in NODES}
        after = {n: node_vmstat(n) for n in NODES}
        work.stdin.write("exit\n")
        work.stdin.flush()
        work.wait(timeout=60)
    finally:
        work.kill()
    assert stat.returncode == 0, err
    rows = stat_rows(first + out)
    t = {(r["scope"], r["event"]): r["value"] for r in rows if r["time"] == "total"}
    # A gauge's total is its peak over the run; its last read is the last interval's row.
    last = {(r["scope"], r["event"]): r["value"] for r in rows if r["time"] != "total"}
    demoted = {n: sum(after[n].get(k, 0) - before[n].get(k, 0) for k in DEMOTE_KEYS) for n in NODES}
    promoted = {n: after[n]["pgpromote_success"] - before[n]["pgpromote_success"] for n in NODES}
    by_reclaimer = {k: after[0].get(k, 0) - before[0].get(k, 0) for k in DEMOTE_KEYS}
    placed = {int(k): v for k, v in json.loads(done.split(None, 2)[2]).items()}
    print(f"kernel: demoted {demoted} ({by_reclaimer} from node 0), promoted {promoted}, "
          f"MemUsed {used} then {used_after}, the workload's pages by node after the fill {placed}; "
          f"memscope totals {t}, last {last}")
    # Filling node 0 demoted the workload's pages to node 2, node 0's own reclaim did it (kswapd
    # or direct), and (half at least) came back to node 0.
    assert placed.get(2, 0) >= NPAGES * 9 // 10, (placed, done)
    assert by_reclaimer["pgdemote_kswapd"] + by_reclaimer["pgdemote_direct"] >= NPAGES * 9 // 10, by_reclaimer
    assert by_reclaimer["pgdemote_proactive"] == 0, by_reclaimer
    assert demoted[0] >= NPAGES * 9 // 10, (demoted, done)
    assert promoted[0] >= NPAGES // 2, (promoted, done)
    for n in NODES:
        assert t[(f"node{n}", "tier.demoted_pages")] == demoted[n], (n, t, demoted)
        assert t[(f"node{n}", "tier.promoted_pages")] == promoted[n], (n, t, promoted)
    # Used memory: memscope's last read lies between the test's reads just before and just after
    # it ended, while the workload held its pages. Node 2 also holds other pages node 0's reclaim
    # demoted (the guest's own), which move back as they are touched: 256 KiB of slack beyond the
    # two reads; nodes 0-1 run the rest of the guest and the ending memscope: 8 MiB.
    for n in NODES:
        slack = 256 * 1024 if n == 2 else 8 << 20
        low, high = min(used[n], used_after[n]) - slack, max(used[n], used_after[n]) + slack
        assert low <= last[(f"node{n}", "numa.used_bytes")] <= high, (n, last, used, used_after)
    # Node 2 held the demoted pages before half of them were promoted: its peak is above its last.
    assert t[("node2", "numa.used_bytes")] >= last[("node2", "numa.used_bytes")], (t, last)
    # Per tier: the sums of the tiers' nodes.
    tiers = kernel_tiers()
    res = run([memscope, "stat", "--log-fd", "1", "-a", "--per-tier", "-x,", "--self-describing", "-m",
               "tier.promoted_pages",
               "--", "true"])
    assert res.returncode == 0, res.stderr
    scopes = {r["scope"] for r in stat_rows(res.stdout)}
    assert scopes == {f"tier{tiers[0]}", f"tier{tiers[2]}"}, res.stdout
