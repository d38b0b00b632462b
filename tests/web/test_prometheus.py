"""A real Prometheus (Debian's) scrapes two memscope exporters on loopback,
as a fleet's would: one counts a workload here (its token from a file, as
the fleet setup in docs/live.md has it), the other replays a 2-socket
Kunpeng 920. PromQL gives the per-node values computed by hand from the
replay, and rate() of the fault counter agrees with memscope's own frames."""
import json
import os
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
        got = prom.api("query", query='memscope_mem_read_bytes_total{job="kunpeng",scope="node"}')["result"]
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
