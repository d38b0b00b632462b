"""What the NUMA suite's tests share: running commands, reading the kernel's counters and
parsing memscope's CSV output."""
import csv
import io
import os
import pathlib
import re
import subprocess


ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MEMSCOPE_BUILD", ROOT / "build")).resolve()
WORKLOADS = pathlib.Path(__file__).resolve().parent / "workloads"


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


def stat_rows(output):
    """Rows of `memscope stat -x,` (header time,scope,event,value,unit,coverage,note) as dicts."""
    # Workloads print JSON on the same stdout: not CSV rows.
    lines = [line for line in output.splitlines() if line.count(",") >= 3 and not line.startswith("{")]
    header = next((i for i, line in enumerate(lines) if line.startswith("time,")), None)
    assert header is not None, f"no CSV header in memscope's output:\n{output}"
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[header:]))))
    for row in rows:
        try:
            row["value"] = float(row["value"])
        except ValueError:
            pass  # "<not counted>", "n/a": left as text, so arithmetic on it fails loudly
    return rows


def node_of_scope(scope):
    """The node number in a scope label such as 'node1' or 'node=1'; None if there is none."""
    match = re.search(r"node\D?(\d+)", scope)
    return int(match.group(1)) if match else None


def pages_by_node(rows, event="proc.pages_alloc"):
    """{node: pages} from the final totals of a per-node event."""
    pages = {}
    for row in rows:
        if row["time"] != "total" or row["event"] != event:
            continue
        node = node_of_scope(row["scope"])
        assert node is not None, f"{event} row without a node (--per-node?): {row}"
        pages[node] = pages.get(node, 0) + row["value"]
    return pages


def require_event(memscope, event, extra=()):
    """Fail at once, with memscope's own message, when this memscope does not know the event
    (a clearer failure than the test's own assertions on missing rows); any other failure is
    left to those assertions."""
    res = run([memscope, "stat", "-e", event, *extra, "-x,", "--self-describing", "--", "true"])
    assert not (res.returncode != 0 and re.search(r"unknown (event|option)|unrecognized option", res.stderr)), \
        f"`memscope stat -e {event} {' '.join(extra)}` says: {res.stderr.strip().splitlines()[0]}"


def require_option(memscope, option):
    """Fail at once when `memscope stat --help` does not offer the option."""
    res = run([memscope, "stat", "--help"])
    assert option in res.stdout + res.stderr, f"`memscope stat --help` offers no {option} option"
