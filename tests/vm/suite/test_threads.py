"""A process with one thread on each node's CPU and all its data on node 0: thread 0's
pages are local, thread 1's are remote. The kernel's numastat shows both halves; memscope
must report them per node and per thread."""
import json

from .helpers import WORKLOADS, numastat_all, numastat_delta, pages_by_node, require_event, require_option, run, \
    stat_rows

NPAGES = 4096
STARTUP_SLACK = 4096  # python, numactl and their libraries, page tables
NOISE = 512


def workload():
    return ["numactl", "--membind=0", "python3", WORKLOADS / "thread_per_node.py", NPAGES]


def test_numastat_shows_local_and_remote_threads(thp_off):
    before = numastat_all()
    res = run(workload())
    d = numastat_delta(before)
    assert res.returncode == 0, res.stderr
    threads = json.loads(res.stdout)["threads"]
    assert [(t["cpu"], t["ran_on"]) for t in threads] == [(0, 0), (1, 1)], threads
    # Everything on node 0; the thread on CPU 1 allocated it from node 1.
    assert 2 * NPAGES <= d[0]["numa_hit"] <= 2 * NPAGES + STARTUP_SLACK + NOISE, d
    assert NPAGES <= d[0]["local_node"], d
    assert NPAGES <= d[0]["other_node"], d
    assert d[1]["numa_hit"] <= NOISE, d


def test_memscope_per_node(memscope, thp_off):
    require_event(memscope, "proc.pages_alloc")
    # memscope and all it starts on node 0's CPU and memory, so that also what happens
    # before numactl's policy applies (memscope's child, numactl's exec) is on node 0.
    res = run(["numactl", "--cpunodebind=0", "--membind=0", memscope, "stat", "-e", "proc.pages_alloc",
               "--per-node", "-x,", "--self-describing", "--", *workload()])
    assert res.returncode == 0, res.stderr
    pages = pages_by_node(stat_rows(res.stderr + "\n" + res.stdout))
    assert 2 * NPAGES <= pages.get(0, 0) <= 2 * NPAGES + STARTUP_SLACK, pages
    assert pages.get(1, 0) <= 0.05 * pages.get(0, 0), pages


def test_memscope_per_thread(memscope, thp_off):
    require_option(memscope, "--per-thread")
    require_event(memscope, "proc.faults", ["--per-thread"])
    res = run([memscope, "stat", "-e", "proc.faults", "--per-thread", "-x,", "--self-describing", "--", *workload()])
    assert res.returncode == 0, res.stderr
    threads = json.loads(next(line for line in res.stdout.splitlines() if line.startswith("{")))["threads"]
    faults = {}
    for row in stat_rows(res.stderr + "\n" + res.stdout):
        if row["time"] == "total" and row["event"] == "proc.faults":
            faults[row["scope"]] = row["value"]
    for thread in threads:
        scope = next((s for s in faults if str(thread["tid"]) in s), None)
        assert scope is not None, (thread, faults)
        # One fault per page touched, plus a few for the thread's stack.
        assert NPAGES <= faults[scope] <= NPAGES + 64, (thread, faults[scope])

