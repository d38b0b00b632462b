"""memscope report --regions: every counter and metric totalled per marked
region, over a program whose phases make known numbers of page faults
(contrib/marker/touchregions.c), checked against those counts, against the
recording's own frames (parsed here), and field by field across text, CSV and
JSON."""
import csv
import io
import json
import os
import re

import pytest

from conftest import BUILD, run
from test_record import read_recording

MB = 32
PAGES = MB * 256                     # 4 KiB pages, transparent huge pages off


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, memscope):
    d = tmp_path_factory.mktemp("regions")
    os.chmod(d, 0o755)
    rec = d / "regions.rec"
    env = dict(os.environ, XDG_RUNTIME_DIR=str(d))
    res = run([memscope, "record", "-I", "100", "-e", "page-faults", "-m", "kernel.faults,numa.local_alloc_ratio",
               "-o", str(rec), "--", str(BUILD / "contrib" / "marker" / "touchregions"), str(MB)], env=env)
    assert res.returncode == 0, res.stderr
    return rec


def report(memscope, rec, fmt):
    res = run([memscope, "report", "--regions", "--format", fmt, str(rec)])
    assert res.returncode == 0, res.stderr
    return res.stdout


def by_region(memscope, rec):
    return {o["region"]: o for o in map(json.loads, report(memscope, rec, "json").splitlines())}


def row(region, scope):
    return next(r for r in region["rows"] if r["scope"] == scope)


def frames_inside(rec):
    """Per region name, the frames (list of frame records) between its begin and its end in
    the file, each counted once per call; an unclosed region runs to the end."""
    header, frames, _ = read_recording(rec)
    inside, open_, out = {}, {}, []
    for line in rec.read_text().splitlines()[1:]:
        o = json.loads(line)
        if "v" in o:
            for name in open_:
                inside.setdefault(name, []).append(o)
            if not open_:
                out.append(o)
        elif o.get("phase") == "begin":
            open_.setdefault(o["label"], True)
        elif o.get("phase") == "end":
            open_.pop(o["label"], None)
    return header, frames, inside, out


def faults(header, frames):
    i = next(k for k, s in enumerate(header["series"]) if s["name"] == "page-faults")
    return sum(f["v"][i] for f in frames if f["v"][i] is not None)


def test_each_region_totals_its_phase_s_known_faults(memscope, recorded):
    regions = by_region(memscope, recorded)
    assert list(regions) == ["all", "alloc", "touch-again", "fresh", "stray", "tail"]
    calls = {name: r["calls"] for name, r in regions.items()}
    assert calls == {"all": 1, "alloc": 1, "touch-again": 3, "fresh": 2, "stray": 0, "tail": 0}
    assert [n for n, r in regions.items() if r["open"]] == ["tail"]
    assert regions["tail"]["ignored_begins"] == 1 and regions["stray"]["ignored_ends"] == 1
    assert all(r["ignored_begins"] == 0 for n, r in regions.items() if n != "tail")
    got = {n: row(r, "total")["events"]["page-faults"]["value"] for n, r in regions.items() if n != "stray"}
    # memscope record reads the counters at each marker: a phase holds its own faults only.
    assert PAGES <= got["alloc"] <= PAGES * 1.03, got
    assert got["touch-again"] <= PAGES * 0.01, got
    assert PAGES <= got["fresh"] <= PAGES * 1.03, got          # two calls of MB/2 each, summed
    assert PAGES / 4 <= got["tail"] <= PAGES / 4 * 1.03, got
    inner = got["alloc"] + got["touch-again"] + got["fresh"]
    assert inner <= got["all"] <= inner * 1.01, got             # nested: the outer includes the inner
    # A region never begun has nothing counted (not a zero).
    assert row(regions["stray"], "total")["events"]["page-faults"]["status"] == "not counted"
    assert regions["stray"]["frames"] == 0
    # The metric is computed over the region's totals.
    for n, v in got.items():
        assert row(regions[n], "total")["metrics"]["kernel.faults"]["value"] == v, n
    # Times: the nested ones fit in the outer one.
    t = {n: r["time"] for n, r in regions.items()}
    assert 0 < t["alloc"] + t["touch-again"] + t["fresh"] <= t["all"], t


def test_regions_equal_the_recording_s_frames_and_cover_the_run(memscope, recorded):
    regions = by_region(memscope, recorded)
    header, frames, inside, outside = frames_inside(recorded)
    for name in ("all", "alloc", "touch-again", "fresh", "tail"):
        assert regions[name]["frames"] == len(inside[name]), name
        assert row(regions[name], "total")["events"]["page-faults"]["value"] == faults(header, inside[name]), name
    # "all" and "tail" cover the run but for its start and end: together with the frames
    # outside any region they are the run's total, and those are few.
    total = faults(header, frames)
    covered = (row(regions["all"], "total")["events"]["page-faults"]["value"]
               + row(regions["tail"], "total")["events"]["page-faults"]["value"])
    assert covered + faults(header, outside) == total
    assert faults(header, outside) <= total * 0.02, (faults(header, outside), total)


def test_node_rows_add_up_to_the_total_and_ratios_come_from_totals(memscope, recorded):
    regions = by_region(memscope, recorded)
    for name in ("all", "alloc", "fresh", "tail"):
        rows = regions[name]["rows"]
        total = row(regions[name], "total")
        nodes = [r for r in rows if "node" in r]
        assert nodes, rows
        local = sum(r["events"]["numastat/local_node"]["value"] for r in nodes)
        assert local == total["events"]["numastat/local_node"]["value"]
        other = total["events"]["numastat/other_node"]["value"]
        if local + other:
            assert total["metrics"]["numa.local_alloc_ratio"]["value"] == pytest.approx(local / (local + other))
        # page-faults is counted for the target, not per node.
        assert all(r["events"]["page-faults"]["status"] == "not applicable" for r in nodes)


def test_text_is_likwid_s_table_and_csv_says_what_json_does(memscope, recorded):
    regions = by_region(memscope, recorded)
    text = report(memscope, recorded, "text")
    blocks = {b.split(":", 1)[0].split()[1]: b for b in text.strip().split("\n\n")}
    assert list(blocks) == list(regions)
    for name, r in regions.items():
        b = blocks[name]
        head = b.splitlines()[0]
        m = re.match(r"Region (\S+): (\d+) calls?, ([\d.]+) s, (\d+) frames?", head)
        assert m, head
        assert (m[1], int(m[2]), int(m[4])) == (name, r["calls"], r["frames"])
        assert float(m[3]) == pytest.approx(r["time"], abs=1e-6)
        cells = {}
        scopes = None
        for line in b.splitlines()[1:]:
            if not line.startswith("|"):
                assert re.fullmatch(r"\+(-+\+)+", line), line
                continue
            parts = [p.strip() for p in line.strip("|").split("|")]
            if parts[0] in ("Event", "Metric"):
                scopes = parts[1:]
                continue
            for scope, value in zip(scopes, parts[1:]):
                cells[(parts[0].split(" (")[0], scope)] = value
        assert scopes == [x["scope"] for x in r["rows"]]
        for x in r["rows"]:
            for kind in ("events", "metrics"):
                for ev, v in x[kind].items():
                    shown = cells[(ev, x["scope"])]
                    if v["value"] is None:
                        assert shown == {"not counted": "<not counted>", "not applicable": "n/a"}[v["status"]]
                    elif isinstance(v["value"], int):
                        assert int(shown.replace(",", "")) == v["value"], (name, ev, shown)
    assert "still open at the end (no 'phase end tail')" in blocks["tail"]
    assert "1 begin while already open ignored" in blocks["tail"]
    assert "1 end while not open ignored" in blocks["stray"]

    lines = list(csv.DictReader(io.StringIO(report(memscope, recorded, "csv"))))
    assert len(lines) == sum(len(x["events"]) + len(x.get("metrics", {})) for r in regions.values() for x in r["rows"])
    for line in lines:
        r = regions[line["region"]]
        assert (int(line["calls"]), int(line["frames"]), line["open"] == "yes") == (r["calls"], r["frames"], r["open"])
        assert float(line["time"]) == pytest.approx(r["time"], rel=1e-9)
        v = row(r, line["scope"])[line["kind"] + "s"][line["name"]]
        assert line["unit"] == v["unit"]
        if v["value"] is None:
            assert line["value"] in ("<not counted>", "n/a") and line["coverage"] == ""
        else:
            assert float(line["value"]) == pytest.approx(v["value"], rel=1e-12)
            assert float(line["coverage"]) == pytest.approx(v["coverage"], abs=1e-4)


def test_a_recording_without_phases_says_so(memscope, tmp_path):
    rec = tmp_path / "plain.rec"
    res = run([memscope, "record", "-I", "50", "-e", "page-faults", "-o", str(rec), "--", "true"])
    assert res.returncode == 0, res.stderr
    text = report(memscope, rec, "text")
    assert text.startswith("No regions: the recording has no phase markers")
    assert report(memscope, rec, "json") == ""
    res = run([memscope, "report", "--regions", "--lua", "faults.lua", "--format", "json", str(rec)])
    assert res.returncode == 2 and "--regions" in res.stderr
