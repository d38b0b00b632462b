"""The NUMA suite: runs inside the 2-node guest that tests/vm/run.sh boots (node 0 = CPU 0,
node 1 = CPU 1). It asserts what the kernel itself reports (/proc/vmstat, node numastat,
numa_maps) and then that memscope reports the same. The guest is thrown away afterwards,
so tests may change global settings (THP)."""
import csv
import io
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MEMSCOPE_BUILD", ROOT / "build")).resolve()
WORKLOADS = pathlib.Path(__file__).resolve().parent / "workloads"
PAGE = os.sysconf("SC_PAGESIZE")


def pytest_collection_modifyitems(config, items):
    # On a host the suite would measure a 1-node machine: it only means something in the guest.
    if os.environ.get("MEMSCOPE_VM_GUEST") == "1":
        return
    reason = "runs only inside the 2-node guest: tests/vm/run.sh"
    for item in items:
        item.add_marker(pytest.mark.skip(reason=reason))


def run(cmd, **kw):
    """Run a command, capture text output, never raise on non-zero exit."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 180)
    return subprocess.run([str(c) for c in cmd], **kw)


def read_counters(path):
    """`name value` lines (/proc/vmstat, nodeN/numastat) as a dict of ints."""
    counters = {}
    for line in pathlib.Path(path).read_text().splitlines():
        name, value = line.split()
        counters[name] = int(value)
    return counters


def vmstat():
    return read_counters("/proc/vmstat")


def numastat(node):
    return read_counters(f"/sys/devices/system/node/node{node}/numastat")


def numastat_all():
    return {node: numastat(node) for node in (0, 1)}


def delta(after, before):
    return {key: after[key] - before.get(key, 0) for key in after}


def numastat_delta(before):
    after = numastat_all()
    return {node: delta(after[node], before[node]) for node in after}


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
    if online != "0-1":
        pytest.fail(f"expected nodes 0-1 online, found {online!r}: is this the guest from tests/vm/run.sh?")


@pytest.fixture(scope="session")
def thp_off():
    """Exact page counts need one allocation per 4 KiB page."""
    path = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if "[never]" not in path.read_text():
        path.write_text("never")
    assert "[never]" in path.read_text()


def stat_rows(output):
    """Rows of `memscope stat -x,` (header time,scope,event,value,unit,coverage) as dicts."""
    # Workloads print JSON on the same stdout: not CSV rows.
    lines = [line for line in output.splitlines() if line.count(",") >= 3 and not line.startswith("{")]
    header = next((i for i, line in enumerate(lines) if line.startswith("time,")), None)
    assert header is not None, f"no CSV header in memscope's output:\n{output}"
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[header:]))))
    for row in rows:
        if not row["value"].startswith("<"):
            row["value"] = float(row["value"])
    return rows


def totals(rows, event):
    """{scope: value} of the final totals of one event."""
    return {r["scope"]: r["value"] for r in rows if r["event"] == event and r["time"] == "total"}


def node_of_scope(scope):
    """The node number in a scope label such as 'node1' or 'node=1'; None if there is none."""
    match = re.search(r"node\D?(\d+)", scope)
    return int(match.group(1)) if match else None


def require_event(memscope, event, extra=()):
    """xfail (with memscope's own message) when this memscope does not know the event yet;
    any other failure is left to the test's own assertions."""
    res = run([memscope, "stat", "-e", event, *extra, "-x,", "--", "true"])
    if res.returncode != 0 and re.search(r"unknown (event|option)|unrecognized option", res.stderr):
        pytest.xfail(f"not implemented yet: `memscope stat -e {event} {' '.join(extra)}` says: "
                     f"{res.stderr.strip().splitlines()[0]}")


def require_option(memscope, option):
    """xfail when `memscope stat --help` does not offer the option yet."""
    res = run([memscope, "stat", "--help"])
    if option not in res.stdout + res.stderr:
        pytest.xfail(f"not implemented yet: `memscope stat` has no {option} option")
