"""The guest's NUMA topology as the kernel, numactl and memscope see it."""
import pathlib
import re

from .helpers import run

NODE_SYSFS = pathlib.Path("/sys/devices/system/node")


def test_numactl_shows_two_nodes_with_distances():
    res = run(["numactl", "--hardware"])
    assert res.returncode == 0, res.stderr
    assert "available: 2 nodes (0-1)" in res.stdout, res.stdout
    assert re.search(r"^node 0 cpus: 0$", res.stdout, re.M), res.stdout
    assert re.search(r"^node 1 cpus: 1$", res.stdout, re.M), res.stdout
    table = res.stdout.split("node distances:")[1].split("\n")
    rows = [line.split() for line in table if re.match(r"\s*\d+:", line)]
    assert rows == [["0:", "10", "20"], ["1:", "20", "10"]], table


def test_sysfs_nodes_cpus_and_distances():
    assert (NODE_SYSFS / "online").read_text().strip() == "0-1"
    assert (NODE_SYSFS / "node0" / "cpulist").read_text().strip() == "0"
    assert (NODE_SYSFS / "node1" / "cpulist").read_text().strip() == "1"
    assert (NODE_SYSFS / "node0" / "distance").read_text().split() == ["10", "20"]
    assert (NODE_SYSFS / "node1" / "distance").read_text().split() == ["20", "10"]
    for node in (0, 1):
        meminfo = (NODE_SYSFS / f"node{node}" / "meminfo").read_text()
        total_kb = int(re.search(r"MemTotal:\s+(\d+) kB", meminfo).group(1))
        assert total_kb > 256 * 1024, f"node{node} has only {total_kb} kB"


def test_memscope_lists_pmus(memscope):
    res = run([memscope, "list", "--pmus"])
    assert res.returncode == 0, res.stderr
    # The guest has no hardware PMU (TCG); the kernel's own PMUs are always there.
    for pmu in ("software", "tracepoint"):
        assert re.search(rf"^{pmu}\b", res.stdout, re.M), res.stdout


def test_memscope_list_topology_agrees_with_numactl(memscope):
    """Two nodes, their CPUs, memory (the kernel's nodeN/meminfo) and distances, as numactl -H has them."""
    res = run([memscope, "list", "--topology"])
    assert res.returncode == 0, res.stderr
    assert "2 NUMA nodes" in res.stdout, res.stdout
    nodes = re.search(r"NUMA nodes\n.*\n((?:  \d.*\n)+)", res.stdout).group(1).splitlines()
    for node, line in enumerate(nodes):
        fields = line.split()
        assert fields[0] == str(node) and fields[1] == str(node), line
        meminfo = (NODE_SYSFS / f"node{node}" / "meminfo").read_text()
        total_kb = int(re.search(r"MemTotal:\s+(\d+) kB", meminfo).group(1))
        value, unit = float(fields[2]), fields[3]
        assert unit in ("MiB", "GiB"), line
        shown_kb = value * (1024 if unit == "MiB" else 1024 * 1024)
        assert abs(shown_kb - total_kb) <= total_kb * 0.01, (line, total_kb)
    table = res.stdout.split("node distances:")[1].split("\n")
    rows = [line.split() for line in table if re.match(r"\s*\d+:", line)]
    assert rows[:2] == [["0:", "10", "20"], ["1:", "20", "10"]], table
