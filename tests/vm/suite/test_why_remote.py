""""Why is this page remote", each cause made by a workload (workloads/why_remote.py) and
checked against the kernel: where move_pages(2) finds the pages, and /proc/vmstat's hinting
fault and migration counters around them. numa_balance.lua over a recording of the run must
name that cause with the kernel's count."""
import json
import re

from .helpers import WORKLOADS, run

NPAGES = 256           # 1 MiB: one pipe of 256 pages holds them all (pinned)
METRICS = "numa.hint_faults,numa.hint_faults_local,kernel.pages_migrated,kernel.page_migrate_failures"
EVENTS = "proc.pages_migrated,proc.pages_migrate_failed,proc.pages_migrate_failed_by_reason"


def recorded_report(memscope, tmp_path, mode):
    """(the workload's JSON, numa_balance.lua's report) of a system-wide recording of it."""
    rec = tmp_path / f"{mode}.rec"
    res = run([memscope, "record", "-a", "-o", rec, "-m", METRICS, "-e", EVENTS, "--",
               "python3", WORKLOADS / "why_remote.py", mode, NPAGES])
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    rep = run([memscope, "report", "--lua", "numa_balance.lua", rec])
    assert rep.returncode == 0, rep.stderr
    print(json.dumps(out), rep.stdout, sep="\n")
    return out, rep.stdout


def row_total(report, label):
    match = re.search(rf"^\s*{re.escape(label)}\s+(\d+)\s", report, re.M)
    assert match, f"no row {label!r} in\n{report}"
    return int(match.group(1))


def test_first_touch_by_a_thread_on_the_other_node(memscope, thp_off, no_background_migration, tmp_path):
    """The process runs on node 0's CPU, one of its threads on node 1 touches its pages first:
    the kernel puts them on node 1 and, with balancing off, nothing moves them back."""
    out, report = recorded_report(memscope, tmp_path, "first-touch")
    assert out["where"] == {"1": NPAGES}, out
    assert out["vmstat"] == {"pgmigrate_success": 0, "pgmigrate_fail": 0, "numa_pages_migrated": 0,
                             "numa_hint_faults": 0}, out
    assert row_total(report, "NUMA hinting faults") == 0
    assert ("    - no hinting faults: the node of first touch decides where a page lives, and nothing "
            "moves it back\n") in report, report


def test_a_migration_that_fails(memscope, thp_off, no_background_migration, tmp_path):
    """Pages held by a pipe (vmsplice) cannot move: move_pages(2) to node 1 leaves all of them
    on node 0, and pgmigrate_fail grows by exactly their number."""
    out, report = recorded_report(memscope, tmp_path, "pinned")
    assert out["before"] == {"0": NPAGES} and out["where"] == {"0": NPAGES}, out
    assert out["not_moved"] == NPAGES, out
    assert out["vmstat"]["pgmigrate_fail"] == NPAGES, out
    assert out["vmstat"]["pgmigrate_success"] == 0 and out["vmstat"]["numa_pages_migrated"] == 0, out
    assert row_total(report, "page migrations failed") == NPAGES
    assert f"    - {NPAGES} page migrations failed: those pages stayed where they were\n" in report, report
    # ... and in whose context, with the kernel's reason: the workload's own move_pages(2) (MR_SYSCALL,
    # which the tracepoint names syscall_or_cpuset), per process from the eBPF probe.
    pid = out["pid"]
    assert (f"    - pid {pid} (python3): {NPAGES} page migrations failed in its context (move_pages, mbind, "
            f"NUMA balancing or compaction it ran), 0 pages migrated; the kernel's reason: "
            f"syscall_or_cpuset {NPAGES}\n") in report, report
    assert re.search(rf"^\s*{pid}\s+python3\s+0\s+{NPAGES}\s+syscall_or_cpuset {NPAGES}$", report, re.M), report
