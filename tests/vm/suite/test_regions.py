"""memscope report --regions on two nodes: a phase whose pages are bound to node 1 from a CPU
of node 0 shows them on node 1's row, as other-node allocations, and the region's local share
is computed from the region's own totals."""
import json
import os

from .helpers import run

MB = 32
PAGES = MB * 256
# numastat is the whole guest's: what else runs meanwhile, and the program's start-up.
NOISE = 512


def test_a_bound_phase_lands_on_its_node_in_the_region(memscope, build_dir, thp_off, tmp_path):
    rec = tmp_path / "regions.rec"
    prog = build_dir / "contrib" / "marker" / "touchregions"
    res = run([memscope, "record", "-I", "200", "-e", "page-faults", "-m", "numa.local_alloc_ratio", "-o", str(rec),
               "--", "numactl", "--cpunodebind=0", "--membind=1", str(prog), str(MB)],
              env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    assert res.returncode == 0, res.stderr
    res = run([memscope, "report", "--regions", "--format", "json", str(rec)])
    assert res.returncode == 0, res.stderr
    regions = {o["region"]: o for o in map(json.loads, res.stdout.splitlines())}
    alloc = {r["scope"]: r for r in regions["alloc"]["rows"]}
    assert {"total", "node0", "node1"} <= set(alloc), list(alloc)
    ev = {scope: {k: v["value"] for k, v in row["events"].items()} for scope, row in alloc.items()}
    assert ev["total"]["page-faults"] >= PAGES
    assert PAGES <= ev["node1"]["numastat/other_node"] <= PAGES + NOISE, ev
    assert ev["node0"]["numastat/local_node"] + ev["node0"]["numastat/other_node"] <= NOISE, ev
    local, other = ev["total"]["numastat/local_node"], ev["total"]["numastat/other_node"]
    assert other == ev["node0"]["numastat/other_node"] + ev["node1"]["numastat/other_node"]
    ratio = alloc["total"]["metrics"]["numa.local_alloc_ratio"]["value"]
    assert abs(ratio - local / (local + other)) < 1e-9 and ratio < 0.1, (ratio, local, other)
