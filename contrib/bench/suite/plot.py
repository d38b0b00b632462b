#!/usr/bin/env python3
"""Draws memscope-bench results (the JSON it writes) with matplotlib.

    plot.py RESULTS.json PREFIX [FORMATS]    -> PREFIX.png, or one file per format in FORMATS
                                                (png,svg,pdf; default png), and no other

Exit status 3 when matplotlib is missing (memscope-bench then tries another
python3), 1 when the results cannot be read or drawn."""
import json
import math
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
except ImportError:
    sys.exit(3)


def human(n):
    for unit in ("", "K", "M", "G"):
        if abs(n) < 1024 or unit == "G":
            return f"{n:.0f}{unit}" if n == int(n) else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)


def table(results, name):
    t = results["tables"][name]
    cols = [c["name"] for c in t["columns"]]
    return [dict(zip(cols, row)) for row in t["rows"]]


def curve(ax, rows, x, y, **kw):
    """A line through the medians with the 95% interval of each as an error bar (where the
    table has Y_low and Y_high)."""
    pts = [r for r in rows if r.get(y) is not None]
    xs, ys = [r[x] for r in pts], [r[y] for r in pts]
    if pts and f"{y}_low" in pts[0]:
        err = [[r[y] - r[f"{y}_low"] for r in pts], [r[f"{y}_high"] - r[y] for r in pts]]
        bars = ax.errorbar(xs, ys, yerr=err, capsize=2, elinewidth=0.8, **kw)
        # Named, so the bars can be found in an SVG: one vertical segment per point.
        bars.lines[2][0].set_gid(f"errorbars-{kw.get('label', y)}")
        return bars
    return ax.plot(xs, ys, **kw)


def interval_note(ax, results):
    if any("samples" in t for t in results["tables"].values()):
        ax.text(0.01, 0.01, "median and its 95% interval (order statistics) of each point",
                transform=ax.transAxes, fontsize=7, color="0.35", va="bottom")


def mark_caches(ax, results):
    """Dashed vertical lines at the cache sizes sysfs reported."""
    seen = set()
    for c in results["host"]["caches"]:
        if c["size"] in seen:
            continue
        seen.add(c["size"])
        ax.axvline(c["size"], color="0.4", linestyle="--", linewidth=1)
        ax.text(c["size"], 0.98, f" L{c['level']} {human(c['size'])}", transform=ax.get_xaxis_transform(),
                rotation=90, va="top", ha="right", fontsize=8, color="0.25")


def size_axis(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human(v)))
    ax.set_xlabel("buffer size (bytes)")
    ax.grid(True, which="major", alpha=0.3)


def host_line(results):
    h = results["host"]
    return f"{h['arch']}, {len(h['cpus'])} CPUs, {len(h['nodes'])} node(s), timer {results['timer']['name']}"


def plot_bw(results, fig):
    ax = fig.add_subplot(111)
    rows = table(results, "results")
    for op in dict.fromkeys(r["op"] for r in rows):
        curve(ax, [r for r in rows if r["op"] == op], "size", "mb_s", marker="o", markersize=3, label=op)
    interval_note(ax, results)
    size_axis(ax)
    mark_caches(ax, results)
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_ylim(bottom=0)
    ax.legend(title="operation")
    ax.set_title(f"Memory bandwidth by buffer size\n{host_line(results)}", fontsize=10)


def plot_lat(results, fig):
    ax = fig.add_subplot(111)
    rows = table(results, "results")
    for stride in dict.fromkeys(r["stride"] for r in rows):
        curve(ax, [r for r in rows if r["stride"] == stride], "size", "ns", marker="o", markersize=3,
              label=f"{stride} B")
    interval_note(ax, results)
    size_axis(ax)
    mark_caches(ax, results)
    ax.set_yscale("log")
    ax.set_ylabel("load latency (ns)")
    ax.legend(title="stride", loc="lower right")
    pattern = results["params"].get("pattern", "seq")
    ax.set_title(f"Load latency by buffer size ({pattern} pointer chase)\n{host_line(results)}", fontsize=10)


def plot_par(results, fig):
    ax = fig.add_subplot(111)
    rows = table(results, "results")
    curve(ax, rows, "size", "parallelism", marker="o", markersize=3)
    size_axis(ax)
    mark_caches(ax, results)
    ax.set_ylabel("loads in flight (latency of 1 chain / best ns per load)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Memory-level parallelism by buffer size\n{host_line(results)}", fontsize=10)


def plot_stream(results, fig):
    ax = fig.add_subplot(111)
    rows = table(results, "results")
    for k in dict.fromkeys(r["kernel"] for r in rows):
        curve(ax, [r for r in rows if r["kernel"] == k], "instances", "total_mb_s", marker="o", label=k)
    interval_note(ax, results)
    ax.set_xlabel("concurrent instances (one pinned thread each)")
    ax.set_ylabel("total bandwidth (MB/s)")
    ax.set_xticks(sorted({r["instances"] for r in rows}))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(title="kernel")
    size = human(results["params"]["array_bytes"])
    ax.set_title(f"STREAM, {size} per array\n{host_line(results)}", fontsize=10)


def heat(ax, fig, grid, xs, ys, label, fmt):
    finite = [v for row in grid for v in row if v is not None and not math.isnan(v)]
    data = [[float("nan") if v is None else v for v in row] for row in grid]
    im = ax.imshow(data, origin="lower", cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    hi = max(finite) if finite else 1
    for j, row in enumerate(grid):
        for i, v in enumerate(row):
            text = "-" if v is None or math.isnan(v) else fmt(v)
            ax.text(i, j, text, ha="center", va="center", fontsize=9,
                    color="white" if v is None or v < 0.6 * hi else "black")
    fig.colorbar(im, ax=ax, label=label)


def plot_numa_triad(results, fig):
    ax = fig.add_subplot(111)
    rows = table(results, "results")
    xs = sorted({r["x"] for r in rows})
    ys = sorted({r["y"] for r in rows})
    value = {(r["x"], r["y"]): r["normalized"] for r in rows}
    grid = [[value.get((x, y)) for x in xs] for y in ys]
    heat(ax, fig, grid, xs, ys, "total bandwidth / bandwidth of (1, 0)", lambda v: f"{v:.2f}")
    p = results["params"]
    conf = {1: "threads on both nodes, data on L", 2: "cross: each group uses the other node's data",
            3: "split: threads on L, data on L and R"}[p["conf"]]
    ax.set_xlabel(f"x: threads in group L (node {p['local_node']})")
    ax.set_ylabel(f"y: threads in group R (node {p['remote_node']})")
    ax.set_title(f"NUMA triad, configuration {p['conf']} ({conf})\n{host_line(results)}", fontsize=10)


def plot_c2c(results, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    rows = table(results, "results")
    state = results["params"]["state"]
    for reader in dict.fromkeys(r["reader"] for r in rows):
        pts = [r for r in rows if r["reader"] == reader and r["lat_ns"] is not None]
        if pts:
            own = " (own cache)" if reader == results["params"]["ref"] else ""
            curve(left, pts, "size", "lat_ns", marker="o", markersize=3, label=f"CPU {reader}{own}")
    interval_note(left, results)
    size_axis(left)
    mark_caches(left, results)
    left.set_yscale("log")
    left.set_ylabel("load latency (ns)")
    left.legend(title="reader", loc="lower right")
    left.set_title(f"Lines left in {state} by CPU {results['params']['ref']}", fontsize=10)
    hrows = table(results, "heatmap")
    cpus = sorted({r["owner"] for r in hrows})
    value = {(r["owner"], r["reader"]): r["lat_ns"] for r in hrows}
    grid = [[value.get((o, rd)) for rd in cpus] for o in cpus]
    heat(right, fig, grid, cpus, cpus, "latency (ns)", lambda v: f"{v:.1f}")
    right.set_xlabel("reader CPU")
    right.set_ylabel(f"owner CPU (left the lines in {state})")
    right.set_title(f"Core to core, {human(results['params']['heat_size'])}", fontsize=10)
    fig.suptitle(host_line(results), fontsize=9)


def plot_damon_heatmap(results, fig):
    """memscope report --heatmap --plot: time (rows) x physical address (columns), the access rate
    in percent of an aggregation's samples as colour; node ranges and labels marked."""
    ax = fig.add_subplot(111)
    rows = results["rows"]
    low, col = results["low"], results["column_bytes"]
    gib = 1 << 30
    data = [[float("nan") if v is None else v for v in r["rates"]] for r in rows]
    times = [r["t"] for r in rows]
    im = ax.imshow(data, origin="upper", cmap="inferno", aspect="auto", vmin=0, vmax=100,
                   extent=(low / gib, (low + col * results["columns"]) / gib,
                           len(rows) - 0.5, -0.5))
    im.set_gid("heatmap")
    ax.set_yticks(range(len(rows)), [f"{t:.1f}" for t in times])
    ax.set_xlabel("physical address (GiB)")
    ax.set_ylabel("time (s since the recording started)")
    for n in results["nodes"]:
        ax.axvline(n["start"] / gib, color="cyan", linewidth=0.8, linestyle="--")
        ax.text(n["start"] / gib, -0.5, f" node {n['node']}", color="cyan", va="top", fontsize=8)
    for label in results["labels"]:
        # The row of the label: the last one starting at or before it.
        row = max([i for i, t in enumerate(times) if t <= label["t"]] or [0])
        ax.axhline(row, color="white", linewidth=0.6)
        ax.text(low / gib, row, f" {label['text']}", color="white", va="bottom", fontsize=8)
    fig.colorbar(im, ax=ax, label="access rate (% of the aggregation's samples)")
    ax.set_title(f"DAMON heat map of {results['file']}", fontsize=10)


PLOTS = {"damon-heatmap": plot_damon_heatmap, "bw": plot_bw, "lat": plot_lat, "par": plot_par, "stream": plot_stream,
         "numa-triad": plot_numa_triad, "c2c": plot_c2c}


def main():
    if len(sys.argv) < 3:
        print("usage: plot.py RESULTS.json PREFIX [png,svg,pdf]", file=sys.stderr)
        return 1
    path, prefix = sys.argv[1], sys.argv[2]
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot.py: {path}: {e}", file=sys.stderr)
        return 1
    draw = PLOTS.get(results.get("benchmark"))
    if not draw:
        print(f"plot.py: {path}: no plot for benchmark '{results.get('benchmark')}'", file=sys.stderr)
        return 1
    wide = results["benchmark"] == "c2c"
    fig = plt.figure(figsize=(13 if wide else 8, 5.5), dpi=110)
    draw(results, fig)
    fig.tight_layout()
    warning = (results.get("load") or {}).get("warning")
    if warning:
        fig.subplots_adjust(bottom=fig.subplotpars.bottom + 0.04)
        fig.text(0.5, 0.005, f"warning: {warning}", ha="center", va="bottom", fontsize=8, color="#b00000")
    formats = (sys.argv[3] if len(sys.argv) > 3 else "png").split(",")
    plt.rcParams["svg.fonttype"] = "none"      # text stays text: searchable, checkable
    for fmt in formats:
        if fmt not in ("png", "svg", "pdf"):
            print(f"plot.py: '{fmt}' is not png, svg or pdf", file=sys.stderr)
            return 1
        fig.savefig(f"{prefix}.{fmt}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
