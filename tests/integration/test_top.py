"""memscope top: the full screen driven through tmux (send-keys, capture-pane) and the batch output
parsed field by field, with workloads whose page faults are known."""
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time
import uuid

import pytest

from conftest import online_cpus, run

PAGE = 4096
TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (scripts/setup.sh installs it)")

# A control socket that does not exist: top sees no `memscope record`, even if
# another test runs one at the same time.
NO_RECORDING = dict(os.environ, MEMSCOPE_CTL_SOCKET="/nonexistent/memscope.sock")

RATE = re.compile(r"^([0-9.]+)([kMGTP]?)$")
SCALE = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def rate(text):
    """'12.3k' -> 12300.0 (the screen's short form of a rate)."""
    m = RATE.match(text)
    assert m, f"not a rate: {text!r}"
    return float(m.group(1)) * SCALE[m.group(2)]


# --- batch output -------------------------------------------------------------

def parse_batch(text):
    """Blocks of `memscope top --batch`: header fields, node rows and process rows by column name
    (a replay's run totals after them: parse_totals)."""
    blocks = []
    text = re.split(r"(?:^|\n)(?=totals: )", text.strip())[0]
    for chunk in re.split(r"\n(?=top: update=)", text.strip()):
        lines = chunk.split("\n")
        head = dict(re.findall(r"(\w+)=(\S+)", lines[0]))
        block = {"update": int(head["update"]), "time_s": float(head["time_s"]),
                 "interval_ms": int(head["interval_ms"]), "fields": {}, "na": {},
                 "nodes": [], "tiers": [], "procs": [], "threads": []}
        i = 1
        while i < len(lines) and lines[i]:
            key, _, value = lines[i].partition(": ")
            if key == "na":
                column, _, why = value.partition(": ")
                block["na"][column] = why
            else:
                block["fields"][key] = value
            i += 1
        tables = [t for t in "\n".join(lines[i:]).split("\n\n") if t.strip()]
        for table in tables:
            rows = table.strip("\n").split("\n")
            if rows[0].startswith("threads:"):
                block["threads_of"] = dict(re.findall(r"(\w+)=(\S+)", rows[0]))
                rows = rows[1:]
            names = rows[0].split()
            target = {"NODE": "nodes", "TIER": "tiers", "PID": "procs", "TID": "threads"}[names[0]]
            for row in rows[1:]:
                # COMMAND is last and may hold spaces.
                cells = row.split(None, len(names) - 1)
                assert len(cells) == len(names), f"row {row!r} does not match {names}"
                block[target].append(dict(zip(names, cells)))
        blocks.append(block)
    return blocks


def parse_totals(text):
    """The run totals a replay ends with: (header fields, process rows by column name, {"unattributed": F,
    "all": F})."""
    lines = text[text.index("totals: "):].strip().split("\n")
    head = dict(re.findall(r"(\w+)=(\S+)", lines[0]))
    names = lines[1].split()
    rows, sums = [], {}
    for line in lines[2:]:
        if line.startswith(("unattributed ", "all ")):
            key, _, value = line.partition(" FAULTS=")
            sums[key] = int(value)
            continue
        cells = line.split(None, len(names) - 1)
        rows.append(dict(zip(names, cells)))
    return head, rows, sums


def node_of_cpu(cpu):
    """The NUMA node sysfs links the CPU to."""
    links = list(pathlib.Path(f"/sys/devices/system/cpu/cpu{cpu}").glob("node[0-9]*"))
    assert len(links) == 1, links
    return int(links[0].name[4:])


def number(cell):
    return None if cell == "n/a" else float(cell)


def test_batch_counts_the_faults_of_a_workload_started_while_it_runs(memscope, touchmem):
    mb = 64
    pages = mb * 1024 * 1024 // PAGE
    top = subprocess.Popen([memscope, "top", "--batch", "-n", "10", "-I", "250"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=NO_RECORDING)
    try:
        # Start the workload after the first block, so every one of its faults
        # falls in an interval top reports.
        first = top.stdout.readline()
        assert first.startswith("top: update=1 "), first + top.stderr.read()
        work = subprocess.Popen([touchmem, str(mb), "--sleep-ms", "4000"])
        # Read on from the same buffered stream (communicate() would skip what it holds).
        out = first + top.stdout.read()
        top.wait(timeout=60)
        err = top.stderr.read()
    finally:
        if top.poll() is None:
            top.kill()
    work.wait(timeout=30)
    assert top.returncode == 0, err
    blocks = parse_batch(out)
    assert [b["update"] for b in blocks] == list(range(1, 11))

    for b in blocks:
        assert b["interval_ms"] == 250
        assert b["fields"]["sources"].split()[-1] == "bpf"
        assert "perf" in b["fields"]["sources"].split()
        assert b["fields"]["host"] == os.uname().nodename
        assert b["fields"]["recording"] == "off"
        assert float(b["fields"]["coverage_pct"]) == pytest.approx(100.0, abs=0.1)
        # This machine has no uncore PMU: bandwidth and remote ratio are n/a
        # with the resolver's reason, never 0.
        for column in ("READ_B/s", "WRITE_B/s", "REMOTE%"):
            assert "not available" in b["na"][column]
            assert all(n[column] == "n/a" for n in b["nodes"])
        node_ids = [n["NODE"] for n in b["nodes"]]
        assert node_ids[-1] == "all" and len(node_ids) >= 2
        for n in b["nodes"]:
            for column in ("FAULTS/s", "ALLOC/s", "MIGR/s", "MISS/s", "FOREIGN/s"):
                assert number(n[column]) is not None and number(n[column]) >= 0, (column, n)

    # Sum the workload's faults/s over the intervals it ran in: its page count.
    faults = allocs = 0.0
    node_faults = 0.0
    seen = 0
    previous = blocks[0]["time_s"]
    for b in blocks[1:]:
        seconds = b["time_s"] - previous
        previous = b["time_s"]
        node_faults += number(b["nodes"][-1]["FAULTS/s"]) * seconds
        for p in b["procs"]:
            if int(p["PID"]) == work.pid:
                assert p["COMMAND"] == "touchmem"
                assert int(p["THR"]) == 1
                assert p["REMOTE%"] == "n/a"
                faults += float(p["FAULTS/s"]) * seconds
                allocs += float(p["ALLOC/s"]) * seconds
                seen += 1
    assert seen >= 1, "the workload never appeared in the process table"
    # Interval times are printed in ms resolution: allow 2 %, plus start-up faults.
    assert pages * 0.98 <= faults <= pages * 1.02 + 400, (faults, pages)
    # One page allocated per fault (THP is off for touchmem).
    assert allocs == pytest.approx(faults, rel=0.05)
    assert node_faults >= faults * 0.98


def test_a_process_is_named_and_counted_as_the_kernel_has_it(memscope, build_dir):
    """A process whose leader waits while its workers run (PID 1 of many systems): its row is
    named after the leader (/proc/PID/comm), not a worker, and THR is the kernel's count of its
    threads (/proc/PID/status), not only the threads that ran while top watched."""
    threads = build_dir / "contrib" / "bench" / "threads"
    # 3 workers named early0..2 touch 1 MB every 100 ms; the main thread ("threads") waits in join.
    work = subprocess.Popen([str(threads), "3", "0", "0", "120000", "1", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert work.stdout.readline().startswith("ready")
        res = run([memscope, "top", "-b", "-n", "6", "-I", "250"], env=NO_RECORDING)
        with open(f"/proc/{work.pid}/comm") as f:
            comm = f.read().strip()
        with open(f"/proc/{work.pid}/status") as f:
            nr_threads = int(re.search(r"^Threads:\s+(\d+)", f.read(), re.M).group(1))
    finally:
        work.kill()
        work.wait()
    assert res.returncode == 0, res.stderr
    assert (comm, nr_threads) == ("threads", 4)
    rows = [p for b in parse_batch(res.stdout)[1:] for p in b["procs"] if int(p["PID"]) == work.pid]
    assert rows, res.stdout
    assert {p["COMMAND"] for p in rows} == {comm}, rows
    assert {int(p["THR"]) for p in rows} == {nr_threads}, rows


def test_batch_focus_shows_the_process_and_its_threads(memscope, build_dir):
    threads = build_dir / "contrib" / "bench" / "threads"
    # 3 workers, each touching 4 MB (1024 pages) every 100 ms until the test ends them (top's
    # start-up may take seconds in a sanitizer build on a busy machine: they must outlive it).
    work = subprocess.Popen([str(threads), "3", "0", "0", "120000", "4", "200"], stdout=subprocess.PIPE, text=True)
    try:
        assert work.stdout.readline().startswith("ready")
        res = run([memscope, "top", "-b", "-n", "10", "-I", "250", "-p", str(work.pid)])
    finally:
        work.kill()
        work.wait()
    assert res.returncode == 0, res.stderr
    blocks = parse_batch(res.stdout)
    assert len(blocks) == 10
    proc_faults = thread_faults = 0.0
    per_thread = {}
    previous = blocks[0]["time_s"]
    for b in blocks[1:]:
        seconds = b["time_s"] - previous
        previous = b["time_s"]
        assert [int(p["PID"]) for p in b["procs"]] == [work.pid]
        assert b["threads_of"] == {"pid": str(work.pid), "alive": "yes"}
        tids = {int(t["TID"]) for t in b["threads"]}
        assert work.pid in tids and len(tids) == 4, b["threads"]
        # Each thread by its own name (the workload names them early0..2; the main thread its own).
        names = {int(t["TID"]): t["COMMAND"] for t in b["threads"]}
        assert names.pop(work.pid) == "threads" and sorted(names.values()) == ["early0", "early1", "early2"], names
        for t in b["threads"]:
            cpu = int(t["CPU"])
            assert cpu in online_cpus() and int(t["NODE"]) == node_of_cpu(cpu) and t["S"] in "RSD", t
            per_thread[int(t["TID"])] = per_thread.get(int(t["TID"]), 0) + float(t["FAULTS/s"]) * seconds
        proc_faults += float(b["procs"][0]["FAULTS/s"]) * seconds
        thread_faults += sum(float(t["FAULTS/s"]) for t in b["threads"]) * seconds
    span = blocks[-1]["time_s"] - blocks[0]["time_s"]
    busy = sorted(per_thread.values())[1:]
    # Three workers at ~10 240 faults/s (bursts of 1024 make each interval 2 or 3 bursts).
    assert len(busy) == 3 and per_thread[work.pid] < 100, per_thread
    for total in busy:
        assert total / span == pytest.approx(10240, rel=0.25), per_thread
    # eBPF (per process) and /proc (per thread) are read a moment apart: the sums over
    # the run can differ by a burst per worker at its start and at its end, no more.
    assert abs(proc_faults - thread_faults) <= 2 * 3 * 1024 + 100, (proc_faults, thread_faults)


def pid_rates(blocks, pid):
    """(FAULTS/s, seconds the update covers, COMMAND) of pid in each block that has its row."""
    out = []
    for before, b in zip([None] + blocks, blocks):
        seconds = b["time_s"] - before["time_s"] if before else b["interval_ms"] / 1000
        for p in b["procs"]:
            if int(p["PID"]) == pid:
                out.append((float(p["FAULTS/s"]), seconds, p["COMMAND"]))
    return out


def test_replay_of_record_a_shows_what_live_top_showed(memscope, build_dir, tmp_path):
    """record -a, then top --input: the workload's row with the faults/s live top showed for the same run."""
    threads = build_dir / "contrib" / "bench" / "threads"
    rec = tmp_path / "memscope.rec"
    live = subprocess.Popen([memscope, "top", "-b", "-I", "200"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=NO_RECORDING)
    # Live top covers the whole run however long a busy machine makes it: the workload starts
    # after top's first update and top is stopped two updates after the workload's end.
    seen = []
    def read():
        for line in live.stdout:
            seen.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def updates():
        return sum(1 for line in list(seen) if line.startswith("top: update="))

    deadline = time.time() + 60
    while updates() < 1 and time.time() < deadline and live.poll() is None:
        time.sleep(0.05)
    # One worker touching 4 MB (1024 pages) every 100 ms from 300 ms to 3.3 s: 10240 faults/s.
    res = run([memscope, "record", "-a", "-I", "200", "-o", str(rec), "--", str(threads), "1", "0", "0",
               "3300", "4"])
    after = updates()
    while updates() < after + 2 and time.time() < deadline + 60 and live.poll() is None:
        time.sleep(0.05)
    live.send_signal(signal.SIGINT)
    live.wait(timeout=60)
    reader.join(timeout=10)
    err = live.stderr.read()
    out = "".join(seen)
    assert res.returncode == 0 and live.returncode == 0, (res.stderr, err)
    pid = int(re.search(r"^ready (\d+)", res.stdout, re.M).group(1))
    pages = int(re.search(r"^pages (\d+)", res.stdout, re.M).group(1))
    replay = run([memscope, "top", "-b", "--input", str(rec)])
    assert replay.returncode == 0, replay.stderr
    shown = {"live": pid_rates(parse_batch(out), pid), "replay": pid_rates(parse_batch(replay.stdout), pid)}
    for how, rows in shown.items():
        # record forks the workload and holds it before exec: its first row may carry
        # memscope's name; exec names it (new series under the new name).
        names = [command for _, _, command in rows]
        assert rows and names[-1] == "threads" and set(names) <= {"memscope", "threads"}, (how, rows)
        assert names == sorted(names), (how, rows)
        # Every fault of the run, each frame's rate times its interval (page faults of the
        # program's start-up on top of those its worker counted; rates print with one decimal).
        total = sum(r * s for r, s, _ in rows)
        assert pages * 0.998 <= total <= pages + 400, (how, total, pages, rows)
        # Bursts of 1024 pages every 100 ms: the workload's frames show thousands a second
        # (fewer when a busy machine delays its bursts, in both views alike).
        assert len([r for r, _, _ in rows if r > 1000]) >= 5, (how, rows)
    medians = [statistics.median(r for r, _, _ in rows if r > 1000) for rows in shown.values()]
    assert medians[0] == pytest.approx(medians[1], rel=0.25), shown
    # The recording is format 2: the workload's series appear and are retired.
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    mine = [s for rec_ in lines if "series" in rec_ and "t" in rec_ for s in rec_["series"] if s.get("pid") == pid]
    assert {s["name"] for s in mine} >= {"proc.faults", "proc.threads", "proc.oncpu_ns"}
    retired = {i for rec_ in lines if "retire" in rec_ for i in rec_["retire"]}
    assert {s["i"] for s in mine if s["name"] == "proc.faults"} <= retired


def test_lua_scripts_run_on_top_frames_and_report_at_the_end(memscope, touchmem):
    """top --lua: the script sees top's system-wide frames; its report comes after top's output."""
    top = subprocess.Popen([memscope, "top", "-b", "-I", "250", "-n", "8", "--lua", "faults.lua"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.6)
    assert run([touchmem, "100"]).returncode == 0
    out, err = top.communicate(timeout=60)
    assert top.returncode == 0, err
    report = out[out.index("faults.lua: page faults"):]
    all_faults = int(re.search(r"^\s+all faults\s+(\d+)", report, re.M).group(1))
    # System wide: at least the workload's 25,600 faults.
    assert all_faults >= 100 * 256, report
    assert "live system wide" in report


COLUMNS_LUA = """
memscope.metric {
  name = "t.fault_rate", unit = "faults/s", description = "page faults per second, from the counter",
  inputs = { "page-faults" },
  compute = function(v) return v["page-faults"] / v.interval end,
}
memscope.metric {
  name = "t.pages_per_fault", unit = "pages/fault", description = "pages allocated per fault",
  inputs = { "proc.pages_alloc", "page-faults" },
  compute = function(v)
    local f = v["page-faults"]
    if f and f > 0 and v["proc.pages_alloc"] then return v["proc.pages_alloc"] / f end
  end,
}
memscope.metric {
  name = "t.read_gbs", unit = "GB/s", description = "DRAM reads",
  inputs = { "mem.read_bw" },
  compute = function(v) return v["mem.read_bw"] / 1e9 end,
}
"""

BROKEN_LUA = """
memscope.metric {
  name = "t.broken", unit = "", inputs = { "page-faults" },
  compute = function(v, scope)
    -- Called for each scope of a frame: count frames, not calls.
    if memscope.frame().count > 4 then error("gave up") end
    return 1
  end,
}
"""


def test_lua_metrics_are_node_columns_in_batch(memscope, touchmem, tmp_path):
    """Each metric a --lua script defines is a column of the node table, for every node and the
    system, with the value the script computes; n/a with the reason where it has none."""
    (tmp_path / "columns.lua").write_text(COLUMNS_LUA)
    (tmp_path / "broken.lua").write_text(BROKEN_LUA)
    top = subprocess.Popen([memscope, "top", "-b", "-I", "250", "-n", "10", "--lua", str(tmp_path / "columns.lua"),
                            "--lua", str(tmp_path / "broken.lua")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=NO_RECORDING)
    try:
        first = top.stdout.readline()
        assert first.startswith("top: update=1 "), first + top.stderr.read()
        work = subprocess.Popen([touchmem, "64"])
        assert work.wait(timeout=60) == 0
        # Read on from the same buffered stream (communicate() would skip what it holds).
        out = top.stdout.read()
        top.wait(timeout=60)
        err = top.stderr.read()
    finally:
        if top.poll() is None:
            top.kill()
    # Named by its whole path, however long (Lua itself cuts it to 60 characters).
    assert f"{tmp_path}/broken.lua:6: gave up (frame 4, in a metric's compute)" in err, err
    blocks = parse_batch(first + out)
    assert len(blocks) == 10, first + out
    busiest = 0.0
    work_faults = work_pages = 0.0
    for b in blocks:
        assert len(b["nodes"]) >= 2, b
        for row in b["nodes"]:
            # The script's rate is the counter over the frame's interval, as top's own column.
            assert number(row["t.fault_rate"]) == pytest.approx(number(row["FAULTS/s"]), rel=1e-3, abs=0.06), row
            assert row["t.read_gbs"] == "n/a"
            # The script's ratio is the frame's: top's own ALLOC/s over FAULTS/s in the same row
            # (whatever else runs on the machine moves both).
            if number(row["FAULTS/s"]) > 0:
                assert number(row["t.pages_per_fault"]) == pytest.approx(
                    number(row["ALLOC/s"]) / number(row["FAULTS/s"]), rel=0.02, abs=0.01), row
        busiest = max(busiest, number(b["nodes"][-1]["t.fault_rate"]))
        assert "not available" in b["na"]["t.read_gbs"] and "mem.read_bw" in b["na"]["t.read_gbs"]
        for p in b["procs"]:
            if int(p["PID"]) == work.pid:
                work_faults += number(p["FAULTS/s"])
                work_pages += number(p["ALLOC/s"])
        if b["update"] <= 3:
            assert all(row["t.broken"] == "1" for row in b["nodes"]), b["nodes"]
        if b["update"] >= 6:
            assert all(row["t.broken"] == "n/a" for row in b["nodes"]), b["nodes"]
            assert "broken.lua failed" in b["na"]["t.broken"]
    # The workload's 16,384 faults fell in one or two 250 ms intervals.
    assert busiest > 16384, busiest
    # What this test caused: touchmem (THP off) allocates one page per fault.
    assert work_faults > 0, "touchmem never appeared in the process table"
    assert work_pages / work_faults == pytest.approx(1.0, abs=0.15), (work_pages, work_faults)


def test_usage_errors_exit_2(memscope):
    for args in (["-I", "5"], ["-p", "nope"], ["-p", "999999999"], ["-s", "colour"], ["-n", "0"], ["extra"]):
        res = run([memscope, "top", "-b"] + args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert "memscope top:" in res.stderr


def test_not_a_terminal_falls_back_to_batch(memscope):
    res = run([memscope, "top", "-n", "1", "-I", "100"], env=dict(os.environ, TERM="xterm-256color"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("top: update=1 ")
    assert "not a terminal" in res.stderr


# --- the full screen under tmux ---------------------------------------------------

class Tmux:
    def __init__(self, tmp_path, command, width=160, height=48, term="xterm-256color", env_socket=None):
        # A name never used before: a server being killed by the previous test may still be
        # exiting, and a new session on its socket would fail ("server exited unexpectedly").
        self.socket = f"memscope-top-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.status = tmp_path / "status"
        socket = env_socket or "/nonexistent/memscope.sock"
        shell = f"TERM={term} MEMSCOPE_CTL_SOCKET={socket} {command}; echo $? > {self.status}; sleep 60"
        subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                        "-x", str(width), "-y", str(height), shell], check=True)

    def keys(self, *keys):
        subprocess.run([TMUX, "-L", self.socket, "send-keys", "-t", "t"] + list(keys), check=True)

    def screen(self):
        res = subprocess.run([TMUX, "-L", self.socket, "capture-pane", "-p", "-t", "t"],
                             capture_output=True, text=True, check=True)
        return res.stdout.split("\n")

    def history(self):
        """The screen with everything that scrolled off it."""
        res = subprocess.run([TMUX, "-L", self.socket, "capture-pane", "-p", "-S", "-", "-t", "t"],
                             capture_output=True, text=True, check=True)
        return res.stdout

    def resize(self, width, height):
        subprocess.run([TMUX, "-L", self.socket, "resize-window", "-t", "t", "-x", str(width), "-y", str(height)],
                       check=True)

    def wait_for(self, predicate, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            lines = self.screen()
            if predicate(lines):
                return lines
            if time.monotonic() > deadline:
                raise AssertionError("screen never matched:\n" + "\n".join(lines))
            time.sleep(0.1)

    def exit_status(self, timeout=10):
        deadline = time.monotonic() + timeout
        while not self.status.exists() or not self.status.read_text().strip():
            if time.monotonic() > deadline:
                raise AssertionError("top did not exit:\n" + "\n".join(self.screen()))
            time.sleep(0.1)
        return int(self.status.read_text())

    def close(self):
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def tmux(tmp_path):
    sessions = []

    def start(command, **kw):
        session = Tmux(tmp_path, command, **kw)
        sessions.append(session)
        return session

    yield start
    for s in sessions:
        s.close()


def process_rows(lines):
    """Rows of the process table on screen: dicts by column title."""
    for i, line in enumerate(lines):
        if line.split()[:3] == ["PID", "THR", "FAULTS/s"]:
            names = line.split()
            rows = []
            for row in lines[i + 1:]:
                cells = row.split(None, len(names) - 1)
                if len(cells) != len(names) or not cells[0].isdigit():
                    break
                rows.append(dict(zip(names, cells)))
            return rows
    return []


def status_line(lines):
    filled = [line for line in lines if line.strip()]
    return filled[-1] if filled else ""


@needs_tmux
def test_screen_shows_a_workload_sorts_pauses_and_quits(memscope, touchmem, tmux):
    work = subprocess.Popen([touchmem, "32", "--repeat", "100000"])
    try:
        t = tmux(f"{memscope} top -I 250")
        # The workload's row, busy (other work on the machine may be busier:
        # the order is checked among the rows, not the workload's place).
        def own_row(ls):
            return next((r for r in process_rows(ls) if int(r["PID"]) == work.pid), None)

        lines = t.wait_for(lambda ls: own_row(ls) and own_row(ls)["COMMAND"] == "touchmem"
                           and rate(own_row(ls)["FAULTS/s"]) > 1000)
        header = "\n".join(lines[:3])
        assert "memscope top" in header and os.uname().nodename in header
        # damon: where a physical-address kdamond runs (the host's own reclaim here).
        assert re.search(r"sources: perf (damon )?procfs bpf ", header) and "interval: 250 ms" in header
        assert "recording: off" in header
        node_title = next(line for line in lines if line.startswith("NODE"))
        assert node_title.split()[1:4] == ["READ_B/s", "WRITE_B/s", "REMOTE%"]
        # The screen's column names are those top -b prints.
        batch = run([memscope, "top", "-b", "-n", "1", "-I", "100"])
        assert batch.returncode == 0, batch.stderr
        batch_lines = batch.stdout.splitlines()
        assert node_title.split() == next(l for l in batch_lines if l.startswith("NODE")).split()
        proc_title = next(line for line in lines if line.split()[:2] == ["PID", "THR"])
        batch_proc = next(l for l in batch_lines if l.startswith("PID ")).split()
        # With one node the screen leaves out the per-node ALLOC_N<i>/s (ALLOC/s says it all);
        # every column it shows has the batch name, in the batch order.
        assert [c for c in batch_proc if c in proc_title.split()] == proc_title.split(), (proc_title, batch_proc)
        assert len(proc_title.split()) >= len(batch_proc) - 1
        node_rows = [line.split() for line in lines if re.match(r"^(\d+|all)\s", line)]
        assert node_rows and all(r[1:4] == ["n/a", "n/a", "n/a"] for r in node_rows)
        assert rate(node_rows[-1][4]) > 0  # faults/s of the whole system
        assert "sort: FAULTS/s" in status_line(lines)
        rows = process_rows(lines)
        faults = [rate(r["FAULTS/s"]) for r in rows]
        assert faults == sorted(faults, reverse=True)
        assert own_row(lines)["COMMAND"] == "touchmem"

        # s: the next columns; COMMAND is 8 presses after FAULTS/s.
        t.keys("s", "s", "s", "s", "s", "s", "s", "s")
        lines = t.wait_for(lambda ls: "sort: COMMAND" in status_line(ls))
        rows = process_rows(lines)
        names = [r["COMMAND"] for r in rows]
        assert names == sorted(names) and len(rows) >= 2
        # top itself ("memscope") sorts before the workload: the order changed.
        assert names[0] != "touchmem"
        t.keys("s")
        lines = t.wait_for(lambda ls: "sort: PID" in status_line(ls))
        pids = [int(r["PID"]) for r in process_rows(lines)]
        assert pids == sorted(pids)

        # p: the values freeze while frames go on; p again: they move.
        t.keys("p")
        frozen = t.wait_for(lambda ls: "PAUSED" in ls[1])
        time.sleep(1.0)
        assert t.screen() == frozen
        t.keys("p")
        t.wait_for(lambda ls: "PAUSED" not in ls[1] and ls[:-1] != frozen[:-1])

        # ?: the help names why the n/a columns are n/a; any key returns.
        t.keys("?")
        t.wait_for(lambda ls: any("Not measured on this host" in line for line in ls) and
                   any("not available" in line for line in ls))
        # ... and what every column means, by the names the screen shows.
        help_lines = t.wait_for(lambda ls: any("Process columns" in line for line in ls))
        described = {line.split()[0] for line in help_lines if line.startswith("  ") and line.split()}
        for name in node_title.split()[1:] + [c for c in proc_title.split() if not c.startswith("ALLOC_N")]:
            assert name in described or (name == "THR" and "PID" in described), (name, help_lines)
        t.keys("x")
        t.wait_for(lambda ls: any(line.startswith("NODE") for line in ls))

        # + and -: the interval steps.
        t.keys("+")
        t.wait_for(lambda ls: "interval: 500 ms" in ls[1])
        t.keys("-", "-")
        t.wait_for(lambda ls: "interval: 100 ms" in ls[1])

        # f: filter by command.
        t.keys("f", "touchm", "Enter")
        lines = t.wait_for(lambda ls: "filter: touchm" in status_line(ls))
        assert {r["COMMAND"] for r in process_rows(lines)} == {"touchmem"}

        # l: a label, shown as a notice (no recording runs).
        t.keys("l", "phase one", "Enter")
        t.wait_for(lambda ls: 'label "phase one"' in status_line(ls))

        # A resize redraws at the new size at once: lines cut at the new width,
        # the status bar on the new last row.
        node_line = next(line for line in t.screen() if line.startswith("NODE"))
        assert len(node_line) == 142
        t.resize(70, 20)
        def last_row(ls):
            return max(i for i, line in enumerate(ls) if line.strip())

        lines = t.wait_for(lambda ls: any(line.startswith("NODE") and "PGMIGR/s" not in line for line in ls)
                           and last_row(ls) == 19)
        assert all(len(line) <= 70 for line in lines)
        assert any(line.startswith("columns hidden: ") for line in lines)
        t.resize(150, 40)
        t.wait_for(lambda ls: any(line.startswith("NODE") and len(line) == 142 for line in ls)
                   and last_row(ls) == 39)

        t.keys("q")
        assert t.exit_status() == 0
    finally:
        work.kill()
        work.wait()


@needs_tmux
def test_screen_key_t_switches_node_and_tier_rows(memscope, tmux):
    """t: the node panel's rows become this host's memory tiers (memory_tierN/nodelist) and back."""
    tiers = sorted((p.parent.name[len("memory_tier"):] for p in
                    pathlib.Path("/sys/devices/virtual/memory_tiering").glob("memory_tier*/nodelist")), key=int)
    nodes = [p.name[len("node"):] for p in pathlib.Path("/sys/devices/system/node").glob("node[0-9]*")]

    def panel(lines, title):
        for i, line in enumerate(lines):
            if line.split()[:2] == [title, "READ_B/s"]:
                rows = []
                for row in lines[i + 1:]:
                    if not row.split() or row.split()[0] == "all":
                        break
                    rows.append(row.split()[0])
                return rows
        return None

    t = tmux(f"{memscope} top -I 250")
    assert sorted(t.wait_for(lambda ls: panel(ls, "NODE")) and panel(t.screen(), "NODE"), key=int) == sorted(nodes)
    t.keys("t")
    assert t.wait_for(lambda ls: panel(ls, "TIER") == tiers)
    t.keys("t")
    assert t.wait_for(lambda ls: panel(ls, "NODE") is not None)
    t.keys("q")
    assert t.exit_status() == 0


@needs_tmux
def test_screen_shows_lua_columns_and_their_help(memscope, touchmem, tmux, tmp_path):
    (tmp_path / "columns.lua").write_text(COLUMNS_LUA)
    work = subprocess.Popen([touchmem, "32", "--repeat", "100000"])
    try:
        # Tall enough for the help's every section (its Lua columns are last).
        t = tmux(f"{memscope} top -I 250 --lua {tmp_path / 'columns.lua'}", height=56)

        def lua_rows(lines):
            for i, line in enumerate(lines):
                if line.split()[:1] == ["LUA"]:
                    names = line.split()
                    return [dict(zip(names, row.split())) for row in lines[i + 1:]
                            if len(row.split()) == len(names)]
            return []

        lines = t.wait_for(lambda ls: any(r.get("LUA") == "all" and r["t.fault_rate"] != "n/a"
                                          and rate(r["t.fault_rate"]) > 1000 for r in lua_rows(ls)))
        rows = lua_rows(lines)
        assert [r["LUA"] for r in rows][-1] == "all"
        assert all(r["t.read_gbs"] == "n/a" for r in rows)
        t.keys("?")
        help_lines = t.wait_for(lambda ls: any("Lua columns" in line for line in ls))
        text = "\n".join(help_lines)
        assert "t.fault_rate  [faults/s]  page faults per second, from the counter" in text
        assert "t.read_gbs:" in text
        t.keys("x")
        t.keys("q")
        assert t.exit_status() == 0
    finally:
        work.kill()
        work.wait()


@needs_tmux
def test_screen_focus_shows_the_process_threads(memscope, build_dir, tmux):
    threads = build_dir / "contrib" / "bench" / "threads"
    work = subprocess.Popen([str(threads), "2", "0", "0", "20000", "2", "100"], stdout=subprocess.PIPE, text=True)
    try:
        assert work.stdout.readline().startswith("ready")
        t = tmux(f"{memscope} top -I 250 -p {work.pid}")
        lines = t.wait_for(lambda ls: any(f"threads of {work.pid}" in line for line in ls) and
                           len([line for line in ls if re.match(r"^\s*\d+ [A-Z] ", line)]) == 3)
        rows = process_rows(lines)
        assert [int(r["PID"]) for r in rows] == [work.pid]
        thread_lines = [line.split() for line in lines if re.match(r"^\s*\d+ [A-Z] ", line)]
        assert {int(tl[0]) for tl in thread_lines} == {int(x) for x in os.listdir(f"/proc/{work.pid}/task")}
        t.keys("q")
        assert t.exit_status() == 0
    finally:
        work.kill()
        work.wait()


@needs_tmux
def test_dumb_terminal_gets_batch_output(memscope, tmux):
    t = tmux(f"{memscope} top -n 2 -I 100", term="dumb")
    assert t.exit_status() == 0
    text = t.history()
    assert "memscope top: TERM is dumb: batch output instead of the full screen" in text
    assert "top: update=1 " in text and "top: update=2 " in text


@needs_tmux
def test_label_goes_into_a_running_recording(memscope, tmux, tmp_path):
    recording = tmp_path / "rec.ms"
    rec = subprocess.Popen([memscope, "record", "-o", str(recording), "-a", "-I", "100", "--", "sleep", "30"],
                           stderr=subprocess.PIPE, text=True)
    try:
        base = os.environ.get("XDG_RUNTIME_DIR") if os.geteuid() else None
        socket = f"{base}/memscope/{rec.pid}.sock" if base else f"/run/memscope/{rec.pid}.sock"
        deadline = time.monotonic() + 10
        while not os.path.exists(socket):
            assert time.monotonic() < deadline and rec.poll() is None, rec.stderr.read() if rec.poll() else socket
            time.sleep(0.05)
        # Wide enough for every source's name and the temporary directory's long path on one line.
        t = tmux(f"{memscope} top -I 250", width=220, env_socket=socket)
        t.wait_for(lambda ls: f"recording: on file={recording} pid={rec.pid}" in ls[1])
        t.keys("l", "warm phase", "Enter")
        t.wait_for(lambda ls: "ok: label 'warm phase'" in status_line(ls))
        t.keys("q")
        assert t.exit_status() == 0
    finally:
        rec.send_signal(2)
        rec.wait(timeout=20)
    labels = [line for line in recording.read_text().splitlines() if '"label"' in line]
    assert len(labels) == 1 and '"label":"warm phase"' in labels[0], labels


@needs_tmux
def test_screen_replays_a_recording_at_its_pace(memscope, build_dir, tmux, tmp_path):
    """top --input on the full screen: the recorded workload's row, each frame up for its recorded
    interval (not as fast as the file reads), the keys work meanwhile, and q or Ctrl-C ends it."""
    threads = build_dir / "contrib" / "bench" / "threads"
    rec = tmp_path / "memscope.rec"
    # One worker touching 4 MB every 100 ms for 4 s, recorded every 200 ms: about 4 s to replay.
    res = run([memscope, "record", "-a", "-I", "200", "-o", str(rec), "--", str(threads), "1", "0", "0",
               "4000", "4"])
    assert res.returncode == 0, res.stderr
    pid = int(re.search(r"^ready (\d+)", res.stdout, re.M).group(1))

    def up(lines):
        m = re.search(r" - up (\d+)s", lines[0])
        return int(m.group(1)) if m else -1

    t = tmux(f"{memscope} top --input {rec}")
    lines = t.wait_for(lambda ls: any(int(r["PID"]) == pid and rate(r["FAULTS/s"]) > 1000
                                      for r in process_rows(ls)))
    header = "\n".join(lines[:3])
    assert f"replay of {rec}" in header and "interval: 200 ms" in header and "sources: recording" in header
    # The recorded pace: a recorded second takes about a second to show (a file read at once
    # would be over in a few milliseconds).
    t.wait_for(lambda ls: up(ls) >= 1)
    started = time.monotonic()
    t.wait_for(lambda ls: up(ls) >= 2)
    assert time.monotonic() - started >= 0.7
    # p freezes the screen (the replay waits), p again goes on, q ends it.
    t.keys("p")
    frozen = t.wait_for(lambda ls: "PAUSED" in ls[1])
    time.sleep(1.0)
    assert t.screen() == frozen
    t.keys("p")
    t.wait_for(lambda ls: "PAUSED" not in ls[1])
    t.keys("q")
    assert t.exit_status() == 0
    # Ctrl-C ends a replay as q does (the screen restored, exit status 0). Both sessions
    # write their status into the same file: the first one's goes first.
    (tmp_path / "status").unlink()
    t = tmux(f"{memscope} top --input {rec}")
    t.wait_for(lambda ls: any(int(r["PID"]) == pid for r in process_rows(ls)))
    t.keys("C-c")
    assert t.exit_status() == 0
    assert not any("memscope top -" in line for line in t.screen()), "\n".join(t.screen())


def screen_totals(lines):
    """The end-of-replay view: its PID FAULTS ... table as rows by column name."""
    at = next(i for i, l in enumerate(lines) if l.split()[:3] == ["PID", "FAULTS", "PAGES"])
    names = lines[at].split()
    rows = []
    for line in lines[at + 1:]:
        cells = line.split(None, len(names) - 1)
        if len(cells) != len(names) or not cells[0].isdigit():
            break
        rows.append(dict(zip(names, cells)))
    return rows


@needs_tmux
def test_screen_shows_the_run_totals_at_the_end_of_a_replay(memscope, build_dir, tmux, tmp_path):
    """The full screen ends a replay with the run's totals on the screen, until q, and prints
    nothing after the screen closes; batch output (-b) prints the same rows as text."""
    threads = build_dir / "contrib" / "bench" / "threads"
    rec = tmp_path / "memscope.rec"
    # One worker touching 4 MB every 100 ms for 1 s (about 10 x 1,024 faults), recorded every 200 ms.
    res = run([memscope, "record", "-a", "-I", "200", "-o", str(rec), "--", str(threads), "1", "0", "0",
               "1000", "4"])
    assert res.returncode == 0, res.stderr
    pid = int(re.search(r"^ready (\d+)", res.stdout, re.M).group(1))
    pages = int(re.search(r"^pages (\d+)", res.stdout, re.M).group(1))
    batch = run([memscope, "top", "-b", "--input", str(rec)])
    assert batch.returncode == 0, batch.stderr
    head, batch_rows, sums = parse_totals(batch.stdout)
    mine = [r for r in batch_rows if int(r["PID"]) == pid]
    assert len(mine) == 1 and int(mine[0]["FAULTS"]) >= pages, (mine, pages)
    assert sum(int(r["FAULTS"]) for r in batch_rows) + sums["unattributed"] == sums["all"]

    t = tmux(f"{memscope} top --input {rec}")
    lines = t.wait_for(lambda ls: any("end of the replay" in l for l in ls), timeout=30)
    title = next(l for l in lines if l.startswith("end of the replay: totals over"))
    assert f"{head['processes']} process" in title and f"({head['exited']} exited)" in title, title
    assert f"faults: {sums['all']} in all, {sums['unattributed']} attributed to no process" in lines, lines
    assert "q quit" in status_line(lines)
    shown = screen_totals(lines)
    # The rows the screen has room for are batch output's first rows, field by field.
    assert shown and len(shown) <= len(batch_rows)
    assert [r["PID"] for r in shown] == [r["PID"] for r in batch_rows[:len(shown)]]
    for got, want in zip(shown, batch_rows):
        assert got == want, (got, want)
    assert any(int(r["PID"]) == pid for r in shown), shown
    # The view stays until q (the replay is over, nothing moves).
    time.sleep(1.0)
    assert t.screen() == lines
    t.keys("q")
    assert t.exit_status() == 0
    # Nothing printed after the screen closed: the totals were the screen's.
    after = t.history()
    assert "totals:" not in after and "FAULTS PAGES" not in after, after


# --- narrow terminals ---------------------------------------------------------

MAN_TOP = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "man", "memscope-top.1")
CELL = re.compile(r"^(n/a|-?[0-9]+(\.[0-9]+)?[kMGTP]?|[A-Z?])$")


def documented_drop_order(table):
    """The order the man page gives for a table (".B node panel" then the names)."""
    lines = open(MAN_TOP).read().split("\n")
    return lines[lines.index(f".B {table}") + 1].split()


def spans(line):
    return [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", line)]


def table_at(lines, first_title):
    """A table on screen: its title line and the rows under it, each cell checked against its
    column: numbers end where their title ends (right-aligned); a last COMMAND starts where its
    title starts. Returns (titles, rows as dicts)."""
    i = next(i for i, line in enumerate(lines) if line.split()[:1] == [first_title])
    title = spans(lines[i])
    names = [t[2] for t in title]
    rows = []
    for line in lines[i + 1:]:
        cells = spans(line)
        if not cells or not (cells[0][2].isdigit() or cells[0][2] == "all"):
            break
        fixed = len(names) - 1 if names[-1] == "COMMAND" else len(names)
        assert len(cells) >= len(names), (names, line)
        for (start, end, text), (tstart, tend, name) in zip(cells[1:fixed], title[1:fixed]):
            assert end == tend, f"{text!r} is not under {name!r}:\n{lines[i]}\n{line}"
            assert CELL.match(text), f"{name}: {text!r} is not a whole number\n{line}"
        if names[-1] == "COMMAND":
            assert cells[fixed][0] == title[fixed][0], f"the command is not under COMMAND:\n{lines[i]}\n{line}"
            row = dict(zip(names[:fixed], (c[2] for c in cells[:fixed])))
            row["COMMAND"] = line[cells[fixed][0]:].rstrip()
        else:
            assert len(cells) == len(names), (names, line)
            row = dict(zip(names, (c[2] for c in cells)))
        rows.append(row)
    return names, rows


def whole_tables(lines):
    """Both tables on screen and parsed: a capture taken while the screen is being rewritten
    (a torn redraw) is not a layout to judge; the next one is."""
    try:
        return table_at(lines, "NODE"), table_at(lines, "PID")
    except (AssertionError, StopIteration):
        return None


def expected_hidden(title_line, lead, order, width, flex):
    """The columns a terminal `width` wide must leave out: the documented order, each column
    freeing its own width and the space before it, until the rest fits."""
    cols = spans(title_line)
    widths, prev_end = {}, lead
    for start, end, name in cols[1:]:
        if name == "COMMAND":
            break
        widths[name] = end - prev_end - 1
        prev_end = end
    used = prev_end + (1 + flex if flex else 0)
    hidden = []
    per_node = [n for n in reversed(list(widths)) if n.startswith("ALLOC_N")]  # from the last node back
    names = [m for n in order for m in (per_node if n == "ALLOC_N<i>/s" else [n])]
    for name in names:
        if used <= width:
            break
        hidden.append(name)
        used -= 1 + widths[name]
    return hidden


@needs_tmux
def test_narrow_terminal_hides_whole_columns_in_the_documented_order(memscope, touchmem, tmux):
    work = subprocess.Popen([touchmem, "32", "--repeat", "100000"])
    try:
        t = tmux(f"{memscope} top -I 250", width=150, height=100)

        def ready(ls):
            tables = whole_tables(ls)
            return tables is not None and any(r["PID"] == str(work.pid) for r in tables[1][1])

        wide = t.wait_for(ready)
        batch = run([memscope, "top", "-b", "-n", "1", "-I", "100"])
        assert batch.returncode == 0, batch.stderr
        batch_node = next(l for l in batch.stdout.splitlines() if l.startswith("NODE")).split()
        batch_proc = next(l for l in batch.stdout.splitlines() if l.startswith("PID ")).split()
        node_names, node_rows = table_at(wide, "NODE")
        proc_names, proc_rows = table_at(wide, "PID")
        # 150 columns hold every column: none hidden, none cut.
        assert node_names == batch_node
        assert [c for c in batch_proc if c in proc_names] == proc_names and len(proc_names) >= len(batch_proc) - 1
        assert not any("columns hidden" in line for line in wide)
        assert node_rows and proc_rows
        node_title = next(line for line in wide if line.startswith("NODE"))
        proc_title = next(line for line in wide if line.split()[:1] == ["PID"])
        assert all(len(line) <= 150 for line in wide)

        node_order = documented_drop_order("node panel")
        proc_order = documented_drop_order("process table")
        assert sorted(node_order) == sorted(node_names[1:])
        assert sorted(n for n in proc_order if not n.startswith("ALLOC_N")) == sorted(
            n for n in proc_names[1:-1] if not n.startswith("ALLOC_N"))

        for width in (60, 150, 60):
            t.resize(width, 100)
            want_node = expected_hidden(node_title, 5, node_order, width, 0)
            want_proc = expected_hidden(proc_title, 7, proc_order, width, 15)

            def laid_out(ls, width=width, want_node=want_node, want_proc=want_proc):
                tables = whole_tables(ls)
                if tables is None:
                    return False
                names_n, names_p = tables[0][0], tables[1][0]
                return (set(node_names) - set(names_n) == set(want_node) and
                        set(proc_names) - set(names_p) == set(want_proc) and
                        max(len(line) for line in ls) <= width)

            lines = t.wait_for(laid_out)
            names_n, rows_n = table_at(lines, "NODE")
            names_p, rows_p = table_at(lines, "PID")
            assert rows_n and rows_p
            # What stays keeps its order; every title is a whole name of top -b.
            assert names_n == [n for n in node_names if n not in want_node]
            assert names_p == [n for n in proc_names if n not in want_proc]
            hidden_line = [line for line in lines if line.startswith("columns hidden:")]
            if width == 60:
                assert want_node and want_proc, "60 columns must hide something"
                assert hidden_line == [f"columns hidden: {len(want_node)} node, {len(want_proc)} process "
                                       "(? tells which)"], lines[:4]
                # The rows' numbers are those of the columns left: the workload's FAULTS/s is a rate.
                own = next(r for r in rows_p if r["PID"] == str(work.pid))
                assert own["COMMAND"] == "touchmem" and RATE.match(own["FAULTS/s"]), own
            else:
                assert not hidden_line

        # ? lists the same order as the man page, and what is hidden now.
        t.keys("?")
        help_lines = t.wait_for(lambda ls: any(line.startswith("  hidden:") for line in ls))
        text = "\n".join(help_lines)
        block = text[text.index("Narrow terminals"):]
        words = block.split()
        node_help = words[words.index("node:") + 1:words.index("process:")]
        proc_help = words[words.index("process:") + 1:words.index("process:") + 1 + len(proc_order)]
        assert node_help == node_order
        assert [w.rstrip(";") for w in proc_help] == proc_order
        hidden_help = words[words.index("hidden:") + 1:words.index("sort:")]
        assert hidden_help == [f"node:{n}" for n in node_names if n in want_node] + [
            f"process:{n}" for n in proc_names if n in want_proc]
        t.keys("q")
        t.keys("q")
        assert t.exit_status() == 0
    finally:
        work.kill()
        work.wait()


def test_processes_that_exit_idle_leave_no_rows(memscope):
    """20 sleeps: each faults when it starts (a row with faults), sleeps past several updates
    and exits without a fault: no row of zeros for its last interval."""
    top = subprocess.Popen([memscope, "top", "-b", "-I", "250", "-n", "12"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=NO_RECORDING)
    time.sleep(1.5)
    sleeps = [subprocess.Popen(["sleep", "0.8"]) for _ in range(20)]
    for s in sleeps:
        s.wait()
    out, err = top.communicate(timeout=120)
    assert top.returncode == 0, err
    pids = {s.pid for s in sleeps}
    rows = [(b["update"], p) for b in parse_batch(out) for p in b["procs"] if int(p["PID"]) in pids]
    # Seen while alive (the fault of their start), each.
    assert {int(p["PID"]) for _, p in rows if rate(p["FAULTS/s"]) > 0} == pids, rows
    # An exited process (THR 0: no thread left) is shown only with faults in its last interval.
    exited = [p for _, p in rows if p["THR"] == "0"]
    assert all(rate(p["FAULTS/s"]) > 0 for p in exited), exited


# ---- The node panel's memory tier columns (USED_B, FREE_B, PROMO/s, DEMO/s) ----

def meminfo_bytes(key):
    for line in pathlib.Path("/sys/devices/system/node/node0/meminfo").read_text().splitlines():
        parts = line.split()
        if parts[2] == key + ":":
            return int(parts[3]) * 1024
    raise KeyError(key)


def test_batch_node_memory_and_tiers_are_the_kernels(memscope):
    """Each block says the kernel's tiers and settings; node0's USED_B and FREE_B lie between
    the kernel's values read before and after (64 MiB either side for other processes) and
    add up to its MemTotal; PROMO/s and DEMO/s are counted, not n/a."""
    before = {k: meminfo_bytes(k) for k in ("MemUsed", "MemFree")}
    res = run([memscope, "top", "-b", "-n", "3", "-I", "200"], env=NO_RECORDING)
    after = {k: meminfo_bytes(k) for k in ("MemUsed", "MemFree")}
    assert res.returncode == 0, res.stderr
    tier = next(p.parent.name[len("memory_tier"):] for p in
                pathlib.Path("/sys/devices/virtual/memory_tiering").glob("memory_tier*/nodelist")
                if p.read_text().strip() == "0")
    balancing = pathlib.Path("/proc/sys/kernel/numa_balancing").read_text().strip()
    demotion = "on" if pathlib.Path("/sys/kernel/mm/numa/demotion_enabled").read_text().strip() == "true" else "off"
    slack = 64 << 20
    for b in parse_batch(res.stdout):
        assert b["fields"]["tiers"] == f"{tier}: 0; balancing {balancing}; demotion {demotion}"
        node0 = b["nodes"][0]
        assert node0["NODE"] == "0"
        used, free = float(node0["USED_B"]), float(node0["FREE_B"])
        assert min(before["MemUsed"], after["MemUsed"]) - slack <= used <= max(before["MemUsed"], after["MemUsed"]) + slack
        assert min(before["MemFree"], after["MemFree"]) - slack <= free <= max(before["MemFree"], after["MemFree"]) + slack
        assert used + free == meminfo_bytes("MemTotal")
        assert node0["PROMO/s"] != "n/a" and node0["DEMO/s"] != "n/a"


def recorded_cxl(memscope, tmp_path):
    """test_tiers.py's hand-computed CXL replay, recorded with what top shows of tiers and nodes."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from test_tiers import recorded_cxl_replay

    return recorded_cxl_replay(memscope, tmp_path, "tier.promoted_pages,tier.promote_candidates,"
                               "tier.demoted_pages,numa.used_bytes,numa.anon_bytes")


def test_replayed_cxl_recording_shows_promotion_and_demotion_per_node(memscope, tmp_path):
    """A CXL machine's replayed statistics (tests/integration/test_tiers.py, hand-computed
    there), recorded and shown by top --input: rates per second of each frame, bytes as given."""
    rec = recorded_cxl(memscope, tmp_path)
    res = run([memscope, "top", "-b", "--input", str(rec)])
    assert res.returncode == 0, res.stderr
    first, second = parse_batch(res.stdout)
    rows = [{n["NODE"]: (n["USED_B"], n["PROMO/s"], n["DEMO/s"]) for n in b["nodes"]} for b in (first, second)]
    assert rows[0]["0"] == ("0.0", "300.0", "1024.0")       # 300 pages, 1000 + 24 demoted, in 1 s
    assert rows[0]["2"] == ("1073741824.0", "0.0", "0.0")    # 1048576 kB
    assert rows[1]["0"] == ("0.0", "300.0", "0.0")           # 600 pages in 2 s
    assert rows[1]["1"] == ("0.0", "0.0", "256.0")           # 500 + 12 in 2 s
    assert rows[1]["2"][0] == "2147483648.0"
    assert rows[1]["all"] == ("2147483648.0", "300.0", "256.0")
    assert "not in the recording" in first["na"]["FREE_B"]
    # The recorded machine's tiers, from the files the recording kept.
    assert first["fields"]["tiers"] == "4: 0-1, 40: 2-3 (CXL); balancing 2; demotion on"


def test_per_tier_rows_of_a_replayed_cxl_recording(memscope, tmp_path):
    """top --per-tier: one row per memory tier, each the sum of its nodes (tier 4: DDR nodes 0-1,
    tier 40: CXL nodes 2-3), from the same hand-computed replay as above."""
    rec = recorded_cxl(memscope, tmp_path)
    res = run([memscope, "top", "-b", "--per-tier", "--input", str(rec)])
    assert res.returncode == 0, res.stderr
    first, second = parse_batch(res.stdout)
    assert first["nodes"] == [] and second["nodes"] == []
    rows = [{t["TIER"]: (t["USED_B"], t["PROMO/s"], t["DEMO/s"], t["ALLOC/s"]) for t in b["tiers"]}
            for b in (first, second)]
    assert list(rows[0]) == ["4", "40", "all"]
    # 1 s: node0 promoted 300 and demoted 1000 + 24; node2 used 1048576 kB.
    assert rows[0]["4"] == ("0.0", "300.0", "1024.0", "n/a")        # no eBPF series recorded
    assert rows[0]["40"] == ("1073741824.0", "0.0", "0.0", "n/a")
    # 2 s: node0 promoted 600, node1 demoted 500 + 12; node2 used 2097152 kB.
    assert rows[1]["4"] == ("0.0", "300.0", "256.0", "n/a")
    assert rows[1]["40"] == ("2147483648.0", "0.0", "0.0", "n/a")
    assert rows[1]["all"] == ("2147483648.0", "300.0", "256.0", "n/a")


def test_per_tier_rows_live_are_the_kernels_tiers(memscope):
    """On this host each tier's rows hold its nodes (memory_tierN/nodelist): the tier of node 0
    shows node 0's used memory, within what the kernel said before and after."""
    tiers = {p.parent.name[len("memory_tier"):]: p.read_text().strip() for p in
             pathlib.Path("/sys/devices/virtual/memory_tiering").glob("memory_tier*/nodelist")}
    before = meminfo_bytes("MemUsed")
    res = run([memscope, "top", "-b", "--per-tier", "-n", "2", "-I", "200"], env=NO_RECORDING)
    after = meminfo_bytes("MemUsed")
    assert res.returncode == 0, res.stderr
    slack = 64 << 20
    for b in parse_batch(res.stdout):
        assert [t["TIER"] for t in b["tiers"]] == sorted(tiers, key=int) + ["all"]
        row = next(t for t in b["tiers"] if tiers[t["TIER"]] == "0")
        assert min(before, after) - slack <= float(row["USED_B"]) <= max(before, after) + slack


def test_per_tier_without_tiers_says_so(memscope, tmp_path):
    """A machine whose kernel lists no tiers (the Skylake-SP fixture, recorded): a clear error."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from conftest import fixture_env

    replay, rec = tmp_path / "skx.jsonl", tmp_path / "skx.rec"
    replay.write_text(json.dumps({"format": "memscope-replay", "version": 1}) + "\n" + json.dumps(
        {"t": 1.0, "values": {f"node_meminfo/MemFree@node{n}": 1 for n in (0, 1)}}) + "\n")
    res = run([memscope, "record", "-o", str(rec), "--replay", str(replay), "-m", "numa.free_bytes"],
              env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    res = run([memscope, "top", "-b", "--per-tier", "--input", str(rec)])
    assert res.returncode == 1
    assert res.stderr.startswith("memscope top: --per-tier: the recorded machine's kernel listed no memory "
                                 "tiers (devices/virtual/memory_tiering/memory_tierN/nodelist"), res.stderr
