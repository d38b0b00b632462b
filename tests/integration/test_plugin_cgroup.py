"""The cgroup_memory plugin, live: a workload in a cgroup this test creates holds memory,
and memscope's figures must equal the kernel's own files for that cgroup, per node."""
import os
import subprocess
import time

import pytest

from conftest import cgroup2_mount, cgroup_mounts, remove_cgroup, run
from stat_output import counter_output, intervals, parse_csv, totals

HOLD_MB = 64
# The kernel (6.1) flushes a cgroup's per-CPU statistics into memory.numa_stat only when more
# than 64 pages (MEMCG_CHARGE_BATCH) of updates per online CPU are pending, and each CPU keeps
# up to 64 more: two reads of the file, memscope's and the test's, may differ by that much
# while the workload holds still.
UNFLUSHED = 2 * 64 * 4096 * os.cpu_count()
PAGE = os.sysconf("SC_PAGE_SIZE")


def memory_hierarchy():
    """(mount point, version) of the cgroup memory controller, or None."""
    for fstype, opts, point in cgroup_mounts():
        if fstype == "cgroup" and "memory" in opts:
            return point, 1
    v2 = cgroup2_mount()
    if v2 and "memory" in (v2 / "cgroup.controllers").read_text().split():
        return v2, 2
    return None


@pytest.fixture
def cgroup():
    """A fresh memory cgroup (name, directory, version), removed afterwards."""
    found = memory_hierarchy()
    if os.geteuid() != 0 or not found:
        pytest.skip("needs root and a cgroup memory controller")
    mount, version = found
    name = f"memscope-test-{os.getpid()}-{time.monotonic_ns()}"
    path = mount / name
    path.mkdir()
    yield name, path, version
    remove_cgroup(path)


def kernel_anon(path, version):
    """{node: anon bytes} from the cgroup's memory.numa_stat, as the kernel writes it."""
    for line in (path / "memory.numa_stat").read_text().splitlines():
        words = line.split()
        if version == 2 and words[0] == "anon":
            return {int(w[1:].split("=")[0]): int(w.split("=")[1]) for w in words[1:]}
        if version == 1 and words[0].startswith("hierarchical_anon="):
            return {int(w[1:].split("=")[0]): int(w.split("=")[1]) * PAGE for w in words[1:]}
    raise AssertionError(f"no anon line in {path}/memory.numa_stat")


def hold_and_compare(cmd, path, version, **popen):
    """Run memscope (cmd) whose workload is holdmem; while it holds, read the kernel's
    numbers. Returns (memscope's CSV rows inside the hold, kernel anon per node, stderr)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, **popen)
    before = []
    for line in p.stdout:       # memscope's own lines may come first
        if line == "ready\n":
            break
        before.append(line)
    else:
        raise AssertionError(f"the workload never got ready: {p.stderr.read()}")
    ready = time.monotonic() - t0
    time.sleep(1.0)
    kernel = kernel_anon(path, version)
    time.sleep(1.0)
    close = time.monotonic() - t0
    # Read on through the same buffered stream the lines before "ready" came from.
    p.stdin.close()
    out = p.stdout.read()
    err = p.stderr.read()
    p.wait(timeout=60)
    assert p.returncode == 0, err
    rows = parse_csv(counter_output(err))
    # Frames wholly inside the hold. memscope's clock starts when it is ready to count (how
    # long that takes varies), but the run ends with the hold: count back from its last frame.
    end = max(float(r["time"]) for r in intervals(rows))
    held = [r for r in intervals(rows) if end - (close - ready) + 0.4 < float(r["time"]) < end - 0.4]
    assert len(held) >= 4, (ready, close, err)
    return held, kernel, rows, err


def test_anon_per_node_equals_the_kernels_numa_stat(memscope, build_dir, cgroup):
    name, path, version = cgroup
    holdmem = build_dir / "tests" / "plugins" / "holdmem"
    plugin = f"{build_dir}/contrib/plugins/cgroup_memory.so:cgroup=/{name}"
    cmd = [memscope, "--plugin", plugin, "stat", "-x,", "--self-describing", "-I", "200", "--per-node", "-m", "mem.anon_bytes",
           "--", "sh", "-c", f"echo $$ > {path}/cgroup.procs && exec {holdmem} {HOLD_MB}"]
    held, kernel, _, _ = hold_and_compare(cmd, path, version)
    for node, value in kernel.items():
        ours = [r["value"] for r in held if r["scope"] == f"node{node}" and r["event"] == "mem.anon_bytes"]
        assert ours, (node, held)
        # The workload holds still: every frame of the hold shows the kernel's figure.
        for v in ours:
            assert abs(v - value) <= UNFLUSHED, (node, v, value)
    # The cgroup holds the workload's memory (less what the kernel has not flushed yet).
    assert (HOLD_MB << 20) - UNFLUSHED <= sum(kernel.values()) <= (HOLD_MB + 4) << 20, kernel


def test_the_issue_check_as_written_counts_the_commands_cgroup(memscope, build_dir, cgroup):
    """memscope --plugin cgroup_memory.so stat -m mem.anon_bytes -- WORKLOAD: no argument, so the
    plugin reads the command's cgroup - here memscope's own, which the test put in its cgroup."""
    name, path, version = cgroup
    holdmem = build_dir / "tests" / "plugins" / "holdmem"
    cmd = [memscope, "--plugin", f"{build_dir}/contrib/plugins/cgroup_memory.so", "stat", "-x,", "--self-describing", "-I", "200",
           "-m", "mem.anon_bytes", "--", str(holdmem), str(HOLD_MB)]

    def join():
        (path / "cgroup.procs").write_text(str(os.getpid()))

    held, kernel, _, _ = hold_and_compare(cmd, path, version, preexec_fn=join)
    total = sum(kernel.values())
    for r in held:
        assert r["scope"] == "total" and r["event"] == "mem.anon_bytes"
        # memscope's own memory is in the cgroup too and moves a little between reads.
        assert abs(r["value"] - total) <= 1 << 20, (r, total)
    assert total >= HOLD_MB << 20


def test_per_instance_names_the_cgroup_and_faults_are_the_workloads(memscope, build_dir, cgroup):
    name, path, _ = cgroup
    plugin = f"{build_dir}/contrib/plugins/cgroup_memory.so:cgroup=/{name}"
    workload = f"echo $$ > {path}/cgroup.procs && {build_dir}/tests/plugins/holdmem {HOLD_MB} </dev/null >/dev/null"
    res = run([memscope, "--plugin", plugin, "stat", "-x,", "--self-describing", "-m", "mem.used_bytes", "--per-instance",
               "--", "sh", "-c", workload])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert (f"/{name}", "mem.used_bytes") in t, t
    # A counter: the faults the cgroup took, one per page touched plus the shell's and the loader's few.
    res = run([memscope, "--plugin", plugin, "stat", "-x,", "--self-describing", "-e", "cgroup.memory.pgfault", "--", "sh", "-c",
               workload])
    assert res.returncode == 0, res.stderr
    faults = totals(parse_csv(counter_output(res.stderr)))[("total", "cgroup.memory.pgfault")]
    assert HOLD_MB * 256 <= faults <= HOLD_MB * 256 + 3000, faults


def test_nested_cgroups_are_refused(memscope, build_dir, cgroup):
    name, path, _ = cgroup
    res = run([memscope, "--plugin", f"{build_dir}/contrib/plugins/cgroup_memory.so:cgroup=/,cgroup=/{name}",
               "stat", "-m", "mem.anon_bytes", "--", "true"])
    assert res.returncode == 1
    assert (f"plugin cgroup_memory: cgroup /{name} is inside /, whose numbers already include it: their sum "
            "would count it twice; name one of them") in res.stderr


def test_system_pressure_agrees_with_proc_pressure(memscope, build_dir, touchmem):
    if not os.path.exists("/proc/pressure/memory") or not memory_hierarchy():
        pytest.skip("needs PSI and a cgroup memory controller")

    def some_total():
        line = open("/proc/pressure/memory").readline().split()
        assert line[0] == "some"
        return int(line[4].split("=")[1])

    before = some_total()
    res = run([memscope, "--plugin", f"{build_dir}/contrib/plugins/cgroup_memory.so", "stat", "-x,", "--self-describing",
               "-m", "psi.memory_some_us", "-a", "--", touchmem, "32"])
    after = some_total()
    assert res.returncode == 0, res.stderr
    value = totals(parse_csv(counter_output(res.stderr)))[("total", "psi.memory_some_us")]
    assert 0 <= value <= after - before


def test_the_cgroup_label_goes_through_a_recording(memscope, build_dir, tmp_path):
    if not memory_hierarchy():
        pytest.skip("needs a cgroup memory controller")
    plugin = f"{build_dir}/contrib/plugins/cgroup_memory.so"
    rec = tmp_path / "cg.rec"
    res = run([memscope, "--plugin", plugin, "record", "-o", str(rec), "-I", "100", "-m", "mem.used_bytes",
               "-a", "--", "sleep", "0.3"])
    assert res.returncode == 0, res.stderr
    header = rec.read_text().splitlines()[0]
    assert '"name":"cgroup.memory.current"' in header and '"cgroup":"/"' in header, header
    res = run([memscope, "--plugin", plugin, "stat", "--input", str(rec), "-x,", "--self-describing", "--per-instance"])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert t[("/", "mem.used_bytes")] > 0, t
    # A cgroup that is not a string is the file's mistake, said with its line.
    bad = tmp_path / "bad.rec"
    bad.write_text(rec.read_text().replace('"cgroup":"/"', '"cgroup":5', 1))
    res = run([memscope, "stat", "--input", str(bad)])
    assert res.returncode != 0
    assert f'{bad}:1: "cgroup" is an integer; expected a string' in res.stderr, res.stderr
