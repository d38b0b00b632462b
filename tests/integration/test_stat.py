"""memscope stat on real software counters, tracepoints and the msr PMU of this machine."""
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import run
from stat_output import counter_output, intervals, parse_csv, parse_json_lines, totals
from test_stat_cpu_list import IO_URING_LOOP, IO_URINGS

PAGE = 4096


def expected_faults(mb):
    return mb * 1024 * 1024 // PAGE


def perf_page_faults(cmd):
    """perf stat's page-faults for cmd (the peer every number here is checked against)."""
    res = run(["perf", "stat", "-x,", "-e", "page-faults", "--"] + cmd)
    assert res.returncode == 0, res.stderr
    for line in res.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2] == "page-faults":
            return int(fields[0])
    raise AssertionError(f"no page-faults line in perf output: {res.stderr}")


def stat_csv(memscope, args, **kw):
    res = run([memscope, "stat", "-x,", "--self-describing"] + args, **kw)
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr}"
    return parse_csv(counter_output(res.stderr)), res


def test_page_faults_of_a_child_match_its_pages_and_perf(memscope, touchmem):
    # The child sleeps once before it exits: at least one switch away from it.
    child = [touchmem, "100", "--sleep-ms", "50"]
    rows, _ = stat_csv(memscope, ["-e", "page-faults,context-switches,cpu-migrations", "--", *child])
    t = totals(rows)
    faults = t[("total", "page-faults")]
    assert abs(faults - expected_faults(100)) <= 0.02 * expected_faults(100), faults
    peer = perf_page_faults(child)
    assert abs(faults - peer) <= 0.01 * peer, (faults, peer)
    # Present and counted (not <not supported>), with full coverage.
    for ev in ("context-switches", "cpu-migrations"):
        row = [r for r in rows if r["time"] == "total" and r["event"] == ev][0]
        assert row["counted"] and row["coverage"] == 1.0, row
    # The sleep is a switch; a task moves to another CPU only while switched out.
    switches, migrations = t[("total", "context-switches")], t[("total", "cpu-migrations")]
    assert switches >= 1 and migrations <= switches, (switches, migrations)


def test_tracepoint_counts_the_same_faults(memscope, touchmem):
    rows, _ = stat_csv(memscope, ["-e", "page-faults,exceptions:page_fault_user", "--", touchmem, "50"])
    t = totals(rows)
    user_faults = t[("total", "exceptions:page_fault_user")]
    assert abs(user_faults - expected_faults(50)) <= 0.02 * expected_faults(50), user_faults
    assert user_faults <= t[("total", "page-faults")]


def test_msr_tsc_counts_time(memscope, touchmem):
    rows, _ = stat_csv(memscope, ["-a", "-e", "msr/tsc/", "--", "sleep", "0.3"])
    tsc = totals(rows)[("total", "msr/tsc/")]
    # Per CPU, the TSC ticks at >= 1 GHz on any x86 this runs on: 2 CPUs x 0.3 s.
    ncpu = os.cpu_count()
    assert tsc >= 0.25 * 1e9 * ncpu, tsc
    assert tsc <= 0.6 * 10e9 * ncpu, tsc


def test_interval_lines_add_up_to_totals(memscope, touchmem):
    rows, _ = stat_csv(memscope, ["-I", "100", "-e", "page-faults,minor-faults",
                                  "--", touchmem, "30", "--repeat", "4", "--sleep-ms", "400"])
    lines = intervals(rows)
    times = sorted({r["time"] for r in lines})
    assert len(times) >= 4, times
    for ev in ("page-faults", "minor-faults"):
        total = totals(rows)[("total", ev)]
        assert sum(r["value"] for r in lines if r["event"] == ev) == total
    assert totals(rows)[("total", "page-faults")] >= 4 * expected_faults(30)


def test_one_millisecond_interval_system_wide(memscope, touchmem):
    """-I 1: a line per event every millisecond, lines that add up to the totals, and the
    workload's faults all in them. (Where in its millisecond each frame is read is the wake-up
    latency, which other work on the machine sets: the timer's grid is checked at -I 50 in
    test_pipeline.py.)"""
    rows, _ = stat_csv(memscope, ["-a", "-I", "1", "-e", "page-faults,context-switches",
                                  "--", touchmem, "20", "--repeat", "5", "--sleep-ms", "100"])
    lines = intervals(rows)
    times = sorted({float(r["time"]) for r in lines})
    # About 500 ticks; a busy machine may merge some (a late tick covers the ones it missed).
    assert len(times) >= 100, len(times)
    assert all(b > a for a, b in zip(times, times[1:]))
    for ev in ("page-faults", "context-switches"):
        assert sum(r["value"] for r in lines if r["event"] == ev) == totals(rows)[("total", ev)]
    assert totals(rows)[("total", "page-faults")] >= 5 * expected_faults(20)


@pytest.mark.parametrize("counted_by", ["ebpf", "perf"])
def test_system_wide_tracepoint_counts_the_workloads_hits(memscope, counted_by):
    """io_uring:io_uring_create on every CPU, counted by eBPF per-CPU counters (read without
    interrupting other CPUs) or by perf (MEMSCOPE_PERF_TRACEPOINTS=1): the workload's 20,000
    rings and no other program's (none sets up rings here, where every exec is a task:task_rename
    and a busy machine makes thousands), per CPU rows that add up, and a syscall tracepoint
    (no raw tracepoint: always perf) beside it."""
    env = dict(os.environ, MEMSCOPE_PERF_TRACEPOINTS="1" if counted_by == "perf" else "0")
    rows, _ = stat_csv(memscope, ["-a", "-I", "100", "--per-cpu", "-e",
                                  "io_uring:io_uring_create,syscalls:sys_enter_getppid", "--", sys.executable, "-c",
                                  IO_URING_LOOP + "\nfor _ in range(5000): os.getppid()"], env=env)
    t = totals(rows)
    cpus = [f"cpu{i}" for i in range(os.cpu_count())]
    rings = sum(t[(c, "io_uring:io_uring_create")] for c in cpus)
    assert rings == IO_URINGS, rings
    assert sum(t[(c, "syscalls:sys_enter_getppid")] for c in cpus) >= 5000
    lines = intervals(rows)
    assert sum(r["value"] for r in lines if r["event"] == "io_uring:io_uring_create") == rings


def test_text_intervals_are_perfs_lines(memscope):
    res = run([memscope, "stat", "-I", "10", "-e", "page-faults,task-clock", "--", "sleep", "0.7"])
    assert res.returncode == 0, res.stderr
    lines = counter_output(res.stderr).splitlines()
    # perf's header before the first interval and every 25 intervals: a line per event each.
    headers = [i for i, l in enumerate(lines) if l == "#           time             counts unit events"]
    assert len(headers) >= 2 and headers[0] == 0 and headers[1] - headers[0] == 1 + 25 * 2, counter_output(res.stderr)
    body = [l for l in lines if not l.startswith("#")]
    assert len(body) % 2 == 0 and len(body) >= 2 * 40, counter_output(res.stderr)
    for faults, clock in zip(body[::2], body[1::2]):
        # the time right-aligned in 16 columns, perf's value, unit and name widths, its shadow metric
        f = re.fullmatch(r"( {0,15}\d+\.\d{9}) +([\d,]+)      page-faults {22}# +(\d+\.\d{3}) K?/sec", faults)
        c = re.fullmatch(r"( {0,15}\d+\.\d{9}) +(\d+\.\d\d) msec task-clock {23}# +(\d+\.\d{3}) CPUs utilized", clock)
        assert f and c and len(f.group(1)) == 16 and f.group(1) == c.group(1), (faults, clock)
        assert faults.index("page-faults") == clock.index("task-clock") == 16 + 1 + 18 + 1 + 4 + 1
    # As perf -I: no totals after the intervals.
    assert "seconds time elapsed" not in counter_output(res.stderr) and "counter stats" not in counter_output(res.stderr)


def test_text_output_repeats_its_header_like_vmstat(memscope, touchmem):
    res = run([memscope, "stat", "--columns", "-I", "10", "-e", "page-faults", "--", "sleep", "0.7"])
    assert res.returncode == 0, res.stderr
    lines = counter_output(res.stderr).splitlines()
    headers = [i for i, l in enumerate(lines) if l.startswith("#") and "page-faults" in l]
    assert len(headers) >= 2, counter_output(res.stderr)
    # 25 data lines between headers when the output is not a terminal.
    assert headers[1] - headers[0] == 26, headers
    assert re.search(r"^\s+[\d,]+\s+page-faults$", counter_output(res.stderr), re.M)
    assert "seconds time elapsed" in counter_output(res.stderr)


def test_json_lines(memscope, touchmem):
    res = run([memscope, "stat", "--json", "--self-describing", "-I", "50", "-e", "page-faults", "--", touchmem, "20",
               "--sleep-ms", "200"])
    assert res.returncode == 0, res.stderr
    objs = parse_json_lines(counter_output(res.stderr))
    assert objs[-1]["type"] == "total"
    assert all(o["type"] == "interval" for o in objs[:-1]) and len(objs) >= 3
    total = objs[-1]["rows"][0]["events"]["page-faults"]
    assert total["value"] == sum(o["rows"][0]["events"]["page-faults"]["value"] for o in objs[:-1])
    assert total["coverage"] == 1.0 and total["unit"] == ""
    assert abs(total["value"] - expected_faults(20)) <= 0.05 * expected_faults(20)


def test_exit_status_of_the_command_is_returned(memscope):
    res = run([memscope, "stat", "-e", "page-faults", "--", "sh", "-c", "exit 7"])
    assert res.returncode == 7
    assert "page-faults" in counter_output(res.stderr)
    res = run([memscope, "stat", "-e", "page-faults", "--", "sh", "-c", "kill -9 $$"])
    assert res.returncode == 128 + 9


def test_command_that_cannot_run(memscope):
    res = run([memscope, "stat", "-e", "page-faults", "--", "/nonexistent/program"])
    assert res.returncode == 127      # a shell's "not found"
    assert "cannot run '/nonexistent/program'" in res.stderr


def child_minor_faults(pid):
    """Minor faults of the first child of pid (0 until it has one)."""
    try:
        kids = pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(pathlib.Path(f"/proc/{kids[0]}/stat").read_text().rsplit(")", 1)[1].split()[7]) if kids else 0
    except (OSError, IndexError):
        return 0


def test_sigint_prints_totals(memscope, touchmem):
    proc = subprocess.Popen([memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "--", touchmem, "40",
                             "--sleep-ms", "5000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # SIGINT once the command has touched its 40 MB (its own minor faults say so), not after
    # a fixed sleep: a busy machine may start it late.
    deadline = time.time() + 60
    while time.time() < deadline and child_minor_faults(proc.pid) < 40 * 256:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    t = totals(parse_csv(counter_output(err)))
    assert abs(t[("total", "page-faults")] - expected_faults(40)) <= 0.05 * expected_faults(40)
    assert proc.returncode == 128 + signal.SIGTERM  # the command was asked to end


def test_attach_counts_threads_started_before_and_after(memscope, build_dir):
    workload = str(build_dir / "contrib" / "bench" / "threads")
    # 2 threads now, 2 more 800 ms later; all touch 2 MB every 100 ms from 400 ms to 2 s.
    proc = subprocess.Popen([workload, "2", "2", "800", "2000", "2", "400"],
                            stdout=subprocess.PIPE, text=True)
    ready = proc.stdout.readline()
    assert ready.startswith("ready")
    stat = run([memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "-p", str(proc.pid)])
    pages = int(next(line for line in proc.stdout if line.startswith("pages ")).split()[1])
    proc.wait()
    assert stat.returncode == 0, stat.stderr
    assert "attached process has exited" in stat.stderr
    faults = totals(parse_csv(counter_output(stat.stderr)))[("total", "page-faults")]
    # Late threads touch about a third of the pages: without them the count would be far lower.
    assert abs(faults - pages) <= 0.03 * pages + 50, (faults, pages)


def test_attach_to_a_process_that_does_not_exist(memscope):
    res = run([memscope, "stat", "-e", "page-faults", "-p", "999999"])
    assert res.returncode == 2
    assert "no process 999999" in res.stderr


def test_system_wide_per_cpu_rows_sum_to_the_total(memscope, touchmem, tmp_path):
    """System-wide, split per CPU: a row for every CPU, the 400 MB workload memscope runs inside
    its window counted in them (other work on the machine adds, never takes away). The rows of
    one recording read split and whole sum to the same total exactly (two live runs would
    cover two windows that other work fills differently)."""
    live, _ = stat_csv(memscope, ["-a", "--per-cpu", "-e", "page-faults", "--", touchmem, "400"])
    per_cpu = totals(live)
    assert sorted(scope for scope, _ in per_cpu) == [f"cpu{i}" for i in range(os.cpu_count())]
    assert sum(per_cpu.values()) >= expected_faults(400)

    rec = tmp_path / "a.rec"
    res = run([memscope, "record", "-a", "-e", "page-faults", "-o", str(rec), "--", touchmem, "400"])
    assert res.returncode == 0, res.stderr
    split, _ = stat_csv(memscope, ["--input", str(rec), "--per-cpu"])
    whole, _ = stat_csv(memscope, ["--input", str(rec)])
    split, whole = totals(split), totals(whole)
    assert sorted(scope for scope, _ in split) == [f"cpu{i}" for i in range(os.cpu_count())]
    assert whole[("total", "page-faults")] >= expected_faults(400)
    assert sum(split.values()) == whole[("total", "page-faults")], (split, whole)


def test_per_node_and_per_socket_split_a_task(memscope, touchmem):
    for mode, prefix in (("--per-node", "node"), ("--per-socket", "socket")):
        rows, _ = stat_csv(memscope, [mode, "-e", "page-faults", "--", touchmem, "20"])
        t = totals(rows)
        assert all(scope.startswith(prefix) for scope, _ in t), t
        assert abs(sum(t.values()) - expected_faults(20)) <= 0.05 * expected_faults(20)


def test_hardware_event_without_pmu_is_reported_and_others_still_count(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "cycles,page-faults", "--", touchmem, "10"])
    assert res.returncode == 0, res.stderr
    assert "'cycles' <not supported>: this kernel has no hardware PMU" in res.stderr
    rows = parse_csv(counter_output(res.stderr))
    cyc = [r for r in rows if r["event"] == "cycles"][0]
    assert cyc["counted"] is False and cyc["value"] == "<not supported>"
    assert totals([r for r in rows if r["counted"]])[("total", "page-faults")] > expected_faults(10) * 0.95


def test_system_wide_until_sigint(memscope, touchmem):
    proc = subprocess.Popen([memscope, "stat", "-a", "-x,", "--self-describing", "-I", "100", "-e", "page-faults,cpu-clock"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    assert run([touchmem, "40"]).returncode == 0
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    rows = parse_csv(counter_output(err))
    t = totals(rows)
    assert t[("total", "page-faults")] >= expected_faults(40)
    # cpu-clock counts every CPU's time: about elapsed x CPUs (in msec).
    elapsed_ms = max(float(r["time"]) for r in intervals(rows)) * 1e3
    assert abs(t[("total", "cpu-clock")] - elapsed_ms * os.cpu_count()) <= 0.1 * elapsed_ms * os.cpu_count()


def test_per_thread_rows_from_ebpf(memscope, build_dir):
    workload = str(build_dir / "contrib" / "bench" / "threads")
    # 2 threads now and 1 more after 200 ms, each touching 4 MB every 100 ms until 800 ms.
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "proc.faults,page-faults", "--per-thread", "--",
               workload, "2", "1", "200", "800", "4", "100"])
    assert res.returncode == 0, res.stderr
    pages = int([l for l in res.stdout.splitlines() if l.startswith("pages ")][0].split()[1])
    rows = parse_csv(counter_output(res.stderr))
    faults = {r["scope"]: r["value"] for r in rows if r["time"] == "total" and r["event"] == "proc.faults"}
    workers = {scope: v for scope, v in faults.items() if v >= 1024}
    assert len(workers) == 3, faults
    assert all(scope.startswith("tid") for scope in faults)
    assert abs(sum(workers.values()) - pages) <= 0.02 * pages, (workers, pages)
    # perf's counters are the command's (its threads inherit them, as perf's --per-thread): its
    # own row holds every thread's faults; the threads the eBPF probes saw have none of their own.
    pf = [r for r in rows if r["time"] == "total" and r["event"] == "page-faults"]
    counted = [r for r in pf if r["value"] != "n/a"]
    assert len(counted) == 1 and counted[0]["value"] >= pages, pf
    assert len(pf) > 1 and all(r["value"] == "n/a" for r in pf if r is not counted[0])


def test_per_thread_excludes_metrics(memscope):
    res = run([memscope, "stat", "-m", "kernel.faults", "--per-thread", "--", "true"])
    assert res.returncode == 2
    assert "--per-thread splits the events" in res.stderr and "it excludes -m" in res.stderr
