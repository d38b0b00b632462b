"""DAMON regions in recordings (format version 3) and memscope report --heatmap: the regions a
recording holds add up to the recorded damon.accessed_bytes of each node; a hand-made recording
gives a text map checked cell by cell and a PNG or SVG drawn by bench's plot script."""
import json
import os
import pathlib
import time

import pytest

from conftest import run
from stat_output import counter_output
from test_damon import damon_why
from test_record import ctl, runtime_dir, start_recording, wait_for_socket  # noqa: F401 (a fixture)

NODE_DIR = pathlib.Path("/sys/devices/system/node")


def node_ranges():
    """[(start, end, node)] of the memory blocks of each node, as sysfs gives them."""
    block = int((pathlib.Path("/sys/devices/system/memory/block_size_bytes")).read_text(), 16)
    ranges = []
    for node in NODE_DIR.glob("node[0-9]*"):
        for mem in node.glob("memory[0-9]*"):
            m = int(mem.name[len("memory"):])
            ranges.append((m * block, (m + 1) * block, int(node.name[4:])))
    return sorted(ranges)


def read_recording(path):
    lines = [json.loads(l) for l in pathlib.Path(path).read_text().splitlines()]
    return lines[0], lines[1:]


def test_recorded_regions_add_up_to_each_nodes_accessed_bytes(memscope, tmp_path):
    why = damon_why(memscope)
    if why is not None:
        pytest.skip(f"no kdamond to read passively here: {why}")
    rec = tmp_path / "damon.rec"
    res = run([memscope, "record", "-a", "-I", "1000", "-o", str(rec), "-e",
               "damon.accessed_bytes", "--", "sleep", "13"], timeout=120)
    assert res.returncode == 0, res.stderr
    header, records = read_recording(rec)
    assert header["version"] == 5
    index = {i: s.get("node") for i, s in enumerate(header["series"]) if s["name"] == "damon.accessed_bytes"}
    assert index, header["series"]
    frames = [r for r in records if "v" in r]
    regions = [r for r in records if "damon" in r]
    times = sorted({r["damon"][0] for r in regions})
    assert len(times) >= 2, records       # 5 s aggregations in 13 s
    ranges = node_ranges()
    for t in times:
        agg = [r["damon"] for r in regions if r["damon"][0] == t]
        assert {a[6] for a in agg} == {len(agg)}, agg     # every region of the aggregation, nr_regions of them
        starts = [int(a[1], 16) for a in agg]
        assert starts == sorted(starts)
        # The bytes of accessed regions inside each node's blocks.
        expect = {}
        for a in agg:
            start, end = int(a[1], 16), int(a[2], 16)
            if a[3] == 0:
                continue
            for lo, hi, node in ranges:
                if lo < end and start < hi:
                    expect[node] = expect.get(node, 0) + min(hi, end) - max(lo, start)
        # The frame that read this aggregation (the first at or after it, or the next one when
        # the drain of that frame came just after its clock was read) holds the same bytes.
        after = [f for f in frames if f["t"] >= t][:2]
        if not after:
            continue
        shown = [{index[i]: f["v"][i] for i in index} for f in after]
        assert any(all(s.get(node, 0) == expect.get(node, 0) for node in index.values()) for s in shown), \
            (t, expect, shown)
        assert any(expect.values())


def test_no_regions_are_recorded_while_paused(memscope, tmp_path, runtime_dir):
    """As frames, region records stop with ctl pause and come back with resume: none of the
    aggregations made in an 11 s pause (two or more at 5 s) is in the file."""
    why = damon_why(memscope)
    if why is not None:
        pytest.skip(f"no kdamond to read passively here: {why}")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    rec = tmp_path / "paused.rec"
    proc = start_recording(memscope, rec, ["-a", "-I", "500", "-e", "damon.accessed_bytes", "--", "sleep", "30"],
                           env=env)
    wait_for_socket(runtime_dir)
    deadline = time.time() + 15
    while time.time() < deadline and '{"damon":' not in (rec.read_text() if rec.exists() else ""):
        time.sleep(0.2)
    assert ctl(memscope, ["pause"], env).returncode == 0
    time.sleep(11)
    assert ctl(memscope, ["resume"], env).returncode == 0
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read()
    _, records = read_recording(rec)
    pause = next(r["t"] for r in records if r.get("control") == "pause")
    resume = next(r["t"] for r in records if r.get("control") == "resume")
    times = sorted({r["damon"][0] for r in records if "damon" in r})
    assert [t for t in times if t < pause], times
    assert [t for t in times if t > resume], times
    # An aggregation made just before either edge may be read a frame (0.5 s) later.
    assert [t for t in times if pause + 1e9 < t < resume - 1e9] == [], (pause, resume, times)


HAND = [
    {"format": "memscope-recording", "version": 3, "memscope": "0.1.0", "interval_ns": 1000000000,
     "series": [{"name": "damon.aggregations", "kind": "counter"}]},
    {"t": 1000000000, "d": 1000000000, "v": [1]},
    # 64 MiB on node 0 accessed in all 10 samples, 64 MiB on node 1 in none
    {"damon": [1000000000, "0", "4000000", 10, 3, 10, 2], "nodes": [0]},
    {"damon": [1000000000, "4000000", "8000000", 0, 7, 10, 2], "nodes": [1]},
    {"label": "solve", "t": 1500000000, "phase": "begin"},
    {"t": 2000000000, "d": 1000000000, "v": [1]},
    # 32 MiB at 5 of 10, then 96 MiB at 1 of 10 across both nodes
    {"damon": [2000000000, "0", "2000000", 5, 0, 10, 2], "nodes": [0]},
    {"damon": [2000000000, "2000000", "8000000", 1, 0, 10, 2], "nodes": [0, 1]},
    # a hole: nothing recorded from 32 MiB to 64 MiB
    {"t": 3000000000, "d": 1000000000, "v": [1]},
    {"damon": [3000000000, "0", "2000000", 2, 1, 10, 2], "nodes": [0]},
    {"damon": [3000000000, "4000000", "8000000", 8, 1, 10, 2], "nodes": [1]},
    {"label": "done", "t": 3200000000},
    {"end": "the command exited", "frames": 3},
]


def write(path, records):
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def test_text_heatmap_cell_by_cell(memscope, tmp_path):
    rec = write(tmp_path / "hand.rec", HAND)
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    # 128 MiB over 64 columns: 2 MiB a column, 16 columns per 32 MiB.
    assert "address 0x0-0x8000000: 64 columns of 2.0 MiB (0x200000 bytes); 3 aggregations, 1 per row" in lines[1]
    assert "node 0: 0x0-0x8000000 (columns 0-63)" in lines      # its region of row 2 reaches node 1
    assert "node 1: 0x2000000-0x8000000 (columns 16-63)" in lines
    assert any(l.startswith("ramp: ' ' no region, '.' 0%, ':' <=12.5%") for l in lines)
    rows = [l for l in lines if l.split("|")[0].strip().replace(".", "").isdigit()]
    assert [r.split("|")[0].strip() for r in rows] == ["1.000", "2.000", "3.000"]
    cells = [r.split("|")[1] for r in rows]
    assert cells[0] == "@" * 32 + "." * 32                     # 100%, then 0%
    assert cells[1] == "+" * 16 + ":" * 48                      # 50% (<= 4/8), 10% (<= 1/8)
    assert cells[2] == "-" * 16 + " " * 16 + "%" * 32           # 20% (<= 2/8), hole, 80% (<= 7/8)
    assert rows[0].endswith("| <- solve (begin)")
    assert rows[1].endswith("|")
    assert rows[2].endswith("| <- done")


def test_text_heatmap_of_one_node(memscope, tmp_path):
    """--node 1: the regions on node 1's memory (32 MiB to 128 MiB: 96 MiB, 1.5 MiB a column)."""
    rec = write(tmp_path / "hand.rec", HAND)
    res = run([memscope, "report", "--heatmap", "--node", "1", str(rec)])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "address 0x2000000-0x8000000: 64 columns of 1.5 MiB (0x180000 bytes)" in lines[1]
    cells = [l.split("|")[1] for l in lines if l.split("|")[0].strip().replace(".", "").isdigit()]
    # 32-63.5 MiB: no region of node 1 in rows 1 and 3 (columns 0-20); column 21 reaches 64 MiB.
    assert cells == [" " * 21 + "." * 43, ":" * 64, " " * 21 + "%" * 43]
    res = run([memscope, "report", "--heatmap", "--node", "2", str(rec)])
    assert res.returncode == 1
    assert "--node 2: no region of " + str(rec) + " covers node 2's memory; its regions are on node(s) 0, 1" \
        in res.stderr


def test_other_readers_read_past_region_records(memscope, tmp_path):
    rec = write(tmp_path / "hand.rec", HAND)
    res = run([memscope, "stat", "--input", str(rec), "-x,"])
    assert res.returncode == 0, res.stderr
    assert counter_output(res.stderr).startswith("3,,damon.aggregations,")   # stat writes to stderr, as perf
    res = run([memscope, "report", str(rec)])
    assert res.returncode == 0, res.stderr
    assert "3 frames" in res.stdout


def test_heatmap_plot_png_and_svg(memscope, tmp_path):
    rec = write(tmp_path / "hand.rec", HAND)
    for fmt in ("png", "svg"):
        out = tmp_path / f"heat.{fmt}"
        res = run([memscope, "report", "--heatmap", "--plot", str(out), str(rec)])
        assert res.returncode == 0, res.stderr
        data = out.read_bytes()
        if fmt == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
        else:
            text = data.decode()
            assert text.lstrip().startswith("<?xml") and "<svg" in text
            assert 'id="heatmap"' in text                          # the map as an image
            for words in ("node 0", "node 1", "solve (begin)", "done", f"DAMON heat map of {rec}",
                          "physical address (GiB)"):
                assert words in text, words
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["hand.rec"] + [
            f"heat.{f}" for f in ("png", "svg")[:("png", "svg").index(fmt) + 1]])
    res = run([memscope, "report", "--heatmap", "--plot", str(tmp_path / "heat.pdf"), str(rec)])
    assert res.returncode == 1
    assert "--plot " + str(tmp_path / "heat.pdf") + ": the name ends in .png or .svg" in res.stderr


def test_version_2_recordings_still_read_and_refuse_damon_records(memscope, tmp_path):
    old = [dict(HAND[0], version=2)] + [r for r in HAND[1:] if "damon" not in r]
    rec = write(tmp_path / "old.rec", old)
    res = run([memscope, "stat", "--input", str(rec), "-x,"])
    assert res.returncode == 0, res.stderr
    assert "3,,damon.aggregations" in counter_output(res.stderr)
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode == 1
    assert "holds no DAMON region records: record with a damon series" in res.stderr
    bad = write(tmp_path / "bad.rec", [dict(HAND[0], version=2)] + HAND[1:])
    res = run([memscope, "report", "--heatmap", str(bad)])
    assert res.returncode == 1
    assert "bad.rec:3: a \"damon\" region record in a version 2 recording; they exist from version 3 on" \
        in res.stderr


def test_damaged_region_record_names_the_line(memscope, tmp_path):
    broken = HAND[:2] + [{"damon": [1000000000, "0", "4000000", 11, 3, 10, 2], "nodes": [0]}]
    rec = write(tmp_path / "broken.rec", broken)
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode == 1
    assert "broken.rec:3: damon nr_accesses: expected at most the aggregation's samples" in res.stderr


def test_plot_without_heatmap_is_a_usage_error(memscope, tmp_path):
    res = run([memscope, "report", "--plot", str(tmp_path / "x.png")])
    assert res.returncode == 2
    assert "--plot and --node are options of the heat map: give --heatmap with them" in res.stderr


def test_node_ranges_come_from_the_recorded_memory_blocks(memscope, tmp_path):
    """With the recording machine's memory-block map in the header (host.memory_ranges), a node's
    range is its memory, not the span of its regions: row 2's region from 32 MiB to 128 MiB covers
    both nodes and no longer widens node 0 to the end."""
    header = dict(HAND[0], host={"memory_ranges": [["0", "4000000", 0], ["4000000", "8000000", 1]]})
    rec = write(tmp_path / "blocks.rec", [header] + HAND[1:])
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "node 0: 0x0-0x4000000 (columns 0-31)" in lines, res.stdout
    assert "node 1: 0x4000000-0x8000000 (columns 32-63)" in lines, res.stdout
    bad = dict(HAND[0], host={"memory_ranges": [["0", "4000000", 0], ["8000000", "zz", 1]]})
    rec = write(tmp_path / "bad.rec", [bad] + HAND[1:])
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode == 1
    assert f'{rec}:1: "host"."memory_ranges"[1]: expected ["start", "end", node] with hexadecimal addresses' \
        in res.stderr, res.stderr


def sysfs_memory_ranges():
    """Each node's memory blocks, merged: what memscope must record."""
    base = pathlib.Path("/sys/devices/system/node")
    size = int(pathlib.Path("/sys/devices/system/memory/block_size_bytes").read_text(), 16)
    blocks = sorted((int(m.name[6:]), int(n.name[4:])) for n in base.glob("node[0-9]*")
                    for m in n.glob("memory[0-9]*"))
    ranges = []
    for block, node in blocks:
        start = block * size
        if ranges and ranges[-1][2] == node and ranges[-1][1] == start:
            ranges[-1][1] = start + size
        else:
            ranges.append([start, start + size, node])
    return ranges


def test_recordings_carry_the_memory_block_map(memscope, tmp_path):
    if not pathlib.Path("/sys/devices/system/memory/block_size_bytes").exists():
        pytest.skip("this kernel has no memory-block files (CONFIG_MEMORY_HOTPLUG)")
    rec = tmp_path / "any.rec"
    res = run([memscope, "record", "-o", str(rec), "-e", "page-faults", "--", "true"])
    assert res.returncode == 0, res.stderr
    header, _ = read_recording(rec)
    got = [[int(s, 16), int(e, 16), n] for s, e, n in header["host"]["memory_ranges"]]
    assert got == sysfs_memory_ranges()
