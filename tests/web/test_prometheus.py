"""A real Prometheus (Debian's) scrapes two memscope exporters on loopback,
as a fleet's would: one counts a workload here (its token from a file, as
the fleet setup in docs/live.md has it), the other replays a 2-socket
Kunpeng 920. PromQL gives the per-node values computed by hand from the
replay, and rate() of the fault counter agrees with memscope's own frames."""
import json
import os
import re
import pathlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest

from conftest import fixture_env
from live_server import Live
from test_browser import kunpeng_replay

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(not PROMETHEUS, reason="needs Debian's prometheus (scripts/setup.sh installs it)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    def __init__(self, tmp, jobs):
        self.port = free_port()
        config = tmp / "prometheus.yml"
        scrape = []
        for name, port, token_file in jobs:
            job = {"job_name": name, "scrape_interval": "1s", "scrape_timeout": "900ms",
                   "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            if token_file:
                job["authorization"] = {"type": "Bearer", "credentials_file": str(token_file)}
            scrape.append(job)
        config.write_text(json.dumps({"global": {"scrape_interval": "1s"}, "scrape_configs": scrape}))
        self.proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                                     stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"))

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=30) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def wait_up(self, jobs, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                targets = self.api("targets")["activeTargets"]
                if sorted(t["labels"]["job"] for t in targets if t["health"] == "up") == sorted(jobs):
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"targets never all up: {self.api('targets')}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def collect_frames(live, frames, stop):
    """Every frame the exporter streams: (its time as Unix seconds, its page faults)."""
    session = live.session()
    start = session["start_unix_ms"] / 1000
    col = next(i for i, c in enumerate(session["columns"]) if c["group"] == "page-faults")
    taken = 0

    def keep(batches):
        nonlocal taken
        for _, _, b in batches[taken:]:
            frames.extend((start + f[1] / 1000, f[3 + col]) for f in b["f"])
        taken = len(batches)
        return stop.is_set()

    live.stream(keep, timeout=600)


def test_prometheus_scrapes_two_exporters(memscope, touchmem, tmp_path):
    token = tmp_path / "token"
    token.write_text("fleet-token-0123456789abcdef\n")
    token.chmod(0o600)
    per_node = kunpeng_replay(tmp_path / "kunpeng.jsonl", 5)
    here = Live(memscope, ["--no-ui", "--listen", "127.0.0.1:0", "--token-file", str(token), "-I", "100",
                           "-e", "page-faults", "--", touchmem, "16", "--repeat", "1000000"], token="fleet-token-0123456789abcdef")
    replay = Live(memscope, ["--no-ui", "--listen", "127.0.0.1:0", "--replay", str(tmp_path / "kunpeng.jsonl"),
                             "-I", "100", "-m", "mem.read_bytes,mem.read_bw"], env=fixture_env("kunpeng920-2s"))
    prom = None
    frames, stop = [], threading.Event()
    reader = threading.Thread(target=collect_frames, args=(here, frames, stop), daemon=True)
    try:
        reader.start()
        prom = Prometheus(tmp_path, [("here", here.port, token), ("kunpeng", replay.port, None)])
        prom.wait_up(["here", "kunpeng"])
        time.sleep(35)

        # The replay's per-node DRAM reads: 50 intervals of the hand-computed bytes.
        got = prom.api("query", query='memscope_node_mem_read_bytes_total{job="kunpeng"}')["result"]
        by_node = {int(r["metric"]["node"]): float(r["value"][1]) for r in got}
        assert by_node == {node: 50 * b for node, b in per_node.items()}
        info = prom.api("query", query='memscope_info{job="kunpeng"}')["result"]
        assert {r["metric"]["family"] for r in info} >= {"hisi-hip08"}
        up = prom.api("query", query="memscope_up")["result"]
        assert {r["metric"]["job"]: r["value"][1] for r in up} == {"here": "1", "kunpeng": "0"}

        # Every query of the Grafana dashboard is valid PromQL here; the
        # bandwidth panel has the replay's nodes.
        dashboard = json.loads((pathlib.Path(__file__).resolve().parents[2] / "contrib/grafana/memscope.json").read_text())
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                expr = target["expr"].replace("$instance", ".*").replace("$__rate_interval", "10s")
                data = prom.api("query", query=expr)
                if panel["title"] == "DRAM read bandwidth per node":
                    rates = {int(r["metric"]["node"]): float(r["value"][1]) for r in data["result"]}
                    assert sorted(rates) == [0, 1, 2, 3]

        # rate() over 30 s against memscope's own frames over the same scrapes.
        now = time.time()
        raw = prom.api("query", query='memscope_page_faults_total{job="here"}[30s]', time=now)["result"][0]["values"]
        rate = float(prom.api("query", query='rate(memscope_page_faults_total{job="here"}[30s])',
                              time=now)["result"][0]["value"][1])
        t_first, t_last = float(raw[0][0]), float(raw[-1][0])
        faults = sum(v for t, v in frames if t_first < t <= t_last and v is not None)
        ours = faults / (t_last - t_first)
        print(f"rate() {rate:.1f} faults/s, memscope's frames {ours:.1f} faults/s over {t_last - t_first:.1f} s")
        assert ours > 1000, "touchmem faults all along"
        assert rate == pytest.approx(ours, rel=0.02)
    finally:
        stop.set()
        if prom:
            prom.stop()
        here.stop()
        replay.stop()


def family_of(name):
    """The Prometheus family of a memscope event that counts things (no unit)."""
    return "memscope_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") + "_total"


def test_every_family_adds_up_to_its_total_in_prometheus(memscope, touchmem, tmp_path):
    """One aggregation level per family: Prometheus' sum by () of each family is
    the run's total - the stream's, frame by frame, for events and per-process
    events (pid="other" holds the processes without a place of their own), the
    system family's for a catalog metric's node, socket and channel families -
    and no more than 20 processes have series of their own."""
    if os.geteuid() != 0:
        pytest.skip("counts system-wide (-a): every process has per-process series")
    done = tmp_path / "done"
    live = Live(memscope, ["--no-ui", "--listen", "127.0.0.1:0", "-I", "100", "-a", "--", "sh", "-c",
                           f"for i in $(seq 30); do {touchmem} 2; done; touch {done}; "
                           f"{touchmem} 8 --sleep-ms 600000"])
    prom = None
    try:
        deadline = time.time() + 120
        while not done.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert done.exists(), "the 30 short processes ran"
        time.sleep(1)
        status, _, text = live.control("pause")
        assert status == 200 and "paused" in text, text
        session = live.session()
        batches = live.stream(lambda b: any(e["k"] == "pause" for _, _, x in b for e in x.get("e", [])))
        frames = [f for _, _, b in batches for f in b["f"]]
        totals = {}
        for i, c in enumerate(session["columns"]):
            if c["source"] == "event" and c["kind"] == "counter" and not c["unit"]:
                totals[c["group"]] = totals.get(c["group"], 0) + sum(f[3 + i] or 0 for f in frames)
        assert totals.get("proc.faults", 0) > 30 * 2 * 256, "31 touchmems faulted"
        prom = Prometheus(tmp_path, [("all", live.port, None)])
        prom.wait_up(["all"])
        time.sleep(4)

        def value(query):
            got = prom.api("query", query=query)["result"]
            assert len(got) == 1, (query, got)
            return float(got[0]["value"][1])

        families = {r["metric"]["__name__"] for r in prom.api("query", query='count by (__name__) ({job="all"})')["result"]}
        checked = []
        # Events: every family of an event adds up to what the frames counted.
        for name, total in totals.items():
            family = family_of(name)
            if family in families:
                assert value(f'sum by () ({family}{{job="all"}})') == pytest.approx(total, rel=1e-9), family
                checked.append(family)
        assert {"memscope_proc_faults_total", "memscope_context_switches_total"} <= set(checked), checked
        # Catalog counters: the parts add up to the system family.
        for family in sorted(families):
            m = re.fullmatch(r"memscope_(node|socket|channel)_(\w+_total)", family)
            if m and f"memscope_{m.group(2)}" in families:
                assert value(f'sum by () ({family}{{job="all"}})') == \
                    pytest.approx(value(f'memscope_{m.group(2)}{{job="all"}}'), rel=1e-9), family
                checked.append(family)
        assert "memscope_node_kernel_faults_total" in checked, checked
        # Every family has one set of labels (the PMU events' family is summed by event).
        for family in families - {"memscope_pmu_events_total", "memscope_info"}:
            series = prom.api("series", **{"match[]": f'{family}{{job="all"}}'})
            shapes = {frozenset(s) - {"__name__", "job", "instance"} for s in series}
            assert len(shapes) == 1, (family, shapes)
        # Per-process series: at most 20 processes and "other".
        pids = {s["pid"] for s in prom.api("series", **{"match[]": 'memscope_proc_faults_total{job="all"}'})}
        assert "other" in pids and len(pids - {"other"}) <= 20, pids
        print(f"{len(checked)} families add up; {len(pids) - 1} processes with series of their own")
    finally:
        if prom:
            prom.stop()
        live.stop()
