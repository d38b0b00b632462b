"""memscope stat -C CPUS: counting only on some CPUs, as perf stat -C does, for every source."""
import json
import os
import shutil
import statistics
import sys

import pytest

from conftest import fixture_env, online_cpus, run
from stat_output import counter_output

PAGE = 4096
MIB = 200


def stat(memscope, args, **kw):
    return run([memscope, "stat"] + args, **kw)


def csv_count(out, event="page-faults"):
    for line in out.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2] == event:
            return int(f[0])
    raise AssertionError(out)


needs_two_cpus = pytest.mark.skipif(len(online_cpus()) < 2 or not shutil.which("taskset"),
                                    reason="needs two online CPUs and taskset")


SIGNALS = 20000
GETPPID = 100000
SIGNAL_LOOP = ("import os, signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
               "for _ in range(%d): os.kill(os.getpid(), signal.SIGUSR1)" % SIGNALS)
GETPPID_LOOP = "import os\nfor _ in range(%d): os.getppid()" % GETPPID


@needs_two_cpus
@pytest.mark.parametrize("event,loop,n,env", [
    # Counted by eBPF per-CPU counters (tracepoints on every CPU), summed over -C's CPUs only.
    ("signal:signal_generate", SIGNAL_LOOP, SIGNALS, {}),
    # The same through perf counters opened on -C's CPUs.
    ("signal:signal_generate", SIGNAL_LOOP, SIGNALS, {"MEMSCOPE_PERF_TRACEPOINTS": "1"}),
    ("syscalls:sys_enter_getppid", GETPPID_LOOP, GETPPID, {}),
])
def test_cpu_list_counts_only_what_ran_there(memscope, event, loop, n, env):
    """A command pinned to CPU 0 raises an event n times that the rest of the system hardly does:
    -C 0 counts them all, the same command pinned to CPU 1 leaves -C 0's count near 0."""
    first, second = online_cpus()[:2]
    e = dict(os.environ, **env)
    here = stat(memscope, ["-x,", "-C", str(first), "-e", event, "--",
                           "taskset", "-c", str(first), sys.executable, "-c", loop], env=e)
    assert here.returncode == 0, here.stderr
    assert n <= csv_count(counter_output(here.stderr), event) <= 1.02 * n, counter_output(here.stderr)
    there = stat(memscope, ["-x,", "-C", str(first), "-e", event, "--",
                            "taskset", "-c", str(second), sys.executable, "-c", loop], env=e)
    assert there.returncode == 0, there.stderr
    assert csv_count(counter_output(there.stderr), event) < 0.01 * n, counter_output(there.stderr)


@needs_two_cpus
def test_cpu_list_page_faults_follow_the_workload(memscope, touchmem):
    """touchmem MIB faults ~MIB MiB / 4 KiB pages. -C 0 counts every process on CPU 0, and other
    processes fault in bursts on a busy machine: over five runs of each, touchmem pinned to CPU 0
    adds its faults to CPU 0's count, pinned to CPU 1 it adds none. memscope itself runs on CPU 1."""
    ref = stat(memscope, ["-x,", "-e", "page-faults", "--", "taskset", "-c", "0", touchmem, str(MIB)])
    assert ref.returncode == 0, ref.stderr
    own = csv_count(counter_output(ref.stderr))
    assert own >= MIB * 1024 * 1024 // PAGE
    first, second = online_cpus()[:2]
    counts = {first: [], second: []}
    for _ in range(5):
        for cpu in (first, second):
            # memscope itself (its start-up faults, many under sanitizers) stays off CPU first.
            res = run(["taskset", "-c", str(second), memscope, "stat", "-x,", "-C", str(first), "-e",
                       "page-faults", "--", "taskset", "-c", str(cpu), touchmem, str(MIB)])
            assert res.returncode == 0, res.stderr
            counts[cpu].append(csv_count(counter_output(res.stderr)))
    # Every one of touchmem's faults is in CPU 0's count when it runs there...
    assert min(counts[first]) >= 0.98 * own, (own, counts)
    # ...and none when it runs on CPU 1: what other processes add (tens of thousands of faults a run
    # on a busy machine) is in both, so only the medians' difference is touchmem's. The exact,
    # noise-free counts are the tracepoint tests' above.
    assert statistics.median(counts[first]) - statistics.median(counts[second]) >= 0.6 * own, (own, counts)


@needs_two_cpus
def test_cpu_list_rows_are_its_cpus(memscope):
    cpu = online_cpus()[1]
    for args in (["-A", "-x,"], ["--per-cpu", "-j"]):
        res = stat(memscope, args + ["-C", str(cpu), "-e", "page-faults,context-switches", "--", "sleep", "0.1"])
        assert res.returncode == 0, res.stderr
        lines = counter_output(res.stderr).strip().splitlines()
        assert len(lines) == 2, counter_output(res.stderr)
        if "-j" in args:
            assert [json.loads(line)["cpu"] for line in lines] == [str(cpu)] * 2
        else:
            assert [line.split(",")[0] for line in lines] == ["CPU%d" % cpu] * 2
    # -C implies -a, as in perf: without a command it counts the system on those CPUs, and
    # says which, as perf does ('CPU(s) N', not 'system wide').
    res = stat(memscope, ["-C", str(cpu), "-e", "page-faults", "--timeout", "100"])
    assert res.returncode == 0, res.stderr
    assert f"counter stats for 'CPU(s) {cpu}':" in counter_output(res.stderr), counter_output(res.stderr)


def test_bad_cpu_lists_name_the_argument_and_the_online_cpus(memscope):
    with open("/sys/devices/system/cpu/online") as f:
        online = f.read().strip()
    for arg, why in (("9999", "CPU 9999 is not online"), ("3-1", "not a CPU list such as 0-3,8"),
                     ("", "not a CPU list"), ("0,", "not a CPU list"), ("a", "not a CPU list")):
        res = stat(memscope, ["-C", arg, "-e", "page-faults", "--", "true"])
        assert res.returncode == 2, (arg, res.stderr)
        assert "-C '%s': %s" % (arg, why) in res.stderr, res.stderr
        assert "online CPUs are %s\n" % online in res.stderr, res.stderr


def test_cpu_list_refuses_what_is_not_counted_per_cpu(memscope, tmp_path):
    res = stat(memscope, ["-C", "0", "-e", "proc.faults", "--", "true"])
    assert res.returncode == 2 and "'proc.faults' comes from the bpf source, which counts per task" in res.stderr
    res = stat(memscope, ["-C", "0", "-p", "1", "-e", "page-faults"])
    assert res.returncode == 2 and "-C counts whole CPUs, -p" in res.stderr, res.stderr
    rec = tmp_path / "x.rec"
    res = stat(memscope, ["-C", "0", "--input", str(rec)])
    assert res.returncode == 2 and "-C chooses the CPUs counted on this machine" in res.stderr, res.stderr


def write_replay(path, frames):
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines += [json.dumps({"t": t, "values": values}) for t, values in frames]
    path.write_text("\n".join(lines) + "\n")


def test_uncore_on_the_cpumask_cpus_of_the_list(memscope, tmp_path):
    """Skylake-SP fixture: each uncore_imc_N counts its socket through cpu0 (socket 0) or cpu4
    (socket 1). -C 4-7 keeps socket 1's IMCs, -C 0,5 socket 0's (CPU 5's socket has no IMC CPU
    in the list: not counted), -C 1-3 none (refused, naming the cpumask CPUs)."""
    values = {}
    for i in range(6):
        values[f"uncore_imc_{i}/cas_count_read/@cpu0"] = (i + 1) * 1000
        values[f"uncore_imc_{i}/cas_count_read/@cpu4"] = (i + 1) * 2000
    replay = tmp_path / "skx.jsonl"
    write_replay(replay, [(2.0, values)])
    env = fixture_env("skylake-sp-2s")
    socket0 = sum((i + 1) * 1000 for i in range(6)) * 64 / 2
    socket1 = sum((i + 1) * 2000 for i in range(6)) * 64 / 2

    def rows(cpus):
        res = stat(memscope, ["--replay", str(replay), "-m", "mem.read_bw", "--per-socket", "-x,"]
                   + (["-C", cpus] if cpus else []), env=env)
        assert res.returncode == 0, res.stderr
        # S, CPUs, counter, unit, metric, runtime, pcnt, metric-value, metric-unit
        return {f[0]: (int(f[1]), f[7]) for f in (line.split(",") for line in counter_output(res.stderr).splitlines())}

    assert rows(None) == {"S0": (8, "%d" % socket0), "S1": (8, "%d" % socket1)}
    assert rows("4-7") == {"S1": (4, "%d" % socket1)}
    assert rows("0,5") == {"S0": (1, "%d" % socket0), "S1": (1, "")}
    res = stat(memscope, ["--replay", str(replay), "-m", "mem.read_bw", "-C", "1-3"], env=env)
    assert res.returncode == 1, res.stderr
    assert "-C leaves out the CPUs its uncore PMUs count through (uncore_imc_0, ...: CPU 0,4)" in res.stderr
    res = stat(memscope, ["-C", "1", "-e", "uncore_imc_0/cas_count_read/", "--", "true"], env=env)
    assert res.returncode == 2, res.stderr
    assert "uncore_imc_0 counts through CPU 0,4" in res.stderr and "which -C leaves out" in res.stderr
    res = stat(memscope, ["-C", "1-16", "-e", "page-faults", "--", "true"], env=env)
    assert res.returncode == 2 and "CPU 16 is not online; this machine's online CPUs are 0-15" in res.stderr
