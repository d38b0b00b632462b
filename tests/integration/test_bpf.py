"""The bpf source through `memscope stat`, on the live kernel (root): numbers checked
against perf and against what the workloads are known to do."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import run
from proc_status import status_kib

MB = 64
PAGES = MB * 256


@pytest.fixture(scope="module")
def bench(build_dir):
    path = build_dir / "contrib" / "bench"
    for prog in ("touchmem", "cpuhop", "forktree"):
        if not (path / prog).exists():
            pytest.fail(f"{path / prog} is missing: build first")
    return path


def stat_rows(output):
    """Rows of `memscope stat -x,` output as dicts (header: time,scope,event,value,unit,...)."""
    lines = [line for line in output.splitlines() if line.count(",") >= 3]
    header = next((i for i, line in enumerate(lines) if "event" in line and "value" in line), None)
    assert header is not None, f"no CSV header in:\n{output}"
    return list(csv.DictReader(io.StringIO("\n".join(lines[header:]))))


def stat(memscope, events, cmd, env=None, prefix=()):
    res = run(list(prefix) + [memscope, "stat", "-e", events, "-x,", "--self-describing", "--"] + [str(c) for c in cmd], env=env)
    return res


def value(rows, event, scope=None):
    found = [r for r in rows if r["event"] == event and (scope is None or r["scope"] == scope)]
    assert found, f"no row for {event} {scope or ''} in {rows}"
    return float(found[0]["value"])


def perf_page_faults(cmd):
    res = run(["perf", "stat", "-e", "page-faults", "-x,", "--"] + [str(c) for c in cmd])
    assert res.returncode == 0, res.stderr
    for line in res.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("page-faults"):
            return float(fields[0])
    pytest.fail(f"no page-faults line in perf's output:\n{res.stderr}")


def test_faults_agree_with_perf(memscope, bench):
    cmd = [bench / "touchmem", MB]
    res = stat(memscope, "proc.faults", cmd)
    assert res.returncode == 0, res.stderr
    faults = value(stat_rows(res.stdout + res.stderr), "proc.faults")
    perf = perf_page_faults(cmd)
    assert faults >= PAGES
    assert abs(faults - perf) <= 0.01 * perf, (faults, perf)


def test_pages_on_node0_equal_pages_touched(memscope, bench):
    res = stat(memscope, "proc.pages_alloc", [bench / "touchmem", MB])
    assert res.returncode == 0, res.stderr
    rows = [r for r in stat_rows(res.stdout + res.stderr) if r["event"] == "proc.pages_alloc"]
    assert len(rows) == 1, rows  # one node on this machine
    pages = float(rows[0]["value"])
    # touchmem disables THP: one page per 4 KiB touched, plus page tables and start-up.
    assert PAGES <= pages <= PAGES * 1.03, pages


def test_offcpu_of_a_300ms_sleep(memscope, bench):
    res = stat(memscope, "proc.offcpu_ns", [bench / "touchmem", 0, "--sleep-ms", 300])
    assert res.returncode == 0, res.stderr
    off_ns = value(stat_rows(res.stdout + res.stderr), "proc.offcpu_ns")
    assert abs(off_ns - 300e6) <= 30e6, off_ns


def test_one_migration_from_cpu0_to_cpu1(memscope, bench):
    if (os.cpu_count() or 1) < 2:
        pytest.fail("needs 2 CPUs")
    # memscope and so its child start on CPU 0; the workload moves itself to CPU 1.
    res = stat(memscope, "proc.migrations,proc.migrations_cross_node", [bench / "cpuhop", 1],
               prefix=["taskset", "-c", "0"])
    assert res.returncode == 0, res.stderr
    rows = stat_rows(res.stdout + res.stderr)
    assert value(rows, "proc.migrations") == 1
    assert value(rows, "proc.migrations_cross_node") == 0


def test_grandchildren_are_followed(memscope, bench):
    # forktree 3 16: the faults happen in the great-grandchild of the command.
    res = stat(memscope, "proc.faults", [bench / "forktree", 3, 16])
    assert res.returncode == 0, res.stderr
    faults = value(stat_rows(res.stdout + res.stderr), "proc.faults")
    assert 16 * 256 <= faults <= 16 * 256 * 1.2, faults


def test_missing_btf_names_it_and_perf_keeps_running(memscope, bench):
    env = dict(os.environ, MEMSCOPE_BPF_BTF="/nonexistent/vmlinux")
    res = stat(memscope, "page-faults,proc.faults", [bench / "touchmem", 8], env=env)
    assert "no kernel BTF at /nonexistent/vmlinux" in res.stderr
    assert "other sources (perf events, procfs) keep running" in res.stderr
    assert value(stat_rows(res.stdout + res.stderr), "page-faults") >= 8 * 256


def test_btf_that_is_not_btf_names_the_file(memscope, bench, tmp_path):
    # Only a failed load reads the BTF file itself, and then says what is wrong with it.
    btf = tmp_path / "vmlinux"
    btf.write_text("not BTF")
    res = stat(memscope, "page-faults,proc.faults", [bench / "touchmem", 8], env=dict(os.environ, MEMSCOPE_BPF_BTF=str(btf)))
    assert f"{btf} is not readable BTF" in res.stderr, res.stderr
    assert "other sources (perf events, procfs) keep running" in res.stderr
    assert value(stat_rows(res.stdout + res.stderr), "page-faults") >= 8 * 256


def test_a_successful_start_reads_the_kernel_btf_once(memscope):
    # libbpf reads it for the CO-RE relocations; memscope itself reads it only
    # to explain a failed load. The bytes top has read by its second screen,
    # from its own /proc/PID/io, hold one copy of the BTF and the rest is small.
    size = os.path.getsize("/sys/kernel/btf/vmlinux")
    top = subprocess.Popen([memscope, "top", "-b", "-I", "200", "-n", "50"], stdout=subprocess.PIPE, text=True)
    try:
        updates = 0
        for line in top.stdout:
            updates += line.startswith("top: update=")
            if updates == 2:
                break
        with open(f"/proc/{top.pid}/io") as f:
            rchar = int(next(line for line in f if line.startswith("rchar:")).split()[1])
    finally:
        top.kill()
        top.wait()
    assert updates == 2
    assert size <= rchar < 1.5 * size, (rchar, size)


def test_no_capabilities_names_them(memscope, bench):
    if not shutil.which("setpriv"):
        pytest.fail("setpriv (util-linux) is missing")
    res = stat(memscope, "proc.faults", [bench / "touchmem", 8],
               prefix=["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"])
    assert "eBPF probes need root, or CAP_BPF and CAP_PERFMON" in res.stderr, res.stderr
    assert "lacks CAP_BPF and CAP_PERFMON" in res.stderr
    assert "sudo setcap cap_perfmon,cap_bpf,cap_sys_ptrace+ep $(command -v memscope)" in res.stderr


def test_missing_tracepoint_leaves_the_others_running(memscope, bench):
    env = dict(os.environ, MEMSCOPE_BPF_ATTACH="page_fault_user=exceptions:no_such_tracepoint")
    res = stat(memscope, "proc.faults_user,proc.faults_kernel,proc.offcpu_ns",
               [bench / "touchmem", 0, "--sleep-ms", 100], env=env)
    assert "no tracepoint exceptions:no_such_tracepoint" in res.stderr, res.stderr
    assert "lost: user-mode page faults" in res.stderr
    rows = stat_rows(res.stdout + res.stderr)
    assert value(rows, "proc.offcpu_ns") >= 90e6


# Four threads alive together for half a second: with the main thread, 5 at the peak.
FOUR_THREADS = ("import threading, time\n"
                "go = threading.Barrier(5)\n"
                "ts = [threading.Thread(target=lambda: (go.wait(), time.sleep(0.5))) for _ in range(4)]\n"
                "[t.start() for t in ts]\ngo.wait()\n[t.join() for t in ts]\n")


def proc_series(memscope):
    res = run([memscope, "list", "--events"])
    assert res.returncode == 0, res.stderr
    names = sorted({line.split()[0] for line in res.stdout.splitlines()
                    if line.strip().startswith("proc.")})
    assert "proc.threads" in names and "proc.faults" in names, res.stdout
    return names


# What the four-thread python does, per series, when the series is asked for alone: a
# series that reads 0 alone while it counts next to another was missing its probe.
ALONE = {
    "proc.threads": lambda v: v == 5,
    "proc.processes": lambda v: v == 1,
    "proc.faults": lambda v: v >= 1000,          # the interpreter's start-up alone is ~3,000
    "proc.faults_user": lambda v: v >= 1000,
    "proc.faults_read": lambda v: v >= 100,
    "proc.faults_write": lambda v: v >= 500,
    "proc.pages_alloc": lambda v: v >= 500,
    "proc.oncpu_ns": lambda v: v >= 1e6,
    "proc.offcpu_ns": lambda v: v >= 4 * 0.4e9,  # each of the four sleeps 0.5 s
    "proc.switches": lambda v: v >= 5,
    "proc.switches_voluntary": lambda v: v >= 5,
}
# Not in ALONE, and why: what the workload does to them is not known in advance (kernel
# faults, preemptions, migrations and NUMA balancing depend on the host; unplaced pages and
# drops should be 0 anyway), and proc.cpu / proc.state are per-thread only (no stat row).


@pytest.mark.parametrize("series", sorted(ALONE))
def test_each_series_asked_for_alone_counts_the_workload(memscope, series):
    """`stat -e proc.threads` alone read 0: its threads got no slot without another probe."""
    res = run([memscope, "stat", "-x,", "-e", series, "--", sys.executable, "-c", FOUR_THREADS])
    assert res.returncode == 0, res.stderr
    rows = [l.split(",") for l in res.stderr.splitlines() if l.count(",") >= 3]
    values = [float(f[0]) for f in rows if f[2] == series]
    assert len(values) == 1, res.stderr
    assert ALONE[series](values[0]), (series, values[0])


def test_every_proc_series_is_known_to_the_alone_check(memscope):
    """A new proc.* series is either checked alone above or named with its reason."""
    unchecked = {"proc.faults_kernel", "proc.switches_involuntary", "proc.migrations",
                 "proc.migrations_cross_node", "proc.numa_task_moves", "proc.numa_task_swaps",
                 "proc.pages_migrated", "proc.pages_migrate_failed", "proc.pages_migrate_failed_by_reason",
                 "proc.pages_alloc_unplaced", "proc.bpf_drops",
                 "proc.cpu", "proc.state"}
    assert set(proc_series(memscope)) == set(ALONE) | unchecked


def test_process_table_memory_follows_processes_alive_at_once_not_pids_seen(memscope, build_dir, tmp_path):
    # A task table for 65,536 threads (its process table: 262,144 places). Each
    # process churn forks is new to the table and lives a few ms; the table's
    # resident memory must follow the few alive at once. It used to keep an
    # entry of 440 bytes at each process's hash place, so every new PID faulted
    # in another page (about 4 KiB a process, 14.8 -> 16.3 MiB in a soak's
    # first ten minutes with the default table).
    rec = tmp_path / "churn.rec"
    env = dict(os.environ, MEMSCOPE_BPF_TASKS="65536")
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1"
    proc = subprocess.Popen([memscope, "record", "--no-ctl", "-I", "100", "-e", "proc.faults", "-o", str(rec), "--",
                             str(build_dir / "contrib" / "bench" / "churn"), "300", "12"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(4)
        before = status_kib(proc.pid, "RssAnon")
        time.sleep(7)
        after = status_kib(proc.pid, "RssAnon")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    forked = int(out.split("forked ")[1].split()[0])
    # Series records and brief ones (a process's whole life in one frame, format 5).
    added = sum(len(r["series"]) if "series" in r else len(r["brief"])
                for r in map(json.loads, rec.read_text().splitlines()) if ("series" in r and "t" in r) or "brief" in r)
    # The processes were seen (a series each), about 7/12 of them between the two reads.
    assert forked >= 1500 and added >= forked * 0.9, (forked, added)
    # Under ASan its allocator adds up to about 2 MiB here; the old table added 9 MiB.
    assert after - before < 4096, (before, after, forked)
