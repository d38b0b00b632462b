"""Where a workload's pages land: touchmem runs on node 0's CPU with its memory bound to
node 1 (remote) or node 0 (local). The kernel's per-node numastat is the ground truth;
memscope's BPF page placement and remote_ratio.lua must agree with it."""
import pathlib
import re

import pytest

from .helpers import ROOT, numastat_all, numastat_delta, pages_by_node, require_event, run, stat_rows

MB = 32
PAGES = MB * 256
# Start-up of numactl and touchmem (binaries, libc, page tables) on top of the buffer.
STARTUP_SLACK = 512
# What the rest of the guest (pytest, kernel threads) may allocate meanwhile.
NOISE = 256


def bound(touchmem, memnode):
    return ["numactl", "--cpunodebind=0", f"--membind={memnode}", touchmem, MB]


@pytest.mark.parametrize("memnode", [1, 0], ids=["remote", "local"])
def test_numastat_shows_where_pages_land(touchmem, thp_off, memnode):
    before = numastat_all()
    res = run(bound(touchmem, memnode))
    d = numastat_delta(before)
    assert res.returncode == 0, res.stderr
    other = 1 - memnode
    # The bound node served every page and the policy was met: numa_hit, not numa_miss.
    assert PAGES <= d[memnode]["numa_hit"] <= PAGES + STARTUP_SLACK + NOISE, d
    assert d[memnode]["numa_miss"] <= NOISE, d
    assert d[other]["numa_hit"] <= NOISE, d
    if memnode == 1:
        # Allocated for a CPU of node 0: counted as other_node on node 1.
        assert PAGES <= d[1]["other_node"] <= PAGES + STARTUP_SLACK + NOISE, d
        assert d[1]["local_node"] <= NOISE, d
    else:
        assert PAGES <= d[0]["local_node"] <= PAGES + STARTUP_SLACK + NOISE, d
        assert d[0]["other_node"] <= NOISE, d
        assert d[1]["other_node"] <= NOISE, d


def placement(memscope, cmd):
    res = run([memscope, "stat", "-e", "proc.pages_alloc", "--per-node", "-x,", "--self-describing", "--", *cmd])
    assert res.returncode == 0, res.stderr
    return pages_by_node(stat_rows(res.stderr + "\n" + res.stdout)), res


@pytest.mark.parametrize("memnode", [1, 0], ids=["remote", "local"])
def test_bpf_page_placement(memscope, touchmem, thp_off, memnode):
    require_event(memscope, "proc.pages_alloc")
    pages, res = placement(memscope, bound(touchmem, memnode))
    total = sum(pages.values())
    assert set(pages) <= {0, 1}, pages
    assert PAGES <= total <= PAGES + STARTUP_SLACK, (pages, res.stderr)
    # The bar: at least 95% of the workload's pages on the bound node.
    assert pages.get(memnode, 0) >= 0.95 * total, pages
    assert pages.get(memnode, 0) >= PAGES, pages


def remote_ratio(memscope, cmd, tmp_path):
    """remote_ratio.lua over a recording of cmd, as a fraction."""
    script = ROOT / "lua" / "remote_ratio.lua"
    recording = tmp_path / "placement.msr"
    # numastat local/other per node: the kernel's own split of the run's page allocations.
    res = run([memscope, "record", "-o", recording, "-m", "numa.local,numa.other", "--", *cmd])
    assert res.returncode == 0, res.stderr
    res = run([memscope, "report", "--lua", script, recording])
    assert res.returncode == 0, res.stderr
    match = re.search(r"^remote share: ([0-9.]+) \(", res.stdout, re.M)
    assert match, f"no remote share in remote_ratio.lua's report:\n{res.stdout}"
    return float(match.group(1))


@pytest.mark.parametrize("memnode,remote", [(1, True), (0, False)], ids=["remote", "local"])
def test_remote_ratio_lua(memscope, touchmem, thp_off, tmp_path, memnode, remote):
    ratio = remote_ratio(memscope, bound(touchmem, memnode), tmp_path)
    if remote:
        assert ratio >= 0.95, ratio
    else:
        assert ratio <= 0.05, ratio
