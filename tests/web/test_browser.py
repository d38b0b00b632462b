"""A real Chromium on memscope live's page: charts fed by a live run show
the values /metrics serves for the same frame, a label typed in the page
reaches the recording, pause and resume work, the charts are drawn; a
replay of another machine gives per-node bandwidth charts; a recording
served by live --input and the same file dropped on the page draw the same
points (one reader of recordings, recording.js); and the
page stays responsive with 50 series over an hour at 10 Hz."""
import http.client
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import fixture_env
from live_server import Live, prom_samples, prom_value
from test_record import read_recording

HERE = pathlib.Path(__file__).resolve().parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

pytestmark = pytest.mark.skipif(not pathlib.Path(CHROMIUM).exists() or not (HERE / "node_modules").exists(),
                                reason="needs Debian's chromium and `npm ci` in tests/web (scripts/setup.sh)")


@pytest.fixture
def outdir(tmp_path):
    keep = os.environ.get("MEMSCOPE_TEST_RESULTS")
    yield tmp_path
    if keep:
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, pathlib.Path(keep) / f"browser-{png.name}")


def browser(scenario, url, outdir, *extra):
    res = subprocess.run(["node", str(HERE / "browser.mjs"), scenario, url, str(outdir), *extra],
                         capture_output=True, text=True, timeout=600, cwd=HERE)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert "error" not in out, out["error"]
    assert not [m for m in out["console"] if m.startswith(("error", "pageerror"))], out["console"]
    return out


def column(columns, group, label="all"):
    return next(i for i, c in enumerate(columns) if c["group"] == group and c["label"] == label)


def test_live_page_charts_labels_pause_and_metrics_agree(memscope, touchmem, outdir):
    rec, second = outdir / "page.rec", outdir / "second.rec"
    # No -e or -m: what a new user sees (metrics this host lacks are listed with why).
    # The page records into the directory live was started in.
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100",
                           "-o", str(rec), "--", touchmem, "20", "--repeat", "100000"], cwd=outdir)
    try:
        out = browser("live", live.url, outdir, second.name)
        final = out["final"]
        assert out["interval_reply"].startswith("ok: interval 200 ms"), out["interval_reply"]
        assert out["record_reply"].startswith(f"ok: recording to second.rec; {rec} closed"), out["record_reply"]
        # The n/a reasons: what the session says this host lacks, as the page lists them.
        session = live.session()
        assert out["na"] == [f"{n['name']}: {n['why']}" for n in session["na"]]
        # Paused: the page's last frame is the one /metrics describes.
        assert final["state"] == "paused"
        samples = prom_samples(live.metrics())
        assert prom_value(samples, "memscope_frame_seq") == final["seq"]
        pf = column(final["columns"], "kernel.faults")
        assert final["totals"][pf] == prom_value(samples, "memscope_kernel_faults_total")
        assert final["totals"][pf] > 0
        cs = column(final["columns"], "context-switches")
        assert final["totals"][cs] == prom_value(samples, "memscope_context_switches_total")
        assert out["seq_while_paused"][0] == out["seq_while_paused"][1], "no frames while paused"
        assert out["resumed_seq"] > out["seq_while_paused"][0]
        assert out["inked"]["kernel.faults"] > 100, "the faults chart has its line drawn"
        # The process table and the per-process chart: touchmem, the pid
        # /metrics labels its own series with.
        rows = final["procs"]["r"]
        assert final["procs"]["n"][0] == "proc.faults" and rows[0][1] == "touchmem"
        pid = rows[0][0]
        assert prom_value(samples, "memscope_proc_faults_total", pid=pid, comm="touchmem") > 0
        chart = next(c for c in final["charts"] if c["key"] == "proc.faults per process")
        assert chart["series"] == [str(pid)]
        assert out["procs_table"][0][:2] == [str(pid), "touchmem"]
        assert out["inked"]["proc.faults per process"] > 100, "its line is drawn"
        # Value axes: ticks labelled apart, ratios within 0-100 %.
        for key, axis in final["yAxes"].items():
            assert len(set(axis["labels"])) == len(axis["labels"]), (key, axis["labels"])
            kind = next(c["kind"] for c in final["columns"] if c["group"] == key.split(" per ")[0]) \
                if not key.endswith("per process") else "counter"
            if kind == "ratio":
                assert axis["min"] >= 0 and axis["max"] <= 1, (key, axis)
                assert all(float(label.split()[0]) <= 100 for label in axis["labels"]), (key, axis["labels"])
        assert (outdir / "live.png").stat().st_size > 10000
        print(f"first draw {out['first_draw_ms']:.0f} ms after navigation, {out['fps_streaming']:.1f} "
              f"frames/s while streaming")
        assert out["fps_streaming"] > 5, "the page keeps drawing while batches stream in"
    finally:
        live.stop()
    _, first_frames, others = read_recording(rec)
    assert any(o.get("label") == "typed in the page" for o in others)
    changes = [o for o in others if o.get("control") == "interval"]
    assert [c["interval_ns"] for c in changes] == [200_000_000]
    after = [f for f in first_frames if f["t"] > changes[0]["t"]]
    assert after and all(f["d"] > 150_000_000 for f in after[1:]), "frames 200 ms apart after the change"
    # The page's recording goes on where the first one stopped, 200 ms apart.
    _, frames, ends = read_recording(second)
    assert len(frames) >= 5 and all(f["d"] > 150_000_000 for f in frames[1:])
    # Stopped from the page: the file ends there, with its frames counted.
    assert out["stop_reply"] == f"ok: second.rec closed with {len(frames)} frames"
    briefs = sum(len(o["brief"]) for o in ends if "brief" in o)
    assert ends[-1] == {"end": "record stop", "frames": len(frames), "brief_series": briefs}


def kunpeng_replay(path, seconds):
    """Kunpeng 920 (2 sockets, 4 nodes: SCCL 1, 3, 5, 7) DDRC read counts, 0.1 s apart:
    SCCL s channel c reads (s + 1) * 1000 + c * 10 counts of 32 bytes every interval."""
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    for k in range(1, int(seconds * 10) + 1):
        values = {f"hisi_sccl{s}_ddrc{c}/flux_rd/": (s + 1) * 1000 + c * 10 for s in (1, 3, 5, 7) for c in range(4)}
        lines.append(json.dumps({"t": round(k * 0.1, 1), "values": values}))
    path.write_text("\n".join(lines) + "\n")
    # Bytes read per interval on each node (node i is SCCL 1, 3, 5, 7).
    return {node: sum(((s + 1) * 1000 + c * 10) * 32 for c in range(4)) for node, s in enumerate((1, 3, 5, 7))}


def test_replay_of_another_machine_has_per_node_bandwidth_charts(memscope, outdir):
    per_node = kunpeng_replay(outdir / "kunpeng.jsonl", 5)
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--replay", str(outdir / "kunpeng.jsonl"), "-I", "100",
                           "-m", "mem.read_bw"], env=fixture_env("kunpeng920-2s"))
    try:
        live.wait_for("still serving")
        out = browser("load", live.url, outdir)
        charts = {c["key"]: c["series"] for c in out["charts"]}
        assert charts["mem.read_bw"] == ["node 0", "node 1", "node 2", "node 3"]
        final = out["final"]
        assert final["frames"] == 50
        for node, bytes_per_interval in per_node.items():
            i = column(final["columns"], "mem.read_bw", f"node {node}")
            assert final["last"][3 + i] == pytest.approx(bytes_per_interval / 0.1, rel=1e-9)
        assert out["inked"]["mem.read_bw"] > 50
    finally:
        live.stop()


def test_a_recording_served_and_dropped_draws_the_same_points(memscope, touchmem, outdir):
    """live --input FILE and FILE dropped on the page go through the one reader of recordings
    (recording.js): the same columns, every chart the same series with the same points, the
    same totals, which are the recording's own sums (computed here from its frames). The served
    page adds the catalog metric the server recomputes (kernel.faults), frame by frame."""
    rec = outdir / "run.rec.zst"
    res = subprocess.run([memscope, "record", "-I", "50", "-o", str(rec), "-e", "page-faults,context-switches",
                          "-m", "kernel.faults", "--sample", "page-faults", "-c", "64", "--", touchmem, "300"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    plain = outdir / "run.rec"
    plain.write_text(subprocess.run(["zstd", "-dc", str(rec)], capture_output=True, text=True, check=True).stdout)
    header, frames, others = read_recording(plain)
    own = {name: sum(f["v"][i] for f in frames if f["v"][i] is not None)
           for i, name in enumerate(s["name"] for s in header["series"])}
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--input", str(rec)])
    try:
        live.wait_for("still serving")
        session = live.session()
        # The server sends the file as written (zstd here) and streams only catalog metrics.
        assert session["recording"] is True
        assert [(c["group"], c["source"]) for c in session["columns"]] == [("kernel.faults", "metric")]
        metric = {f[1]: (f[3], f[2]) for _, _, b in live.stream(lambda b: "end" in b[-1][2]) for f in b["f"]}
        merged = live.session()["frames"] != len(frames)
        conn = http.client.HTTPConnection(live.host, live.port, timeout=30)
        conn.request("GET", "/api/recording")
        answer = conn.getresponse()
        assert answer.status == 200 and answer.read() == rec.read_bytes()
        conn.close()
        out = browser("replay", live.url, outdir, str(rec))
    finally:
        live.stop()
    served, opened = out["served"], out["opened"]
    assert served["source"] == "recording" and opened["source"] == "file"
    assert served["columns"] == opened["columns"] + session["columns"]
    assert served["frames"] == opened["frames"] == len(frames)
    keys = [c["key"] for c in opened["charts"]]
    assert [c["key"] for c in served["charts"]] == keys + ["kernel.faults"]
    assert served["data"][:len(keys)] == opened["data"]
    # The metric's chart: the server's value of each frame at the file frame of the same time, per
    # second of the server's frame (one that took in its predecessors when the server was busy
    # spreads over them; a frame taken in has none).
    chart = served["data"][len(keys)]
    assert chart["x"] == opened["data"][0]["x"] and len(metric) <= len(frames)
    assert merged or len(metric) == len(frames)
    start = header["start"]["unix_ns"] / 1e6
    for x, y, f in zip(chart["x"], chart["y"][0], frames):
        t = round(f["t"] / 1e6)
        assert x == (start + t) / 1000
        if t not in metric:
            assert y is None, (t, y)
            continue
        value, d_us = metric[t]
        assert y == pytest.approx(value / (d_us / 1e6), rel=1e-9), (t, y, metric[t])
    for name in ("page-faults", "context-switches"):
        c = column(served["columns"], name)
        assert served["totals"][c] == opened["totals"][c] == own[name], name
    assert own["page-faults"] >= 300 * 256
    # The samples between the frames are read past, not refused.
    assert any("s" in r for r in others)


def test_a_broken_recording_is_refused_with_its_line(memscope, outdir):
    bad = outdir / "bad.rec"
    bad.write_text(json.dumps({"format": "memscope-recording", "version": 2, "interval_ns": 100000000,
                               "series": [{"name": "page-faults", "kind": "counter"}]}) + "\n"
                   '{"t":100000000,"d":100000000,"v":[5]}\n{"t":200000000,"d":100000000,"v":[5,6]}\n'
                   '{"t":300000000,"d":100000000,"v":[7]}\n')
    newer = outdir / "newer.rec"
    newer.write_text(json.dumps({"format": "memscope-recording", "version": 6, "series": []}) + "\n")
    damon = outdir / "damon.rec"
    damon.write_text(json.dumps({"format": "memscope-recording", "version": 3, "memscope": "0.1.0",
                                 "interval_ns": 100000000,
                                 "series": [{"name": "damon.aggregations", "kind": "counter"}]}) + "\n"
                     '{"t":100000000,"d":100000000,"v":[1]}\n'
                     '{"damon":[90000000,"0","4000000",10,3,10,1],"nodes":[0]}\n'
                     '{"t":200000000,"d":100000000,"v":[0]}\n{"end":"the command exited","frames":2}\n')
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-e", "page-faults", "--", "sleep", "60"])
    try:
        out = browser("file", live.url, outdir, str(bad))
        assert out["final"]["fileError"] == "bad.rec:3: the frame has 2 values for 1 series"
        out = browser("file", live.url, outdir, str(newer))
        assert out["final"]["fileError"].startswith("newer.rec:1: format version 6 is newer")
        # DAMON's region records (version 3) between the frames are read past, not refused.
        out = browser("file", live.url, outdir, str(damon))
        assert out["final"]["fileError"] is None
        assert out["final"]["frames"] == 2
    finally:
        live.stop()


def long_recording(path, series=50, frames=36000, interval_ns=100_000_000):
    """An hour at 10 Hz of 50 counters, in the recording format (docs/recording-format.md)."""
    header = {"format": "memscope-recording", "version": 2, "memscope": "0.1.0", "interval_ns": interval_ns,
              "target": "an hour of 50 series",
              "series": [{"name": f"event{k:02d}", "kind": "counter", "node": k % 2} for k in range(series)]}
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for n in range(frames):
            v = [(n * 37 + k * 101) % 5000 + 1000 * (k % 5) for k in range(series)]
            f.write(json.dumps({"t": (n + 1) * interval_ns, "d": interval_ns, "v": v}, separators=(",", ":")) + "\n")
        f.write(json.dumps({"end": "the command exited", "frames": frames}) + "\n")


def test_an_hour_of_50_series_at_10_hz_stays_responsive(memscope, outdir):
    rec = outdir / "hour.rec"
    long_recording(rec)
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--input", str(rec)])
    try:
        live.wait_for("still serving")
        out = browser("load", live.url, outdir)
        assert out["final"]["frames"] == 36000
        assert len(out["final"]["columns"]) == 50
        print(f"an hour of 50 series at 10 Hz: all drawn {out['all_drawn_ms']:.0f} ms after navigation "
              f"(first draw at {out['first_draw_ms']:.0f} ms), a redraw of every chart {out['redraw_ms']:.1f} ms "
              f"(median), {out['fps_idle']:.0f} frames/s after")
        with open(outdir / "hour.json", "w") as f:
            json.dump({k: out[k] for k in ("all_drawn_ms", "first_draw_ms", "redraw_ms", "fps_idle")}, f)
        keep = os.environ.get("MEMSCOPE_TEST_RESULTS")
        if keep:
            shutil.copy(outdir / "hour.json", pathlib.Path(keep) / "browser-hour.json")
        # Responsive: a redraw of 36,000 points x 50 series fits well inside a 400 ms batch.
        assert out["redraw_ms"] < 400
    finally:
        live.stop()


def clock_seconds(label, day):
    """A time-axis label ("2026-11-27\n12:38:05", "12:38:05.500") as Unix seconds on day (UTC)."""
    import datetime
    lines = label.split("\n")
    if len(lines) == 2:
        assert lines[0] == day.strftime("%Y-%m-%d"), label
    hms, _, frac = lines[-1].partition(".")
    h, m, s = (int(x) for x in hms.split(":"))
    midnight = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc).timestamp()
    return midnight + h * 3600 + m * 60 + s + (int(frac) / 10 ** len(frac) if frac else 0)


def test_a_replayed_recording_is_drawn_at_its_own_time(memscope, touchmem, outdir):
    """live --input and the same file opened in the page: every chart's time axis
    (its labels as drawn, its range) lies between the recording's own start and
    end, the per-process chart's too; no series ends in a spike; the hover time
    has seconds; a file has no live-only controls."""
    import datetime
    import re
    if os.geteuid() != 0:
        pytest.skip("records system-wide (-a) for per-process series of every process")
    rec = outdir / "replayed.rec"
    res = subprocess.run([memscope, "record", "-a", "-I", "100", "-o", str(rec), "-e",
                          "page-faults,task-clock,proc.faults", "--", "sh", "-c",
                          f"{touchmem} 32; sleep 1; {touchmem} 32; sleep 1.2"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    header, frames, _ = read_recording(rec)
    start = header["start"]["unix_ns"] / 1e9
    first, end = start + (frames[0]["t"] - frames[0]["d"]) / 1e9, start + frames[-1]["t"] / 1e9
    day = datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--input", str(rec)])
    try:
        live.wait_for("still serving")
        out = browser("replay", live.url, outdir, str(rec))
    finally:
        live.stop()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", out["hover_time"]), out["hover_time"]
    # One reader for both: the same charts with the same points, per-process chart included.
    assert out["served"]["source"] == "recording" and out["opened"]["source"] == "file"
    assert [c["key"] for c in out["served"]["charts"]] == [c["key"] for c in out["opened"]["charts"]]
    assert out["served"]["data"] == out["opened"]["data"]
    for way in ("served", "opened"):
        got = out[way]
        assert got["from_file"] and got["controls_shown"] == [] and got["follow"] == "Whole run", (way, got)
        assert got["start_unix_ms"] == pytest.approx(start * 1000, abs=1), way
        keys = [c["key"] for c in got["charts"]]
        assert "page-faults" in keys and "proc.faults per process" in keys, (way, keys)
        for key in keys:
            axis = got["axes"][key]
            assert axis["min"] == pytest.approx(first, abs=0.002), (way, key, axis)
            assert axis["max"] == pytest.approx(end, abs=0.002), (way, key, axis)
            times = [clock_seconds(label, day) for label in axis["labels"]]
            assert len(times) >= 2, (way, key, axis["labels"])
            assert all(first - 0.001 <= t <= end + 0.001 for t in times), (way, key, axis["labels"], first, end)
        # task-clock's ticks a few msec/s apart around 2,000 are told apart.
        ticks = got["yAxes"]["task-clock"]["labels"]
        assert len(set(ticks)) == len(ticks) >= 2, (way, ticks)
        for chart in got["data"]:
            xs = chart["x"]
            assert first - 0.001 <= xs[0] and xs[-1] <= end + 0.001, (way, chart["key"])
            if chart["key"] == "task-clock":
                # System-wide CPU time per second is the number of CPUs (in
                # msec/s), at every point, the last (short) interval too: no spike.
                cpus = len(header["host"]["cpus"])
                for ys in chart["y"]:
                    assert all(y == pytest.approx(cpus * 1000, rel=0.05) for y in ys if y is not None), (way, ys)
        # Both ways chart the processes once a second of the recording.
        procs = next(c for c in got["data"] if c["key"] == "proc.faults per process")
        assert len(procs["x"]) >= 2, (way, procs["x"])
