"""DAMON's active mode in a guest whose kernel has DAMON's sysfs interface and virtual-address
operations (Debian 12's 6.12: tests/vm/run.sh with MEMSCOPE_VM_KERNEL_PKG=linux-image-6.12.*):
memscope starts its own kdamond on the command it runs, the command's hot and cold bytes are
its two buffers, and the kdamond is gone afterwards: at memscope's end, after `kill -9` of
memscope (its watchdog stops it), and after `kill -9` of memscope and its watchdog together (the
next start stops it, naming it)."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from .helpers import WORKLOADS, node_of_scope, run, stat_rows

KDAMONDS = pathlib.Path("/sys/kernel/mm/damon/admin/kdamonds")
MARKER = pathlib.Path("/run/memscope/damon-kdamond")
MIB = 1 << 20
BUFFER_MIB = 64


def vaddr_available():
    ops = KDAMONDS.parent.parent / "kdamonds"
    if not (KDAMONDS / "nr_kdamonds").exists():
        return "this kernel has no DAMON sysfs interface (CONFIG_DAMON_SYSFS): boot the 6.12 kernel"
    if not pathlib.Path("/sys/kernel/tracing/events/damon/damon_aggregated").exists():
        return "no damon:damon_aggregated tracepoint"
    return None


pytestmark = pytest.mark.skipif(vaddr_available() is not None, reason=str(vaddr_available()))


def nr_kdamonds():
    return int((KDAMONDS / "nr_kdamonds").read_text())


def kdamond_threads():
    found = []
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().startswith("kdamond"):
                    found.append(int(d.name))
            except OSError:
                pass
    return found


@pytest.fixture
def no_kdamond():
    """No kdamond before, none left after; NUMA balancing off meanwhile (the tiered guest's tests
    turn it on: its hinting faults and promotions would move the workload's pages and change the
    access bits DAMON reads)."""
    assert nr_kdamonds() == 0, "the guest starts with no kdamond"
    balancing = pathlib.Path("/proc/sys/kernel/numa_balancing")
    saved = balancing.read_text()
    balancing.write_text("0")
    yield
    balancing.write_text(saved)
    # Whatever a failed test left: not for the next one to find.
    if nr_kdamonds():
        try:
            (KDAMONDS / "0" / "state").write_text("off")
        except OSError:
            pass
        (KDAMONDS / "nr_kdamonds").write_text("0")


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_hot_and_cold_buffers_of_a_command(memscope, no_kdamond):
    """64 MiB written over and over and 64 MiB written once: the command's hot bytes cover the
    first and not the second, its cold bytes (untouched 3 s) the second. DAMON's regions are
    adaptive (10 to 1000 regions, split and merged every aggregation), so a region boundary
    need not fall on a buffer's edge: the bounds allow 8 MiB either way, and the interpreter's own
    few MiB of hot memory."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-I", "1000", "--damon", "active", "--damon-cold-age", "3",
               "-e", "damon.hot_bytes,damon.cold_bytes,damon.accessed_bytes,damon.aggregations",
               "--", sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", 25],
              timeout=240)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "memscope started kdamond 0" in res.stderr, res.stderr
    assert "--damon active" in res.stderr, res.stderr
    rows = [r for r in stat_rows(res.stderr) if r["time"] != "total"]
    by_time = {}
    for r in rows:
        if isinstance(r["value"], float):
            by_time.setdefault(float(r["time"]), {})[r["event"]] = r["value"]
    # The last intervals, once the regions have settled (DAMON splits them each aggregation):
    # the last three that have all three values.
    full = [v for t, v in sorted(by_time.items())
            if all(k in v for k in ("damon.hot_bytes", "damon.cold_bytes", "damon.accessed_bytes"))]
    assert len(full) >= 6, out
    settled = full[-4:-1]   # the very last one may be after the workload's end
    print("settled intervals (MiB):", [{k: round(x / MIB, 1) for k, x in v.items()} for v in settled])
    hot = max(v["damon.hot_bytes"] for v in settled)
    cold = max(v["damon.cold_bytes"] for v in settled)
    assert (BUFFER_MIB - 8) * MIB <= hot <= (BUFFER_MIB + 8 + 8) * MIB, out
    assert (BUFFER_MIB - 8) * MIB <= cold, out
    # Gone at the end: nr_kdamonds back to 0 and no kdamond thread.
    assert nr_kdamonds() == 0
    assert wait_for(lambda: not kdamond_threads(), 5), kdamond_threads()
    assert not MARKER.exists()


def test_list_and_doctor_say_active_mode_is_available(memscope, no_kdamond):
    res = run([memscope, "list", "--sources"])
    assert res.returncode == 0, res.stderr
    line = next(l for l in res.stdout.splitlines() if l.split()[:1] == ["damon"])
    assert line.split()[1] == "yes", res.stdout
    doc = run([memscope, "doctor"], timeout=120)
    assert "ok    DAMON: no kdamond runs: the damon series start memscope's own (active mode" in doc.stdout, doc.stdout


def start_killable(memscope):
    proc = subprocess.Popen([memscope, "stat", "-I", "1000", "--damon", "active", "-e", "damon.hot_bytes", "--",
                             sys.executable, WORKLOADS / "hot_cold.py", "--mib", "4", "--seconds", "120"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if not wait_for(lambda: MARKER.exists() and nr_kdamonds() == 1 and
                    (KDAMONDS / "0" / "state").read_text().strip() == "on", 60):
        proc.kill()
        pytest.fail(f"no kdamond of memscope's on within 60 s (marker {MARKER.exists()}, nr_kdamonds "
                    f"{nr_kdamonds()}); memscope said: {proc.communicate()[1]}")
    marker = MARKER.read_text().split()
    fields = dict(zip(marker[0::2], (int(x) for x in marker[1::2])))
    workload = int((KDAMONDS / "0/contexts/0/targets/0/pid_target").read_text())
    assert fields["memscope"] == proc.pid
    assert fields["pid"] == int((KDAMONDS / "0" / "pid").read_text())
    return proc, fields, workload


def test_kill_9_of_memscope_the_watchdog_stops_its_kdamond(memscope, no_kdamond):
    proc, fields, workload = start_killable(memscope)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    try:
        # The watchdog sees memscope's end at once: nr_kdamonds 0, the thread and marker gone.
        assert wait_for(lambda: nr_kdamonds() == 0, 10)
        assert wait_for(lambda: not pathlib.Path(f"/proc/{fields['pid']}").exists(), 10)
        assert wait_for(lambda: not pathlib.Path(f"/proc/{fields['watchdog']}").exists(), 10)
        assert not MARKER.exists()
    finally:
        os.kill(workload, signal.SIGKILL)


def test_kill_9_of_memscope_and_watchdog_the_next_start_stops_it(memscope, no_kdamond):
    proc, fields, workload = start_killable(memscope)
    os.kill(fields["watchdog"], signal.SIGKILL)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    os.kill(workload, signal.SIGKILL)
    time.sleep(1)
    # Nobody stopped it: with its target gone the kdamond may have ended on its own, but its
    # directory stays (nr_kdamonds 1), and with it DAMON refuses any new kdamond.
    assert nr_kdamonds() == 1
    assert MARKER.exists()
    # doctor names it and changes nothing.
    doc = run([memscope, "doctor"], timeout=120)
    assert (f"kdamond 0 (pid {fields['pid']}) was started by memscope pid {fields['memscope']}, which was killed "
            "with its watchdog" in doc.stdout), doc.stdout
    assert nr_kdamonds() == 1 and MARKER.exists()
    res = run([memscope, "stat", "--damon", "active", "-e", "damon.hot_bytes", "--", "true"], timeout=120)
    assert res.returncode == 0, res.stderr
    assert (f"removed kdamond 0 (pid {fields['pid']}) that memscope pid {fields['memscope']} started"
            in res.stderr), res.stderr
    assert nr_kdamonds() == 0
    assert not MARKER.exists()
    assert not pathlib.Path(f"/proc/{fields['pid']}").exists()


def test_record_keeps_each_process_hot_and_cold_bytes(memscope, no_kdamond, tmp_path):
    """record keeps a series per process (label pid) beside the total, and report shows them: the
    workload's own pid has the hot buffer's bytes as its peak hot bytes."""
    rec = tmp_path / "damon.rec"
    res = run([memscope, "record", "-o", rec, "-I", "1000", "--damon-cold-age", "3",
               "-e", "damon.hot_bytes,damon.cold_bytes",
               "--", sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", 25],
              timeout=240)
    assert res.returncode == 0, res.stdout + res.stderr
    pid = json.loads(res.stdout.splitlines()[0])["pid"]
    rep = run([memscope, "report", "--format", "json", rec])
    assert rep.returncode == 0, rep.stderr
    rows = [r for line in rep.stdout.splitlines() if line.startswith("{")
            for r in json.loads(line).get("rows", [])]
    by = {(r["series"], r["labels"]): r for r in rows}
    print({k: (v["peak"], v["last"]) for k, v in by.items()})
    process, total = f"pid={pid},instance=damon", "instance=damon"
    for series in ("damon.hot_bytes", "damon.cold_bytes"):
        assert (series, process) in by, rep.stdout
        assert (series, total) in by, rep.stdout
    hot = float(by[("damon.hot_bytes", process)]["peak"])
    cold = float(by[("damon.cold_bytes", process)]["peak"])
    # Peaks over the whole run: the first aggregation can see both buffers being written, and
    # at the end the hot one is idle too, so only the lower bounds say something here (the
    # upper bounds are test_hot_and_cold_buffers_of_a_command's, on settled intervals).
    assert (BUFFER_MIB - 8) * MIB <= hot, rep.stdout
    assert (BUFFER_MIB - 8) * MIB <= cold, rep.stdout
    # One process: the total is that process's.
    assert float(by[("damon.hot_bytes", total)]["peak"]) == hot
    assert nr_kdamonds() == 0


def test_whole_machine_hot_bytes_per_node(memscope, no_kdamond):
    """-a: memscope's kdamond monitors physical memory (regions: each node's memory blocks) and
    the bytes are split by node. The 64 MiB written continuously, bound to node 1, are hot on node 1
    and not on node 0. Node 1's hot bytes may hold a little more (page tables, memscope's own
    buffers on CPU 1), so the bound above is loose; node 0's must stay below the buffer."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-a", "--per-node", "-I", "1000",
               "--damon", "active", "-e", "damon.hot_bytes,damon.accessed_bytes",
               "--", "numactl", "--membind=1", "--cpunodebind=1",
               sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", 25],
              timeout=240)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "memscope started kdamond 0" in res.stderr and "paddr" in res.stderr, res.stderr
    hot = {}
    for r in stat_rows(res.stderr):
        if r["time"] != "total" and r["event"] == "damon.hot_bytes" and isinstance(r["value"], float):
            hot.setdefault(float(r["time"]), {})[node_of_scope(r["scope"])] = r["value"]
    full = [v for _, v in sorted(hot.items()) if 0 in v and 1 in v]
    assert len(full) >= 6, out
    settled = full[-4:-1]
    print("settled hot bytes per node (MiB):", [{n: round(x / MIB, 1) for n, x in v.items()} for v in settled])
    assert (BUFFER_MIB - 8) * MIB <= max(v[1] for v in settled) <= (BUFFER_MIB + 48) * MIB, out
    assert max(v[0] for v in settled) < (BUFFER_MIB - 8) * MIB, out
    assert nr_kdamonds() == 0


def test_catalog_metrics_use_memscope_s_own_kdamond(memscope, no_kdamond):
    """-m damon.hot_bytes resolves through the catalog's damon role: with no kdamond running it
    is not 'unavailable' but measured by memscope's own (paddr), per node."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-a", "--per-node", "-I", "1000",
               "-m", "damon.hot_bytes", "--", "sleep", "4"], timeout=180)
    assert res.returncode == 0, res.stderr
    assert "memscope started kdamond 0" in res.stderr, res.stderr
    rows = [r for r in stat_rows(res.stderr) if r["event"] == "damon.hot_bytes" and r["time"] != "total"]
    nodes = {node_of_scope(r["scope"]) for r in rows if isinstance(r["value"], float)}
    assert {0, 1} <= nodes, res.stderr
    assert nr_kdamonds() == 0


def test_report_sort_obj_gives_each_buffer_its_hot_share(memscope, no_kdamond, tmp_path):
    """record with page-fault samples and memscope's own vaddr kdamond keeps the command's virtual
    regions (damon records with its pid); report --sort obj names both 64 MiB buffers (their first
    write faults every page in) and gives the one written over and over a high hot share and the
    one written once a low one. The buffers are kept apart (--apart): two adjacent anonymous
    mappings are merged by the kernel, and its mmap record then names one 128 MiB object."""
    rec = tmp_path / "obj.rec"
    res = run([memscope, "record", "-o", rec, "-I", "1000", "--sample", "page-faults", "-e", "damon.hot_bytes",
               "--", sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", 50,
               "--apart"], timeout=400)
    assert res.returncode == 0, res.stdout + res.stderr
    first = json.loads(res.stdout.splitlines()[0])
    pid, hot, cold = first["pid"], first["hot"], first["cold"]
    regions = [json.loads(l) for l in rec.read_text().splitlines() if l.startswith('{"damon"')]
    assert any(r.get("pid") == pid for r in regions), "no virtual region of the command was recorded"
    assert json.loads(rec.read_text().splitlines()[0])["version"] >= 4
    rep = run([memscope, "report", "--sort", "obj,pid", "--format", "json", rec])
    assert rep.returncode == 0, rep.stderr
    rows = json.loads(rep.stdout)["rows"]
    share = {}
    for name, (start, _) in (("hot", hot), ("cold", cold)):
        row = next((r for r in rows if r["keys"]["pid"] == pid and r["keys"]["obj"] == f"[anon 0x{start:x} 64.0 MiB rw-]"),
                   None)
        assert row is not None, (name, start, [r["keys"] for r in rows])
        share[name] = row["hot_share"]
    print("hot shares:", share)
    # Per aggregation: MiB of each buffer in hot regions (>= 50% of the samples), and covered.
    by_t = {}
    for r in regions:
        if r.get("pid") != pid:
            continue
        t, start, end, nr, _, samples, _ = r["damon"]
        start, end = int(start, 16), int(end, 16)
        row = by_t.setdefault(t, {"hot": [0, 0], "cold": [0, 0]})
        for name, (lo, hi) in (("hot", hot), ("cold", cold)):
            o = max(0, min(end, hi) - max(start, lo))
            row[name][1] += o
            if nr * 100 >= 50 * samples:
                row[name][0] += o
    print("per aggregation (hot MiB/covered MiB):",
          [(round((t - min(by_t)) / 1e9), *(f"{v[0] >> 20}/{v[1] >> 20}" for v in row.values()))
           for t, row in sorted(by_t.items())])
    # The hot buffer is written every millisecond for 50 s, the cold one only at the start; DAMON's
    # regions take the first several aggregations to settle on the buffers' edges (measured: 97.7%
    # and 1.1-2.7% in two runs).
    assert share["hot"] is not None and share["hot"] >= 0.8, share
    assert share["cold"] is not None and share["cold"] <= 0.15, share
    assert nr_kdamonds() == 0
