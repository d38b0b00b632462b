"""memscope stat -C CPUS: counting only on some CPUs, as perf stat -C does, for every source."""
import json
import os
import shutil
import sys
import time

import pytest

from conftest import cgroup2_mount, fixture_env, online_cpus, remove_cgroup, run
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
IO_URINGS = 20000
# Each a ring set up and closed: io_uring:io_uring_create, a tracepoint eBPF can count (syscall
# tracepoints have no raw tracepoint), and one no other program on this machine raised (0 in 15 s
# while other work ran, against ~50 signals/s, ~30 task renames/s and ~15 getppid/s).
IO_URING_LOOP = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                 "params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed\n"
                 "for _ in range(%d):\n"
                 "    fd = libc.syscall(425, 1, params)  # io_uring_setup(1 entry)\n"
                 "    if fd < 0: raise OSError(ctypes.get_errno(), 'io_uring_setup')\n"
                 "    os.close(fd)" % IO_URINGS)
# Into a cgroup, then the workload.
ENTER = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'


@pytest.fixture
def own_cgroup():
    """A fresh cgroup v2 group (name, path) for the test's own workload, removed afterwards."""
    mount = cgroup2_mount()
    if os.geteuid() != 0 or not mount:
        pytest.skip("needs root and a cgroup v2 hierarchy")
    name = f"memscope-C-{os.getpid()}-{time.monotonic_ns()}"
    path = mount / name
    path.mkdir()
    yield name, path
    remove_cgroup(path)


@needs_two_cpus
@pytest.mark.parametrize("event,loop,n,env", [
    # Counted by eBPF per-CPU counters (tracepoints on every CPU), summed over -C's CPUs only.
    # eBPF counts every task (no -G), so the event is one only this loop raises.
    ("io_uring:io_uring_create", IO_URING_LOOP, IO_URINGS, {}),
    # The same through perf counters opened on -C's CPUs.
    ("io_uring:io_uring_create", IO_URING_LOOP, IO_URINGS, {"MEMSCOPE_PERF_TRACEPOINTS": "1"}),
])
def test_cpu_list_counts_only_what_ran_there(memscope, event, loop, n, env):
    """A command pinned to CPU 0 raises an event n times that no other program raises:
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
@pytest.mark.parametrize("event,loop,n", [
    ("signal:signal_generate", SIGNAL_LOOP, SIGNALS),
    ("syscalls:sys_enter_getppid", GETPPID_LOOP, GETPPID),
])
def test_cpu_list_and_cgroup_count_only_what_ran_there(memscope, own_cgroup, event, loop, n):
    """Events every program raises (signals, getppid), counted with -C 0 -G on the test's own
    cgroup so that other programs' are not: the command, in that cgroup, pinned to CPU 0 is
    counted in full, pinned to CPU 1 not at all. Were -C ignored, both would be n."""
    name, path = own_cgroup
    first, second = online_cpus()[:2]

    def count(cpu):
        res = stat(memscope, ["-x,", "-a", "-C", str(first), "-G", name, "-e", event, "--", "sh", "-c", ENTER,
                              "sh", str(path), "taskset", "-c", str(cpu), sys.executable, "-c", loop])
        assert res.returncode == 0, res.stderr
        return csv_count(counter_output(res.stderr), event)
    here = count(first)
    # n, and the few the shell and python3's start-up raise (48 getppid, 41 signals here).
    assert n <= here <= 1.02 * n, here
    there = count(second)
    assert there < 0.01 * n, there


@needs_two_cpus
def test_cpu_list_page_faults_follow_the_workload(memscope, touchmem, own_cgroup):
    """touchmem MIB faults ~MIB MiB / 4 KiB pages. -C 0 -G on the test's own cgroup counts them
    all when touchmem runs on CPU 0 and none when it runs on CPU 1 (other processes' faults, tens
    of thousands a run on a busy machine, are outside the cgroup). memscope itself, and so the
    shell that enters the cgroup, runs on CPU 1."""
    ref = stat(memscope, ["-x,", "-e", "page-faults", "--", "taskset", "-c", "0", touchmem, str(MIB)])
    assert ref.returncode == 0, ref.stderr
    own = csv_count(counter_output(ref.stderr))
    assert own >= MIB * 1024 * 1024 // PAGE
    name, path = own_cgroup
    first, second = online_cpus()[:2]
    counts = {}
    for cpu in (first, second):
        res = run(["taskset", "-c", str(second), memscope, "stat", "-x,", "-a", "-C", str(first), "-G", name,
                   "-e", "page-faults", "--", "sh", "-c", ENTER, "sh", str(path),
                   "taskset", "-c", str(cpu), touchmem, str(MIB)])
        assert res.returncode == 0, res.stderr
        counts[cpu] = csv_count(counter_output(res.stderr))
    # Every one of touchmem's faults is in CPU 0's count when it runs there (own also has the
    # faults of taskset, which ran on CPU 1 here)...
    assert 0.98 * own <= counts[first] <= 1.02 * own, (own, counts)
    # ...and none when it runs on CPU 1. Were -C ignored, this would be own too.
    assert counts[second] < 0.01 * own, (own, counts)


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
