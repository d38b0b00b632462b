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
import threading
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


# Generous: they only bound a hang. A TCG guest on a busy host runs many times slower than alone.
HANG_S = 400
# Aggregations that complete after the workload said it loops: the first ones are skipped
# (the one under way when it started also saw the first writes of both buffers, and DAMON's
# regions take aggregations to split along the buffers' edges and to age: after 4, a loaded run
# had only 34-48 MiB of the cold buffer cold), the next ones asserted on.
SKIPPED, ASSERTED = 12, 3


class Streamed:
    """A command whose stdout and stderr lines are read as they come (threads), so a test can
    wait on what it sees: the workload's JSON lines and memscope's interval rows."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.out, self.err = [], []
        self.lock = threading.Lock()
        self.looping_at = None   # stderr lines read when the workload said it loops
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True)]
        for t in self.readers:
            t.start()

    def _read(self, pipe, lines):
        for line in pipe:
            with self.lock:
                lines.append(line)
                if lines is self.out and line.startswith('{"looping"') and self.looping_at is None:
                    self.looping_at = len(self.err)

    def fresh_intervals_since_looping(self, key):
        """Intervals memscope printed after the workload said it loops, in which a new
        aggregation completed: [(time, {key(row): value})], in order. The interval under way
        when the workload's line came is among the SKIPPED ones. A new aggregation: the
        interval's damon.aggregations is at least 1, or, where that has no value (per node it
        is n/a), its bytes differ from the interval before (each interval repeats the last
        aggregation until a new one comes; a new one with every node's bytes equal to the last
        is only waited past)."""
        with self.lock:
            if self.looping_at is None:
                return []
            before, text = "".join(self.err[:self.looping_at]), "".join(self.err)
        if "time," not in text:
            return []
        seen = {r["time"] for r in stat_rows(before) if r["time"] != "total"} if "time," in before else set()
        start = max((float(t) for t in seen), default=float("-inf"))
        by_time = {}
        for r in stat_rows(text):
            if r["time"] != "total" and isinstance(r["value"], float):
                by_time.setdefault(float(r["time"]), {})[key(r)] = r["value"]
        fresh, last = [], None
        for t, v in sorted(by_time.items()):
            new = v["damon.aggregations"] >= 1 if "damon.aggregations" in v else v != last
            if t > start and new:
                fresh.append((t, v))
            last = v
        return fresh

    def finish(self, stop_file):
        pathlib.Path(stop_file).touch()
        try:
            self.proc.wait(timeout=HANG_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for t in self.readers:
                t.join(timeout=10)
        return self.proc.returncode, "".join(self.out), "".join(self.err)


def run_until_settled(cmd, stop_file, key):
    """Run cmd (memscope stat -I ... -- hot_cold.py --until stop_file) until memscope has shown
    SKIPPED + ASSERTED fresh aggregations after the workload began its loop, then stop the
    workload. Returns (status, stdout, stderr, the ASSERTED intervals' values)."""
    s = Streamed(cmd)
    start = time.monotonic()
    end, said = start + HANG_S, start
    while time.monotonic() < end and s.proc.poll() is None and \
            len(s.fresh_intervals_since_looping(key)) < SKIPPED + ASSERTED:
        time.sleep(0.5)
        if time.monotonic() - said > 30:   # progress on a slow guest, as it happens
            said = time.monotonic()
            print(f"\n{said - start:.0f} s: looping {s.looping_at is not None}, fresh aggregations "
                  f"{len(s.fresh_intervals_since_looping(key))}, memscope's last lines: {s.err[-3:]}", flush=True)
    fresh = s.fresh_intervals_since_looping(key)
    status, out, err = s.finish(stop_file)
    assert len(fresh) >= SKIPPED + ASSERTED, \
        f"{len(fresh)} fresh aggregations after the workload's loop began (status {status}):\n{out}{err}"
    return status, out, err, [v for _, v in fresh[SKIPPED:SKIPPED + ASSERTED]]


def test_hot_and_cold_buffers_of_a_command(memscope, no_kdamond, tmp_path):
    """64 MiB written over and over and 64 MiB written once: the command's hot bytes cover the
    first and not the second, its cold bytes (untouched 3 s) the second. DAMON's regions are
    adaptive (10 to 1000 regions, split and merged every aggregation), so a region boundary
    need not fall on a buffer's edge: the bounds allow 8 MiB either way, and the interpreter's own
    few MiB of hot memory. Asserted on aggregations made while the workload is known to loop
    (it loops until the test has seen them), whatever the guest's speed."""
    stop = tmp_path / "stop"
    status, out, err, settled = run_until_settled(
        [memscope, "stat", "-x,", "--self-describing", "-I", "1000", "--damon", "active", "--damon-cold-age", "3",
         "-e", "damon.hot_bytes,damon.cold_bytes,damon.accessed_bytes,damon.aggregations",
         "--", sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", HANG_S, "--until", stop],
        stop, key=lambda r: r["event"])
    out = out + err
    assert status == 0, out
    assert "memscope started kdamond 0" in err, err
    assert "--damon active" in err, err
    print("settled intervals (MiB):", [{k: round(x / MIB, 1) for k, x in v.items() if k.endswith("_bytes")}
                                        for v in settled])
    assert all("damon.hot_bytes" in v and "damon.cold_bytes" in v for v in settled), out
    hot = max(v["damon.hot_bytes"] for v in settled)
    cold = max(v["damon.cold_bytes"] for v in settled)
    assert (BUFFER_MIB - 8) * MIB <= hot <= (BUFFER_MIB + 8 + 8) * MIB, out
    assert (BUFFER_MIB - 8) * MIB <= cold, out
    # Gone at the end: nr_kdamonds back to 0 and no kdamond thread.
    assert nr_kdamonds() == 0
    assert wait_for(lambda: not kdamond_threads(), 60), kdamond_threads()
    assert not MARKER.exists()


def test_list_and_doctor_say_active_mode_is_available(memscope, no_kdamond):
    res = run([memscope, "list", "--sources"], timeout=HANG_S)
    assert res.returncode == 0, res.stderr
    line = next(l for l in res.stdout.splitlines() if l.split()[:1] == ["damon"])
    assert line.split()[1] == "yes", res.stdout
    doc = run([memscope, "doctor"], timeout=HANG_S)
    assert "ok    DAMON: no kdamond runs: the damon series start memscope's own (active mode" in doc.stdout, doc.stdout


def start_killable(memscope):
    proc = subprocess.Popen([memscope, "stat", "-I", "1000", "--damon", "active", "-e", "damon.hot_bytes", "--",
                             sys.executable, WORKLOADS / "hot_cold.py", "--mib", "4", "--seconds", "120"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Its start on a busy TCG guest (a sanitizer build's start-up, the watchdog's fork) can take
    # minutes: wait for memscope's kdamond itself, bounded only against a hang, and stop at once
    # if memscope ended.
    if not wait_for(lambda: proc.poll() is not None or (MARKER.exists() and nr_kdamonds() == 1 and
                    (KDAMONDS / "0" / "state").read_text().strip() == "on"), HANG_S) or proc.poll() is not None:
        if proc.poll() is None:
            proc.kill()
        pytest.fail(f"no kdamond of memscope's on (memscope's status {proc.poll()}, marker {MARKER.exists()}, "
                    f"nr_kdamonds {nr_kdamonds()}); memscope said: {proc.communicate()[1]}")
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
        # The watchdog sees memscope's end at once (60 s only bound a hang on a busy guest): nr_kdamonds 0,
        # the thread and marker gone.
        assert wait_for(lambda: nr_kdamonds() == 0, 60)
        assert wait_for(lambda: not pathlib.Path(f"/proc/{fields['pid']}").exists(), 60)
        assert wait_for(lambda: not pathlib.Path(f"/proc/{fields['watchdog']}").exists(), 60)
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
    doc = run([memscope, "doctor"], timeout=HANG_S)
    assert (f"kdamond 0 (pid {fields['pid']}) was started by memscope pid {fields['memscope']}, which was killed "
            "with its watchdog" in doc.stdout), doc.stdout
    assert nr_kdamonds() == 1 and MARKER.exists()
    res = run([memscope, "stat", "--damon", "active", "-e", "damon.hot_bytes", "--", "true"], timeout=HANG_S)
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
              timeout=HANG_S)
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


def test_whole_machine_hot_bytes_per_node(memscope, no_kdamond, tmp_path):
    """-a: memscope's kdamond monitors physical memory (regions: each node's memory blocks) and
    the bytes are split by node. The 64 MiB written continuously, bound to node 1, are hot on node 1
    and not on node 0. Node 1's hot bytes may hold a little more (page tables, memscope's own
    buffers on CPU 1), so the bound above is loose; node 0's must stay below the buffer."""
    stop = tmp_path / "stop"

    def key(r):
        return (r["event"], node_of_scope(r["scope"]))

    status, out, err, intervals = run_until_settled(
        [memscope, "stat", "-x,", "--self-describing", "-a", "--per-node", "-I", "1000",
         "--damon", "active", "-e", "damon.hot_bytes,damon.accessed_bytes",
         "--", "numactl", "--membind=1", "--cpunodebind=1",
         sys.executable, WORKLOADS / "hot_cold.py", "--mib", BUFFER_MIB, "--seconds", HANG_S, "--until", stop],
        stop, key)
    out = out + err
    assert status == 0, out
    assert "memscope started kdamond 0" in err and "paddr" in err, err
    settled = [{n: v[("damon.hot_bytes", n)] for n in (0, 1) if ("damon.hot_bytes", n) in v} for v in intervals]
    assert all(0 in v and 1 in v for v in settled), out
    print("settled hot bytes per node (MiB):", [{n: round(x / MIB, 1) for n, x in v.items()} for v in settled])
    assert (BUFFER_MIB - 8) * MIB <= max(v[1] for v in settled) <= (BUFFER_MIB + 48) * MIB, out
    assert max(v[0] for v in settled) < (BUFFER_MIB - 8) * MIB, out
    assert nr_kdamonds() == 0


def test_catalog_metrics_use_memscope_s_own_kdamond(memscope, no_kdamond):
    """-m damon.hot_bytes resolves through the catalog's damon role: with no kdamond running it
    is not 'unavailable' but measured by memscope's own (paddr), per node."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-a", "--per-node", "-I", "1000",
               "-m", "damon.hot_bytes", "--", "sleep", "4"], timeout=HANG_S)
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
               "--apart", "--loop-factor", 8], timeout=2 * HANG_S)
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
    # The hot buffer is written every millisecond for 50 s (and at least 8 times as long as it took
    # to be mapped and written: idle and covered, the only time it is not hot), the cold one only
    # at the start; DAMON's
    # regions take the first several aggregations to settle on the buffers' edges (measured: 97.7%
    # and 1.1-2.7% in two runs).
    assert share["hot"] is not None and share["hot"] >= 0.8, share
    assert share["cold"] is not None and share["cold"] <= 0.15, share
    assert nr_kdamonds() == 0


def test_a_child_of_the_command_is_a_target_with_its_own_pid(memscope, no_kdamond, tmp_path):
    """-- CMD whose process forks a child that holds the buffers (64 MiB hot, 64 MiB cold, on node
    1) while the command only waits: memscope gives the child to its kdamond once it has seen it
    (two looks, a second apart, then a commit), and the child's own series (its pid) has the hot
    buffer's bytes; the command's process, which holds neither buffer, stays below them."""
    rec = tmp_path / "child.rec"
    res = run([memscope, "record", "-o", rec, "-I", "1000", "--damon", "active", "--damon-cold-age", "3",
               "-e", "damon.hot_bytes,damon.cold_bytes",
               "--", "numactl", "--membind=1", "--cpunodebind=1", sys.executable, WORKLOADS / "hot_cold.py",
               "--mib", BUFFER_MIB, "--seconds", 40, "--in-child"], timeout=HANG_S)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the command's children become targets" in res.stderr, res.stderr
    child = json.loads(res.stdout.splitlines()[0])["pid"]
    rep = run([memscope, "report", "--format", "json", rec])
    assert rep.returncode == 0, rep.stderr
    rows = [r for line in rep.stdout.splitlines() if line.startswith("{")
            for r in json.loads(line).get("rows", [])]
    by = {(r["series"], r["labels"]): r for r in rows}
    print({k: (v["peak"], v["last"]) for k, v in by.items()})
    mine = [labels for series, labels in by if series == "damon.hot_bytes" and labels.startswith("pid=")]
    assert f"pid={child},instance=damon" in mine, mine
    command = [labels for labels in mine if labels != f"pid={child},instance=damon"]
    assert len(command) == 1, mine   # the command's own process (numactl exec'd into python3)
    hot = float(by[("damon.hot_bytes", f"pid={child},instance=damon")]["peak"])
    cold = float(by[("damon.cold_bytes", f"pid={child},instance=damon")]["peak"])
    assert (BUFFER_MIB - 8) * MIB <= hot, rep.stdout
    assert (BUFFER_MIB - 8) * MIB <= cold, rep.stdout
    assert float(by[("damon.hot_bytes", command[0])]["peak"]) < (BUFFER_MIB - 8) * MIB, rep.stdout
    assert nr_kdamonds() == 0
