"""The NUMA suite: runs inside the 2-node guest that tests/vm/run.sh boots (node 0 = CPU 0,
node 1 = CPU 1). It asserts what the kernel itself reports (/proc/vmstat, node numastat,
numa_maps) and then that memscope reports the same. The guest is thrown away afterwards,
so tests may change global settings (THP)."""
import os
import pathlib

import pytest

from .helpers import BUILD


def pytest_collection_modifyitems(config, items):
    # On a host the suite would measure a 1-node machine: it only means something in the guest.
    if os.environ.get("MEMSCOPE_VM_GUEST") == "1":
        return
    reason = "runs only inside the 2-node guest: tests/vm/run.sh"
    for item in items:
        if "/tests/vm/suite/" in str(item.fspath):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def build_dir():
    return BUILD


@pytest.fixture(scope="session")
def memscope():
    path = BUILD / "memscope"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/setup.sh), or set MEMSCOPE_BUILD")
    return str(path)


@pytest.fixture(scope="session")
def touchmem():
    path = BUILD / "contrib" / "bench" / "touchmem"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/setup.sh), or set MEMSCOPE_BUILD")
    return str(path)


@pytest.fixture(scope="session", autouse=True)
def two_nodes():
    online = pathlib.Path("/sys/devices/system/node/online").read_text().strip()
    # The tiered guest (MEMSCOPE_VM_TIERED=1) adds node 2, without CPUs.
    if online != ("0-2" if os.environ.get("MEMSCOPE_VM_TIERED") == "1" else "0-1"):
        pytest.fail(f"expected nodes 0-1 online, found {online!r}: is this the guest from tests/vm/run.sh?")


@pytest.fixture(scope="session")
def thp_off():
    """Exact page counts need one allocation per 4 KiB page."""
    path = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if "[never]" not in path.read_text():
        path.write_text("never")
    assert "[never]" in path.read_text()


@pytest.fixture(scope="session")
def no_background_migration():
    """pgmigrate_success is system-wide. NUMA balancing (on by default on multi-node
    kernels) and proactive compaction migrate other tasks' pages at any moment, so
    exact migration counts need both off while they are measured."""
    settings = {"/proc/sys/kernel/numa_balancing": "0", "/proc/sys/vm/compaction_proactiveness": "0"}
    saved = {}
    for name, value in settings.items():
        path = pathlib.Path(name)
        if path.exists():
            saved[path] = path.read_text()
            path.write_text(value)
            assert path.read_text().strip() == value, name
    yield
    for path, value in saved.items():
        path.write_text(value)
