"""memscope-bench numa-triad on two nodes: in each configuration the threads run on the nodes
asked for (sched_getcpu), their pages are where they were bound (move_pages, per thread), and
memscope's own page placement per node (proc.pages_alloc, eBPF) agrees with where the data was
put: at least 95% of the pages on each intended node. The table has every (x, y)."""
import json

import pytest

from .helpers import BUILD, pages_by_node, require_event, run, stat_rows

BENCH = BUILD / "contrib" / "bench" / "suite" / "memscope-bench"
# Small: the guest is emulated. 2 MiB per array, three arrays per thread.
SIZE = "2M"
# Pages the benchmark and its threads take besides the arrays (binary, libc, stacks, the report).
SLACK = 600


def rows(results, table):
    t = results["tables"][table]
    names = [c["name"] for c in t["columns"]]
    return [dict(zip(names, r)) for r in t["rows"]]


@pytest.mark.parametrize("conf", [1, 2, 3])
def test_numa_triad_places_threads_and_pages(memscope, conf):
    require_event(memscope, "proc.pages_alloc")
    res = run([memscope, "stat", "-e", "proc.pages_alloc", "--per-node", "-x,", "--self-describing", "--",
               BENCH, "numa-triad", "--conf", conf, "--size", SIZE, "--reps", 2, "--max-reps", 2, "--max-threads", 1,
               "--format", "json", "--no-plot"], timeout=600)
    assert res.returncode == 0, res.stderr
    results = json.loads(next(line for line in res.stdout.splitlines() if line.startswith("{")))
    assert results["params"]["local_node"] == 0 and results["params"]["remote_node"] == 1

    # Every (x, y) of 0..1 x 0..1 is in the table; (0, 0) has no threads and no value.
    points = {(p["x"], p["y"]): p for p in rows(results, "results")}
    # The study's table for this guest (docs/studies/stream-triad-numa.md quotes it).
    print(f"conf {conf}: " + "; ".join(f"({x}L,{y}R) {p['total_mb_s']} MB/s normalized {p['normalized']}"
                                       for (x, y), p in sorted(points.items()) if p["total_mb_s"] is not None))
    assert set(points) == {(0, 0), (0, 1), (1, 0), (1, 1)}, points
    assert points[(0, 0)]["total_mb_s"] is None
    assert all(points[k]["total_mb_s"] > 0 for k in points if k != (0, 0)), points
    assert points[(1, 0)]["normalized"] == pytest.approx(1.0)

    # Each thread ran on a CPU of the node its configuration names, with its data where asked.
    want = {1: {"L": (0, 0), "R": (1, 0)}, 2: {"L": (0, 1), "R": (1, 0)}, 3: {"L": (0, 0), "R": (0, 1)}}[conf]
    threads = rows(results, "threads")
    assert len(threads) == 4, threads       # (1,0): 1, (0,1): 1, (1,1): 2
    for t in threads:
        run_node, data_node = want[t["group"]]
        assert (t["run_node"], t["data_node"]) == (run_node, data_node), t
        assert t["ran_on"] == run_node, t                 # node N's only CPU is N here
        assert t["share_on_data_node"] >= 0.95, t

    # memscope's page placement: what the benchmark bound to each node, within 5%.
    expected = {int(k): v for k, v in results["params"]["data_pages"].items()}
    pages = pages_by_node(stat_rows(res.stderr + "\n" + res.stdout))
    total = sum(pages.values())
    print(f"conf {conf}: expected data pages {expected}, memscope counted {pages}")
    assert expected[0] + expected[1] <= total <= expected[0] + expected[1] + SLACK, (pages, expected)
    for node in (0, 1):
        if expected[node]:
            assert pages.get(node, 0) >= 0.95 * expected[node], (node, pages, expected)
    share0 = pages.get(0, 0) / total
    assert abs(share0 - expected[0] / (expected[0] + expected[1])) <= 0.05, (pages, expected)
