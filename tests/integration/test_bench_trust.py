"""memscope bench's figures can be trusted as far as it says: every point is a median of
repetitions with its 95% interval (recomputed here from the samples the JSON carries), drawn
as error bars; c2c's table and heat map are the same measurements; output files are never
overwritten silently and only the plot formats asked for are written."""
import json
import math
import os
import re
import statistics
import xml.etree.ElementTree as ET

from conftest import BUILD, run

BENCH = BUILD / "contrib" / "bench" / "suite" / "memscope-bench"


def bench(*args, timeout=300, **kw):
    res = run([str(BENCH), *map(str, args)], timeout=timeout, **kw)
    assert res.returncode == 0, f"memscope-bench {' '.join(map(str, args))}: {res.stderr}"
    return res


def rows(results, table="results"):
    t = results["tables"][table]
    names = [c["name"] for c in t["columns"]]
    return [dict(zip(names, r)) for r in t["rows"]]


def median_interval(samples):
    """The distribution-free 95% interval on the median, computed here on its own: the
    order statistics x(k) and x(n+1-k) with the largest k whose coverage
    1 - 2 P(Bin(n, 1/2) <= k-1) is at least 0.95 (k = 1 when no k reaches it)."""
    x, n = sorted(samples), len(samples)
    k = 1
    for r in range(1, (n + 1) // 2 + 1):
        if 1 - 2 * sum(math.comb(n, i) for i in range(r)) / 2 ** n >= 0.95:
            k = r
    return statistics.median(x), x[k - 1], x[n - k]


def check_spread(results, table, col):
    """Every row of the table: n, median, low and high recomputed from the row's samples."""
    t = results["tables"][table]
    samples = t["samples"][col]
    assert len(samples) == len(t["rows"])
    for row, raw in zip(rows(results, table), samples):
        assert row["n"] == len(raw) >= 2, row
        med, low, high = median_interval(raw)
        assert row[f"{col}_low"] <= row[col] <= row[f"{col}_high"], row
        for name, want in ((col, med), (f"{col}_low", low), (f"{col}_high", high)):
            assert math.isclose(row[name], want, rel_tol=1e-5), (name, row[name], want, raw)


def test_bw_and_lat_points_carry_median_interval_and_samples():
    r = json.loads(bench("bw", "rd", "--sizes", "16K,4M", "--reps", 6, "--max-reps", 12, "--format", "json",
                         "--no-plot").stdout)
    check_spread(r, "results", "mb_s")
    # At least --reps, at most --max-reps.
    assert all(6 <= row["n"] <= 12 for row in rows(r)), rows(r)
    r = json.loads(bench("lat", "--sizes", "4K,64K,1M", "--reps", 7, "--max-reps", 9, "--format", "json",
                         "--no-plot").stdout)
    check_spread(r, "results", "ns")
    assert all(7 <= row["n"] <= 9 for row in rows(r)), rows(r)


def test_text_and_csv_show_the_interval():
    res = bench("bw", "wr", "--sizes", "8K", "--reps", 6, "--max-reps", 6, "--format", "csv", "--no-plot")
    lines = [line for line in res.stdout.splitlines() if not line.startswith("#")]
    assert lines[0] == "op,size,mb_s,mb_s_low,mb_s_high,n"
    op, size, med, low, high, n = lines[1].split(",")
    assert (op, size, n) == ("wr", "8192", "6") and float(low) <= float(med) <= float(high), lines
    res = bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 6, "--no-plot")
    assert re.search(r"ns \(ns\)\s+ns_low \(ns\)\s+ns_high \(ns\)\s+n$", res.stdout, re.M), res.stdout


def test_precision_decides_the_count():
    """A loose precision stops at --reps once the interval exists (n >= 6); an impossible one
    runs to --max-reps."""
    loose = json.loads(bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 40, "--precision", 100,
                             "--format", "json", "--no-plot").stdout)
    assert rows(loose)[0]["n"] == 6, rows(loose)
    tight = json.loads(bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 15, "--precision", 1e-9,
                             "--max-time", 100, "--format", "json", "--no-plot").stdout)
    assert rows(tight)[0]["n"] == 15, rows(tight)


def test_plot_has_error_bars(tmp_path):
    """The SVG has one group of error bars per curve: a vertical segment per point, from the
    interval's high to its low (SVG's y grows downwards)."""
    prefix = tmp_path / "lat"
    r = json.loads(bench("lat", "--sizes", "4K,64K,1M", "--reps", 6, "--max-reps", 8, "--format", "json",
                         "--plot-format", "svg", "-o", prefix).stdout)
    tree = ET.parse(f"{prefix}.svg")
    ns = {"svg": "http://www.w3.org/2000/svg"}
    group = tree.getroot().find(".//svg:g[@id='errorbars-64 B']", ns)
    assert group is not None, "no error bars in the SVG"
    paths = group.findall("svg:path", ns)
    assert len(paths) == len(rows(r)), len(paths)
    for p in paths:
        (x1, y1), (x2, y2) = [tuple(map(float, m)) for m in re.findall(r"([-0-9.]+) ([-0-9.]+)", p.get("d"))]
        assert x1 == x2 and y1 >= y2, p.get("d")


def test_c2c_table_and_heat_map_are_the_same_measurements():
    r = json.loads(bench("c2c", "--state", "M", "--sizes", "16K,256K", "--heat-size", "16K", "--reps", 6,
                         "--max-reps", 10, "--format", "json", "--no-plot").stdout)
    ref = r["params"]["ref"]
    heat = {(h["owner"], h["reader"]): (h, s) for h, s in
            zip(rows(r, "heatmap"), r["tables"]["heatmap"]["samples"]["lat_ns"])}
    table = [(row, s) for row, s in zip(rows(r), r["tables"]["results"]["samples"]["lat_ns"])
             if row["size"] == 16384]
    assert {row["reader"] for row, _ in table} == set(os.sched_getaffinity(0))
    for row, raw in table:
        h, hraw = heat[(ref, row["reader"])]
        assert raw == hraw, (row, h)
        for col in ("lat_ns", "lat_ns_low", "lat_ns_high", "bw_mb_s", "n"):
            assert h[col] == row[col], (col, h, row)
    check_spread(r, "results", "lat_ns")
    check_spread(r, "heatmap", "bw_mb_s")


def test_files_are_never_overwritten_without_force(tmp_path):
    prefix = tmp_path / "bw"
    args = ("bw", "rd", "--sizes", "16K", "--reps", 2, "--max-reps", 2, "-o", prefix)
    bench(*args, "--plot-format", "png,svg")
    first = (tmp_path / "bw.json").read_bytes()
    res = bench(*args)
    assert "writing" in res.stderr and f"{prefix}-1.*" in res.stderr, res.stderr
    assert (tmp_path / "bw.json").read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bw-1.json", "bw-1.png", "bw.json", "bw.png", "bw.svg"]
    bench(*args)
    assert (tmp_path / "bw-2.png").exists()
    # --force replaces the run at PREFIX: its json and png, and removes its svg (not asked for now).
    bench(*args, "--force")
    assert (tmp_path / "bw.json").read_bytes() != first
    assert not (tmp_path / "bw.svg").exists() and (tmp_path / "bw.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("bw.")) == ["bw.json", "bw.png"]


def test_plot_format_writes_exactly_what_was_asked(tmp_path):
    prefix = tmp_path / "lat"
    bench("lat", "--sizes", "4K", "--reps", 2, "--max-reps", 2, "-o", prefix, "--plot-format", "pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lat.json", "lat.pdf"]
    assert (tmp_path / "lat.pdf").read_bytes()[:5] == b"%PDF-"
    res = run([str(BENCH), "lat", "--plot-format", "gif"])
    assert res.returncode == 2 and "--plot-format: 'gif' is not png, svg or pdf" in res.stderr, res.stderr
