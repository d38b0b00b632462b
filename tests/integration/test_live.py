"""memscope live over HTTP, as a browser, Prometheus and other users of the
machine reach it: the stream and /metrics agree with each other and with
the recording of the same run, control needs the token, other users and
paths outside the page are refused, and idle or stalled clients neither
grow memscope nor hold up sampling."""
import json
import os
import resource
import socket
import subprocess
import time

import pytest

from conftest import run
from live_server import Live, prom_samples, prom_value
from test_record import read_recording

PAGE = 4096


def column(session, group, label="all"):
    for i, c in enumerate(session["columns"]):
        if c["group"] == group and c["label"] == label:
            return i
    raise AssertionError(f"no column {group} ({label}): {session['columns']}")


def test_a_non_loopback_address_needs_remote_and_a_private_token(memscope, tmp_path):
    res = run([memscope, "live", "--listen", "0.0.0.0:0", "--", "true"])
    assert res.returncode == 2
    assert "not a loopback address" in res.stderr and "--remote" in res.stderr
    token = tmp_path / "token"
    token.write_text("0123456789abcdef0123456789\n")
    token.chmod(0o644)
    res = run([memscope, "live", "--listen", "0.0.0.0:0", "--remote", "--token-file", str(token), "--", "true"])
    assert res.returncode == 2 and "chmod 600" in res.stderr
    res = run([memscope, "live", "--listen", "127.0.0.1", "--", "true"])
    assert res.returncode == 2 and "ADDRESS:PORT" in res.stderr


def test_the_stream_metrics_and_recording_agree(memscope, touchmem, tmp_path):
    rec = tmp_path / "live.rec"
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "50", "-e", "page-faults,context-switches",
                           "-o", str(rec), "--", touchmem, "100", "--sleep-ms", "1000"])
    try:
        live.wait_for("still serving")
        session = live.session()
        assert session["ended"] and session["end_reason"] == "the command exited"
        pf = column(session, "page-faults")
        batches = live.stream(lambda b: "end" in b[-1][2])
        ids = [i for _, i, _ in batches]
        assert ids == list(range(1, len(ids) + 1)), "batch ids run 1, 2, 3... without a gap"
        frames = [f for _, _, b in batches for f in b["f"]]
        assert [f[0] for f in frames] == list(range(len(frames))), "every frame, in order, none merged"
        streamed = sum(f[3 + pf] for f in frames if f[3 + pf] is not None)
        samples = prom_samples(live.metrics())
        exported = prom_value(samples, "memscope_page_faults_total")
        assert streamed == exported
        assert exported >= 100 * 1024 * 1024 // PAGE, "touchmem 100 faults each of its 25,600 pages"
        assert prom_value(samples, "memscope_frames_total") == len(frames)
        assert prom_value(samples, "memscope_frame_seq") == frames[-1][0]
        assert prom_value(samples, "memscope_up") == 0, "the run has ended"
        # A client that comes back with the last id it had goes on from the next.
        assert len(ids) >= 3, "a second of frames comes in ~400 ms batches"
        again = live.stream(lambda b: len(b) >= 1, last_id=ids[-3])
        assert again[0][1] == ids[-2] and again[0][2] == batches[-2][2]
        # OpenMetrics when asked for.
        status, headers, text = live.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        assert status == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
        assert text.endswith("# EOF\n")
        assert "# TYPE memscope_page_faults counter\n" in text
        assert "\nmemscope_page_faults_total " in text
    finally:
        live.stop()
    header, rec_frames, others = read_recording(rec)
    i = next(k for k, s in enumerate(header["series"]) if s["name"] == "page-faults")
    assert sum(f["v"][i] for f in rec_frames if f["v"][i] is not None) == exported
    assert len(rec_frames) == len(frames)


def other_user(*cmd):
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd],
                          capture_output=True, text=True, timeout=60)


def test_control_needs_the_token_and_labels_reach_the_recording(memscope, touchmem, tmp_path):
    rec = tmp_path / "ctl.rec"
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "-e", "page-faults", "-o", str(rec),
                           "--exit-at-end", "--", touchmem, "8", "--sleep-ms", "4000"])
    try:
        live.session()
        status, _, text = live.control("label before the token", token=False)
        assert status == 403 and "token" in text
        # A cookie is what a browser sends with another site's request: not enough.
        status, _, _ = live.request("POST", "/api/control", body="pause",
                                    headers={"Cookie": f"memscope_token={live.token}"})
        assert status == 403
        status, _, text = live.control("label phase two")
        assert status == 200 and text.startswith("ok: label 'phase two'"), text
        status, _, text = live.control("pause")
        assert status == 200 and "paused" in text, text
        status, _, text = live.control("resume")
        assert status == 200 and "resumed" in text, text
        status, _, text = live.control("rm -rf /")
        assert status == 400
        if os.geteuid() == 0:
            url = f"http://127.0.0.1:{live.port}"
            res = other_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                             "--data", "pause", f"{url}/api/control")
            assert res.stdout == "403", res
            res = other_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{url}/metrics")
            assert res.stdout == "403", res
            res = other_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{url}/")
            assert res.stdout == "403", res
        events = live.stream(lambda b: any(e["k"] == "resume" for _, _, x in b for e in x.get("e", [])))
        kinds = [(e["k"], e.get("x")) for _, _, b in events for e in b.get("e", [])]
        assert ("label", "phase two") in kinds and ("pause", None) in kinds
    finally:
        live.stop()
    _, _, others = read_recording(rec)
    assert any(o.get("label") == "phase two" for o in others)
    assert [o["control"] for o in others if "control" in o][:2] == ["pause", "resume"]


def test_a_label_from_the_page_that_is_not_utf8_is_refused_and_the_run_goes_on(memscope, touchmem, tmp_path):
    """The page's control takes the same lines as memscope ctl: a Latin-1 label is refused with the
    byte at fault (409), the recording goes on, takes the next label and ends with its end record."""
    rec = tmp_path / "latin1.rec"
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "-e", "page-faults", "-o", str(rec),
                           "--exit-at-end", "--", touchmem, "8", "--sleep-ms", "2000"])
    try:
        live.session()
        status, _, text = live.control("label caf\xe9".encode("latin-1"))
        assert status == 409, (status, text)
        assert "label: byte 4 (0xe9) is not UTF-8 text; the label was not recorded" in text, text
        status, _, text = live.control("label after it")
        assert status == 200 and text.startswith("ok: label 'after it'"), text
    finally:
        live.stop()
    _, frames, others = read_recording(rec)
    assert [o["label"] for o in others if "label" in o] == ["after it"]
    assert others[-1]["end"] and others[-1]["frames"] == len(frames), others[-1]


def raw_get(port, path, host="127.0.0.1"):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]), data


def test_nothing_outside_the_page_is_served(memscope, tmp_path):
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "200", "-e", "page-faults", "--", "sleep", "30"])
    try:
        status, page = raw_get(live.port, "/")
        assert status == 200 and b"memscope" in page
        for path in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/lib/../../../etc/shadow",
                     "//etc/passwd", "/.hidden", "/lib/%2E%2E/%2E%2E/%2E%2E/etc/passwd"]:
            status, data = raw_get(live.port, path)
            assert status == 403, (path, data[:200])
            assert b"root:" not in data
        status, _ = raw_get(live.port, "/metrics", host="attacker.example")
        assert status == 403, "a name rebound to 127.0.0.1 gets nothing"
    finally:
        live.stop()


def test_idle_connections_and_a_client_that_never_reads(memscope, tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1200:
        pytest.skip(f"the hard limit of open files is {hard}: 1,000 connections need more")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "-e", "page-faults,context-switches",
                           "--", "sleep", "120"])
    idle, stalled = [], None
    try:
        live.session()
        rss_before = live.rss_kb()
        for _ in range(1000):
            idle.append(socket.create_connection(("127.0.0.1", live.port), timeout=30))
        # A stream client with a tiny window that never reads a byte.
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", live.port))
        stalled.sendall(f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\n\r\n".encode())
        seq_before = prom_value(prom_samples(live.metrics()), "memscope_frame_seq")
        # Meanwhile a normal client gets every frame, none merged.
        batches = live.stream(lambda b: sum(len(x["f"]) for _, _, x in b) >= 60, timeout=120)
        frames = [f[0] for _, _, b in batches for f in b["f"]]
        assert frames == list(range(frames[0], frames[0] + len(frames)))
        samples = prom_samples(live.metrics())
        assert prom_value(samples, "memscope_frame_seq") > seq_before + 20, "sampling went on"
        grown = live.rss_kb() - rss_before
        assert grown < 96 * 1024, f"memscope grew by {grown} kB with 1,000 idle clients and a stalled one"
        assert live.proc.poll() is None
    finally:
        for s in idle:
            s.close()
        if stalled:
            stalled.close()
        live.stop()


def test_the_process_table_and_per_pid_metrics_count_the_command(memscope, touchmem, tmp_path):
    """The command's process has its own series: /metrics gives it pid and comm
    labels while it runs, and the stream's process tables, added up, count
    what it faulted, the run's own proc.faults total."""
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "--", touchmem, "50", "--sleep-ms", "3000"])
    try:
        pid = None
        deadline = time.time() + 60
        while time.time() < deadline:
            samples = prom_samples(live.metrics())
            rows = [(dict(l), v) for (n, l), v in samples.items()
                    if n == "memscope_proc_faults_total" and dict(l).get("comm") == "touchmem"]
            if rows and rows[0][1] >= 50 * 1024 * 1024 // PAGE:
                pid = int(rows[0][0]["pid"])
                break
            time.sleep(0.2)
        assert pid, "touchmem's own row never reached its 12,800 faults in /metrics"
        with open(f"/proc/{pid}/status") as f:
            ppid = next(int(line.split()[1]) for line in f if line.startswith("PPid:"))
        assert ppid == live.proc.pid, "the row is the command memscope started"
        # One page, one frame: the process's series is the run's total; the
        # family's other processes (pid="other") counted nothing.
        family = sum(v for (n, _), v in samples.items() if n == "memscope_proc_faults_total")
        assert rows[0][1] == family
        assert prom_value(samples, "memscope_proc_faults_total", pid="other", comm="other") == 0
        live.wait_for("still serving")
        batches = live.stream(lambda b: "end" in b[-1][2])
        tables = [b["p"] for _, _, b in batches if "p" in b]
        assert tables and all(t["n"][0] == "proc.faults" for t in tables)
        mine = [r for t in tables for r in t["r"] if r[0] == pid]
        assert mine and all(r[1] == "touchmem" for r in mine)
        # Ended: its counts are in pid="other", and the family still adds up to them.
        samples = prom_samples(live.metrics())
        total = sum(v for (n, _), v in samples.items() if n == "memscope_proc_faults_total")
        assert total == prom_value(samples, "memscope_proc_faults_total", pid="other", comm="other")
        assert sum(r[2] for r in mine if r[2] is not None) == total
        assert total >= 50 * 1024 * 1024 // PAGE
    finally:
        live.stop()


def test_the_page_starts_and_stops_recordings_without_o(memscope, touchmem, tmp_path):
    """Without -o nothing is written until `record FILE`; `record stop` ends the
    file with the frames it has, the run goes on, and a second `record FILE`
    starts another, with the series as they are then. memscope reads both."""
    first, second, go = tmp_path / "first.rec", tmp_path / "second.rec", tmp_path / "go"
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "--", "sh", "-c",
                           f"while [ ! -e {go} ]; do sleep 0.05; done; {touchmem} 8 --sleep-ms 300; sleep 30"],
                cwd=tmp_path)
    try:
        live.session()
        status, _, text = live.control("status")
        assert status == 200 and text.startswith("ok: not recording"), text
        assert live.control("label before any file")[2].startswith("ok: label 'before any file' at ")
        assert live.control("record stop")[2].startswith("error: not recording")
        status, _, text = live.control("record first.rec")
        assert text == "ok: recording to first.rec", text
        live.control("label in the first file")
        # touchmem starts now and ends: its series are added, then retired.
        go.touch()
        seen = gone = False
        deadline = time.time() + 60
        while not gone and time.time() < deadline:
            here = 'comm="touchmem"' in live.metrics()
            seen, gone = seen or here, seen and not here
            time.sleep(0.1)
        assert gone, "touchmem's series came and went in /metrics"
        status, _, text = live.control("record stop")
        assert status == 200 and text.startswith("ok: first.rec closed with "), text
        stopped_frames = int(text.split()[-2])
        assert not second.exists()
        time.sleep(0.5)
        assert live.control("record second.rec")[2] == "ok: recording to second.rec"
        time.sleep(1)
    finally:
        live.stop()
    header, frames, others = read_recording(first)
    labels = [o["label"] for o in others if "label" in o]
    assert labels == ["in the first file"], "nothing from before the file started"
    briefs = sum(len(o["brief"]) for o in others if "brief" in o)
    assert others[-1] == {"end": "record stop", "frames": len(frames), "brief_series": briefs}
    assert len(frames) == stopped_frames
    added = [s for o in others if "series" in o for s in o["series"]]
    mine = [s["i"] for s in added if s.get("comm") == "touchmem"]
    assert mine, "the workload's series, added mid-file"
    assert set(mine) <= {i for o in others if "retire" in o for i in o["retire"]}, "and retired when it ended"
    _, frames2, others2 = read_recording(second)
    assert frames2 and others2[-1]["end"] == "SIGINT"
    # memscope reads both files as recordings of their own.
    for path in (first, second):
        res = run([memscope, "stat", "--input", str(path)])
        assert res.returncode == 0, res.stderr


def test_metrics_export_each_nodes_memory_and_tier_counters(memscope, touchmem):
    """Without -m, /metrics has node0's used and free memory (one read of nodeN/meminfo: they
    add up to its MemTotal exactly) and its promotion and demotion counters, no more than the
    kernel's own counters grew by around the run."""
    node0 = "/sys/devices/system/node/node0/"

    def vmstat():
        return {k: int(v) for k, v in (l.split() for l in open(node0 + "vmstat"))}

    total = next(int(l.split()[3]) * 1024 for l in open(node0 + "meminfo") if l.split()[2] == "MemTotal:")
    before = vmstat()
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--no-ui", "-I", "100", "--", touchmem, "20",
                           "--sleep-ms", "500"])
    try:
        live.wait_for("still serving")
        samples = prom_samples(live.metrics())
    finally:
        live.stop()
    after = vmstat()
    used = prom_value(samples, "memscope_node_numa_used_bytes", node=0)
    free = prom_value(samples, "memscope_node_numa_free_bytes", node=0)
    assert used > 0 and free > 0 and used + free == total
    promoted = prom_value(samples, "memscope_node_tier_promoted_pages_total", node=0)
    demoted = prom_value(samples, "memscope_node_tier_demoted_pages_total", node=0)
    assert 0 <= promoted <= after["pgpromote_success"] - before["pgpromote_success"]
    assert 0 <= demoted <= sum(after[k] - before[k] for k in after if k.startswith("pgdemote_"))


def test_the_history_is_small_without_a_page(memscope):
    """The stream history's limit, as /api/session and /metrics state it: 64 MiB for a page
    that may open late, 4 MiB with --no-ui (an exporter left running for weeks), and what
    --history asks for either way."""
    for args, limit in ((["--no-ui"], 4 << 20), (["--no-ui", "--history", "16"], 16 << 20),
                        ([], 64 << 20), (["--history", "2"], 2 << 20)):
        live = Live(memscope, ["--listen", "127.0.0.1:0", "--no-ctl", "-I", "100", *args, "-a"])
        try:
            assert live.session()["history"]["limit"] == limit, (args, live.session()["history"])
            assert prom_value(prom_samples(live.metrics()), "memscope_history_limit_bytes") == limit, args
        finally:
            live.stop()


def test_an_exporter_adds_up_exited_processes_past_its_limit(memscope):
    """--no-ui keeps 4,096 exited processes one by one in /api/totals; a command that runs 5,000
    processes of 0.3 s each (each lives through a frame, so each has a series of its own) leaves
    the oldest half added up in "others", and every process's faults still add up to the run's."""
    loop = "for b in $(seq 10); do for i in $(seq 500); do sleep 0.3 & done; wait; done"
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--no-ui", "--no-ctl", "-I", "100", "-e", "proc.faults",
                           "--", "sh", "-c", loop])
    try:
        live.wait_for("still serving", timeout=600)
        status, _, text = live.get("/api/totals")
    finally:
        live.stop()
    assert status == 200, text
    totals = json.loads(text)
    others = totals.get("others")
    summary = {k: v for k, v in totals.items() if k != "processes"}
    assert others and others["series"] >= 2048, (len(totals["processes"]), summary)
    assert len(totals["processes"]) <= 4096
    listed = sum(p["totals"].get("proc.faults", 0) for p in totals["processes"])
    assert listed + others["totals"]["proc.faults"] + totals["unattributed"]["proc.faults"] \
        == totals["all"]["proc.faults"], summary
