"""The cgroup_memory plugin on two nodes: a workload in its own cgroup v2 holds memory bound
to node 1; memscope's anonymous memory per node must be the kernel's memory.numa_stat, node
by node (the guest is thrown away, so the test may mount cgroup2 itself)."""
import os
import pathlib
import subprocess
import time

import pytest

from .helpers import run, stat_rows

# memory.numa_stat is flushed from per-CPU counts only past 64 pages (MEMCG_CHARGE_BATCH) of
# updates per online CPU, and each CPU keeps up to 64 more: two reads may differ by that much.
UNFLUSHED = 2 * 64 * 4096 * os.cpu_count()

MB = 32
CGROUP2 = pathlib.Path("/sys/fs/cgroup")


def cgroup2_with_memory():
    """The cgroup2 mount with the memory controller available to children."""
    if not (CGROUP2 / "cgroup.controllers").exists():
        res = run(["mount", "-t", "cgroup2", "none", str(CGROUP2)])
        assert res.returncode == 0, res.stderr
    if "memory" not in (CGROUP2 / "cgroup.controllers").read_text().split():
        pytest.skip("the guest's cgroup2 has no memory controller (a v1 memory hierarchy took it)")
    if "memory" not in (CGROUP2 / "cgroup.subtree_control").read_text().split():
        (CGROUP2 / "cgroup.subtree_control").write_text("+memory")
    return CGROUP2


def anon_by_node(path):
    for line in (path / "memory.numa_stat").read_text().splitlines():
        words = line.split()
        if words[0] == "anon":
            return {int(w[1:].split("=")[0]): int(w.split("=")[1]) for w in words[1:]}
    raise AssertionError(f"no anon line in {path}/memory.numa_stat")


@pytest.mark.parametrize("memnode", [1, 0])
def test_anon_per_node_is_the_kernels(memscope, build_dir, thp_off, memnode):
    mount = cgroup2_with_memory()
    name = f"memscope-vm-{os.getpid()}-{memnode}"
    path = mount / name
    path.mkdir()
    try:
        holdmem = build_dir / "tests" / "plugins" / "holdmem"
        cmd = [memscope, "--plugin", f"{build_dir}/contrib/plugins/cgroup_memory.so:cgroup=/{name}", "stat",
               "--log-fd", "1", "-x,", "--self-describing", "-I", "200", "--per-node", "-m", "mem.anon_bytes", "--", "sh", "-c",
               f"echo $$ > {path}/cgroup.procs && exec numactl --membind={memnode} {holdmem} {MB}"]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        before = []
        for line in p.stdout:   # stat's counts (--log-fd 1: beside the workload's lines) may come first
            if line == "ready\n":
                break
            before.append(line)
        else:
            raise AssertionError(f"the workload never got ready: {p.stderr.read()}")
        ready = time.monotonic() - t0
        time.sleep(1.5)
        kernel = anon_by_node(path)
        time.sleep(1.5)
        close = time.monotonic() - t0
        # Read on through the same buffered stream the lines before "ready" came from.
        p.stdin.close()
        out = p.stdout.read()
        err = p.stderr.read()
        p.wait(timeout=60)
        assert p.returncode == 0, err
    finally:
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    assert (MB << 20) - UNFLUSHED <= kernel[memnode] <= (MB + 2) << 20, kernel
    assert kernel[1 - memnode] <= 1 << 20, kernel
    rows = [r for r in stat_rows("".join(before) + out) if r["time"] != "total"]
    # memscope's clock starts when it is ready to count; the run ends with the hold: count back.
    end = max(float(r["time"]) for r in rows)
    held = [r for r in rows if end - (close - ready) + 0.5 < float(r["time"]) < end - 0.5]
    assert len(held) >= 4, out
    for node in (0, 1):
        ours = [r["value"] for r in held if r["scope"] == f"node{node}" and r["event"] == "mem.anon_bytes"]
        assert ours, held
        for value in ours:
            assert abs(value - kernel[node]) <= UNFLUSHED, (node, value, kernel)
