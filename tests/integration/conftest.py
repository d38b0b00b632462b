"""Shared fixtures for memscope's integration tests: they run the built binary as a user would."""
import os
import pathlib
import subprocess
import time

import pytest

# Every recording a test makes is checked to add up after that test (recordings_add_up.py).
from recordings_add_up import pytest_terminal_summary, recordings_add_up  # noqa: F401

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("MEMSCOPE_BUILD", ROOT / "build")).resolve()
FIXTURES = ROOT / "tests" / "fixtures" / "sysfs"
# As scripts/test.sh sets it, for runs of pytest alone: LeakSanitizer's tracer otherwise dies
# at exit in 1 of 128 heap layouts, reading dlopened libdw's TLS block as a glibc 2.19 one.
if "ASAN_OPTIONS" in os.environ and "intercept_tls_get_addr" not in os.environ["ASAN_OPTIONS"]:
    os.environ["ASAN_OPTIONS"] += ":intercept_tls_get_addr=0"


@pytest.fixture(scope="session")
def build_dir():
    return BUILD


@pytest.fixture(scope="session")
def memscope():
    path = BUILD / "memscope"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/setup.sh)")
    return str(path)


@pytest.fixture(scope="session")
def touchmem():
    return str(BUILD / "contrib" / "bench" / "touchmem")


@pytest.fixture(scope="session")
def fixtures_dir():
    return FIXTURES


def run(cmd, **kw):
    """Run a command, capture text output, never raise on non-zero exit."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def fixture_env(machine, **extra):
    """Environment pointing memscope at a fixture machine's sysfs/procfs tree."""
    env = dict(os.environ)
    env["MEMSCOPE_SYSFS_ROOT"] = str(FIXTURES / machine / "sys")
    proc = FIXTURES / machine / "proc"
    if proc.exists():
        env["MEMSCOPE_PROCFS_ROOT"] = str(proc)
    env.update(extra)
    return env


def online_cpus():
    """The host's online CPUs, as the kernel lists them (not this process's affinity)."""
    with open("/sys/devices/system/cpu/online") as f:
        cpus = []
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def cgroup_mounts():
    """(fstype, super options, mount point) of each cgroup and cgroup2 mount, from mountinfo."""
    for line in open("/proc/self/mountinfo"):
        left, _, right = line.partition(" - ")
        fstype, _, opts = right.split()[:3]
        if fstype in ("cgroup", "cgroup2"):
            yield fstype, opts.split(","), pathlib.Path(left.split()[4])


def cgroup2_mount():
    """The cgroup v2 hierarchy's mount point, or None."""
    return next((point for fstype, _, point in cgroup_mounts() if fstype == "cgroup2"), None)


def remove_cgroup(path):
    """rmdir a test's cgroup, waiting up to 5 s for its last task to leave it (an exited task
    stays a member until its parent has reaped it)."""
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.1)
