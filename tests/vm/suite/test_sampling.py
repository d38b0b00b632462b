"""Attribution by sampling in the 2-node guest: page faults sampled with their
addresses (and, with NUMA balancing on, the hinting faults by which the kernel
samples ongoing accesses), each page's node read with move_pages, and the CPU's
node from the topology. numapair binds one array to each node and touches both
from node 0, so the kernel's own answer (move_pages, printed by the workload)
says which array is remote."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest

from .helpers import BUILD, ROOT, run, vmstat

NUMAPAIR = BUILD / "contrib" / "bench" / "numapair"
HOTARRAY = BUILD / "contrib" / "bench" / "hotarray"
DEBUG_SCHED = pathlib.Path("/sys/kernel/debug/sched/numa_balancing")


def marked_line(marker):
    for number, text in enumerate((ROOT / "contrib" / "bench" / "numapair.c").read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(marker)


def report(memscope, rec, sort):
    res = run([memscope, "report", "--sort", sort, "--format", "json", "--top", "0", str(rec)])
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def numa_balancing():
    """NUMA balancing on, scanning soon and often (the guest is thrown away)."""
    if not DEBUG_SCHED.exists():
        subprocess.run(["mount", "-t", "debugfs", "none", "/sys/kernel/debug"], check=False)
    pathlib.Path("/proc/sys/kernel/numa_balancing").write_text("1")
    for name, value in (("scan_delay_ms", "100"), ("scan_period_min_ms", "100")):
        if (DEBUG_SCHED / name).exists():
            (DEBUG_SCHED / name).write_text(value)
    yield
    pathlib.Path("/proc/sys/kernel/numa_balancing").write_text("0")


def test_remote_and_local_arrays(memscope, tmp_path, numa_balancing):
    mib = 4
    pages = mib * 1024 * 1024 // 4096
    before = vmstat()
    rec = tmp_path / "pair.rec"
    res = run([memscope, "record", "--no-ctl", "--sample", "mem", "-o", rec, "--", NUMAPAIR, mib, 6])
    assert res.returncode == 0, res.stderr
    hint_faults = vmstat()["numa_hint_faults"] - before["numa_hint_faults"]
    # The kernel's answer: where the pages are.
    placed = json.loads([line for line in res.stdout.splitlines() if line.startswith("{")][-1])
    assert placed["a_remote_node"] == 1 and placed["a_local_node"] == 0, placed
    j = report(memscope, rec, "obj,srcline,node,cpu_node")
    for obj, line, data_node, remote in (("a_remote (numapair)", "REMOTE-LINE", 1, True),
                                         ("a_local (numapair)", "LOCAL-LINE", 0, False)):
        rows = [r for r in j["rows"] if r["keys"]["obj"] == obj]
        total = sum(r["samples"] for r in rows)
        assert total >= pages, (obj, total, [(r["keys"], r["samples"]) for r in j["rows"][:8]], j["lost"],
                                j["node_from"])
        top = max(rows, key=lambda r: r["samples"])
        assert top["keys"] == {"obj": obj, "srcline": f"numapair.c:{marked_line(line)}", "node": data_node,
                               "cpu_node": 0}, top
        share = sum(r["remote" if remote else "local"] for r in rows) / total
        assert share >= 0.9, (obj, share, j["node_from"], rows[:3])
    # With NUMA balancing on, the kernel kept sampling the arrays after their first touch.
    if hint_faults > 0:
        assert j["samples"] > 2 * pages, (j["samples"], hint_faults)


def test_unreadable_maps_of_another_users_process(memscope, numa_balancing):
    """An unprivileged user sampling the whole system (perf_event_paranoid -1):
    root's /proc/PID/maps cannot be read and its pages cannot be asked about;
    the report says so for that process's samples."""
    shared = pathlib.Path(tempfile.mkdtemp(prefix="memscope-sampling-"))
    shared.chmod(0o777)
    paranoid = pathlib.Path("/proc/sys/kernel/perf_event_paranoid")
    old = paranoid.read_text()
    paranoid.write_text("-1")
    # Root's process, started before the recording (so only /proc/PID/maps could
    # tell its mappings), faulting once the recording runs.
    victim = subprocess.Popen([str(HOTARRAY), "8", "--wait"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    # LeakSanitizer cannot symbolize as another user, so its suppressions
    # (tests/lsan.supp, by function name) would not apply: leaks are checked
    # by every other test, run as root.
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    rec = shared / "a.rec"
    recorder = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", memscope, "record",
                                 "--no-ctl", "-a", "--sample", "page-faults", "-e", "page-faults", "-o", str(rec),
                                 "--", "sleep", "10"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    try:
        deadline = time.monotonic() + 60
        while not (rec.exists() and rec.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)
        victim.communicate(b"go", timeout=120)
        out, err = recorder.communicate(timeout=120)
        assert recorder.returncode == 0, err
        assert "maps is unreadable (Permission denied)" in err, err
        j = report(memscope, rec, "pid,obj")
        rows = [r for r in j["rows"] if r["keys"]["pid"] == victim.pid]
        assert rows, (victim.pid, j["rows"][:10])
        hot = max(rows, key=lambda r: r["samples"])
        assert hot["samples"] >= 8 * 1024 * 1024 // 4096 * 0.9, hot
        assert hot["keys"]["obj"].startswith(
            f"[unknown: /proc/{victim.pid}/maps is unreadable (Permission denied)"), hot
        assert hot["data_nodes"] == {"?": hot["samples"]}, hot
        # Its pages could not be asked about (or it had exited by then: it
        # exits as soon as its table is filled).
        assert j["node_from"].get("not-allowed", 0) > 0, j["node_from"]
        assert j["node_from"].get("not-allowed", 0) + j["node_from"].get("exited", 0) >= hot["samples"], j["node_from"]
    finally:
        paranoid.write_text(old)
        for proc in (victim, recorder):
            if proc.poll() is None:
                proc.kill()
        shutil.rmtree(shared, ignore_errors=True)
