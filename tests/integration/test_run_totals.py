"""Every view of a run covers every process the run had, with its totals, and adds up: a
system-wide recording in which a short-lived python3 allocates 300 MiB (76,800 pages, one
fault each) and exits, read by each report script, a user's script through memscope.series(),
top --input and live --input. Per-process totals plus what no process holds equal the run's
total in each. Also: values of the whole machine measured for a command say so, and gauges
total to their peak, mean and last, never to a value read after the command ended."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, run
from stat_output import counter_output
from live_server import Live

MIB = 300
PAGES = MIB * 256
# The interpreter's own start-up faults (~3,000 here) come on top of the buffer's pages.
STARTUP = 8000
ALLOC = ("import os, sys\nb = bytearray(%d * 1024 * 1024)\n"
         "open(sys.argv[1], 'w').write(str(os.getpid()))\n" % MIB)
THREADS = ("import threading, time\n"
           "ts = [threading.Thread(target=time.sleep, args=(0.6,)) for _ in range(4)]\n"
           "[t.start() for t in ts]\n[t.join() for t in ts]\n")


RECORD_STDERR = {}


def record(memscope, tmp, cmd):
    rec, pidfile = tmp / "run.rec", tmp / "python.pid"
    cmd = [c.replace("PIDFILE", str(pidfile)) for c in cmd]
    res = run([memscope, "record", "-a", "-I", "100", "-o", str(rec), "--", *cmd], timeout=300)
    if res.returncode != 0 and ("eBPF" in res.stderr or "permission" in res.stderr.lower()):
        pytest.skip(f"needs the eBPF probes (root): {res.stderr.strip()}")
    assert res.returncode == 0, res.stderr
    RECORD_STDERR[rec] = res.stderr
    return rec, int(pidfile.read_text())


@pytest.fixture(scope="module")
def started_later(memscope, tmp_path_factory):
    """record -a -- sh: python3 starts after the first frames and exits before the last."""
    return record(memscope, tmp_path_factory.mktemp("later"),
                  ["sh", "-c", 'sleep 0.3; python3 -c "$0" PIDFILE; sleep 0.3', ALLOC])


@pytest.fixture(scope="module")
def the_workload(memscope, tmp_path_factory):
    """record -a -- python3: the workload itself, which exits with the run."""
    return record(memscope, tmp_path_factory.mktemp("itself"), ["python3", "-c", ALLOC, "PIDFILE"])


@pytest.fixture(params=["started_later", "the_workload"])
def recording(request):
    return request.getfixturevalue(request.param)


def report(memscope, *args):
    res = run([memscope, "report", "--format", "json", *[str(a) for a in args]], timeout=300)
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


def table(objs, title):
    found = [o for o in objs if o.get("title", "").startswith(title)]
    assert found, f"no table '{title}' in {[o.get('title') for o in objs]}"
    return found[0]


def nothing_unattributed(rec, unattributed, total):
    """What no process holds: nothing, unless the probes' task table was full (they say so,
    and count those tasks in the totals only). A process left out, or one counted twice (a
    renamed process's old series repeating a value), shows up here."""
    if "task table full" in RECORD_STDERR[rec]:
        assert 0 <= unattributed <= total / 100, (unattributed, total)
    else:
        assert unattributed == 0, (unattributed, total)


def assert_python(faults):
    assert PAGES <= faults <= PAGES + STARTUP, faults


def test_faults_lua_names_the_process_and_its_rows_add_up(memscope, recording):
    rec, pid = recording
    objs = report(memscope, "--lua", "faults.lua:top=5", rec)
    total = next(r for r in table(objs, "Faults")["rows"] if r["faults"] == "all faults")["count"]
    rows = table(objs, "Faults per process")["rows"]
    mine = [r for r in rows if r["pid"] == pid]
    assert len(mine) == 1 and mine[0]["comm"] == "python3", rows
    assert_python(mine[0]["faults"])
    assert mine[0]["lifetime"].startswith("exited at "), mine[0]
    # Five processes, the others in one row, then what no process holds: they add up to the total.
    assert [r["pid"] for r in rows[5:]] == ["others", "-"][:len(rows) - 5], rows
    assert sum(r["faults"] for r in rows) == total
    unattributed = sum(r["faults"] for r in rows if r["pid"] == "-")
    nothing_unattributed(rec, unattributed, total)


def test_summary_lua_lists_every_series_of_the_run(memscope, recording):
    rec, pid = recording
    rows = table(report(memscope, rec), "Series")["rows"]
    total = next(r["total"] for r in rows if r["series"] == "proc.faults" and r["labels"] == "")
    per_pid = [r for r in rows if r["series"] == "proc.faults" and re.fullmatch(r"pid=\d+", r["labels"])]
    mine = [r for r in per_pid if r["labels"] == f"pid={pid}"]
    # Before exec the pid was a shell (its own series); python3's series ended with the process.
    assert any("python3 (pid %d) ended at " % pid in r["note"] for r in mine), mine
    assert_python(sum(r["total"] for r in mine))
    nothing_unattributed(rec, total - sum(r["total"] for r in per_pid), total)
    # A gauge totals to its peak, mean and last, never to a counter's sum.
    threads = next(r for r in rows if r["series"] == "proc.threads" and r["labels"] == "")
    assert threads["total"] == "" and threads["peak"] >= threads["mean"] >= 1, threads


SERIES_SCRIPT = """
script = { description = "every proc.faults series with its total and end" }
function on_end()
  local rows = {}
  for _, s in ipairs(memscope.series("proc.faults")) do
    if s.labels.pid then rows[#rows + 1] = { s.labels.pid, s.comm or "", s.total or -1, s.ended or -1 } end
  end
  memscope.emit { title = "series", columns = { "pid", "comm", "total", "ended" }, rows = rows }
end
"""


def test_memscope_series_lists_processes_that_exited(memscope, recording, tmp_path):
    rec, pid = recording
    script = tmp_path / "series.lua"
    script.write_text(SERIES_SCRIPT)
    objs = report(memscope, "--lua", script, rec)
    mine = [r for r in table(objs, "series")["rows"] if r["pid"] == pid and r["comm"] == "python3"]
    assert len(mine) == 1, table(objs, "series")["rows"]
    assert_python(mine[0]["total"])
    assert mine[0]["ended"] > 0


def test_every_report_script_with_pid_rows_has_the_process(memscope, started_later):
    rec, pid = started_later
    for script in sorted((ROOT / "lua").glob("*.lua")):
        objs = report(memscope, "--lua", script.name, rec)
        for t in objs:
            if "pid" in t.get("columns", []):
                assert pid in [r["pid"] for r in t["rows"]], (script.name, t["title"])


def parse_top_totals(text):
    lines = text[text.index("totals: "):].strip().split("\n")
    names = lines[1].split()
    rows, sums = [], {}
    for line in lines[2:]:
        if line.startswith(("unattributed ", "all ")):
            key, _, value = line.partition(" FAULTS=")
            sums[key] = int(value)
        else:
            rows.append(dict(zip(names, line.split(None, len(names) - 1))))
    return rows, sums


def test_top_input_ends_with_every_process_and_adds_up(memscope, recording):
    rec, pid = recording
    res = run([memscope, "top", "-b", "--input", str(rec)], timeout=300)
    assert res.returncode == 0, res.stderr
    rows, sums = parse_top_totals(res.stdout)
    mine = [r for r in rows if int(r["PID"]) == pid]
    assert len(mine) == 1 and mine[0]["COMMAND"] == "python3", mine
    # top's row is the pid: its shell before exec too (a few hundred faults).
    assert_python(int(mine[0]["FAULTS"]))
    assert mine[0]["ENDED_S"] != "-"
    assert sum(int(r["FAULTS"]) for r in rows) + sums["unattributed"] == sums["all"]
    nothing_unattributed(rec, sums["unattributed"], sums["all"])


# The page's reader of recordings (contrib/web/recording.js), run by node on the bytes
# live --input serves: the batches the page draws, for a file served or dropped alike.
PAGE_READER = """
const rec = require(process.argv[1]);
let text = "";
process.stdin.on("data", (d) => { text += d; });
process.stdin.on("end", () => process.stdout.write(JSON.stringify(rec.parse(text, "served.rec"))));
"""


def page_batches(served):
    if not shutil.which("node"):
        pytest.skip("needs node to run the page's reader of recordings")
    res = subprocess.run(["node", "-e", PAGE_READER, str(ROOT / "contrib" / "web" / "recording.js")],
                         input=served, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["batches"]


def test_live_input_serves_every_process_and_adds_up(memscope, recording):
    rec, pid = recording
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--no-ui", "--input", str(rec)])
    try:
        deadline = time.time() + 120
        while not live.session()["ended"]:
            assert time.time() < deadline, "the replay never ended"
            time.sleep(0.1)
        status, _, text = live.get("/api/totals")
        assert status == 200, text
        totals = json.loads(text)
        status, _, served = live.get("/api/recording")
        assert status == 200, served
    finally:
        live.stop()
    # The file as written, which the page reads itself.
    assert served == rec.read_text()
    # The page's process tables hold the process in each period it ran, its last included.
    tables = [b["p"] for b in page_batches(served) if "p" in b]
    assert tables and all(t["n"][0] == "proc.faults" for t in tables)
    streamed = sum(r[2] for t in tables for r in t["r"] if r[0] == pid and r[2] is not None)
    assert totals["ended"]
    mine = [p for p in totals["processes"] if p["pid"] == pid]
    assert len(mine) == 1 and mine[0]["comm"] == "python3", mine
    assert_python(mine[0]["totals"]["proc.faults"])
    assert streamed == mine[0]["totals"]["proc.faults"], (streamed, mine)
    assert mine[0]["ended_s"] is not None and mine[0]["ended_s"] > mine[0]["first_s"]
    listed = sum(p["totals"].get("proc.faults", 0) for p in totals["processes"])
    assert listed + totals["unattributed"]["proc.faults"] == totals["all"]["proc.faults"]
    nothing_unattributed(rec, totals["unattributed"]["proc.faults"], totals["all"]["proc.faults"])


# ---- scope: values of the whole machine, measured for a command ----

def test_stat_marks_whole_machine_values_of_a_command(memscope):
    cmd = ["stat", "-m", "numa.hit", "-e", "page-faults"]
    text = run([memscope, *cmd, "--", "sleep", "0.2"])
    assert text.returncode == 0, text.stderr
    lines = counter_output(text.stderr).splitlines()
    assert any(re.search(r"pages\s+numa\.hit  \*$", l) for l in lines), counter_output(text.stderr)
    assert any(re.search(r"\d\s+page-faults$", l) for l in lines), counter_output(text.stderr)
    assert " * counted for the whole machine" in counter_output(text.stderr)
    csv = counter_output(run([memscope, *cmd, "-x,", "--", "sleep", "0.2"]).stderr).splitlines()
    hit = next(l for l in csv if ",numa.hit," in l).split(",")
    faults = next(l for l in csv if ",page-faults," in l).split(",")
    # perf's fields, then memscope's one: only where there is something to say.
    assert hit[-1] == "whole-system" and len(faults) == len(hit) - 1, (hit, faults)
    objs = [json.loads(l) for l in counter_output(run([memscope, *cmd, "--json", "--", "sleep", "0.2"]).stderr).splitlines()]
    assert next(o for o in objs if o["event"] == "numa.hit")["whole-system"] is True
    assert "whole-system" not in next(o for o in objs if o["event"] == "page-faults")
    # -a: the target is the whole machine; nothing to say.
    wide = counter_output(run([memscope, *cmd, "-a", "--", "sleep", "0.2"]).stderr)
    assert "*" not in wide, wide


def test_recordings_keep_the_scope(memscope, tmp_path):
    for args, marked in ((["--", "sleep", "0.2"], True), (["-a", "--", "sleep", "0.2"], False)):
        rec = tmp_path / ("task.rec" if marked else "wide.rec")
        res = run([memscope, "record", "-o", str(rec), "-m", "numa.hit", "-e", "page-faults", *args])
        assert res.returncode == 0, res.stderr
        out = counter_output(run([memscope, "stat", "--input", str(rec)]).stderr)
        assert ("numa.hit  *" in out) == marked, out
        rows = table(report(memscope, rec), "Series")["rows"]
        hit = next(r for r in rows if r["series"] == "numastat/numa_hit")
        assert ("whole machine" in hit["note"]) == marked, hit
        faults = next(r for r in rows if r["series"] == "page-faults")
        assert "whole machine" not in faults["note"]


# ---- gauges ----

def frames_of(rec, name):
    """Per frame, the value of the series `name` without pid (by hand, from the file)."""
    lines = rec.read_text().splitlines()
    table = {i: s for i, s in enumerate(json.loads(lines[0])["series"])}
    values = []
    for line in lines[1:]:
        o = json.loads(line)
        for s in o.get("series", []):
            table[s["i"]] = s
        if "v" in o:
            at = [i for i, s in table.items() if s["name"] == name and "pid" not in s and "tid" not in s]
            if at and o["v"][at[0]] is not None:
                values.append(o["v"][at[0]])
    return values


def test_gauge_totals_are_peak_mean_and_last(memscope, started_later):
    rec, _ = started_later
    values = frames_of(rec, "proc.threads")
    assert len(values) >= 5
    peak, mean, last = max(values), sum(values) / len(values), values[-1]
    out = counter_output(run([memscope, "stat", "--input", str(rec)]).stderr)
    line = next(l for l in out.splitlines() if l.rstrip().split("  (")[0].endswith(" proc.threads"))
    assert re.search(r"^\s*([\d,]+)\s+proc\.threads", line).group(1).replace(",", "") == str(peak), line
    m = re.search(r"\(peak of (\d+) samples; mean ([\d,.]+), last ([\d,]+)\)$", line)
    assert m and int(m.group(1)) == len(values), line
    # Shown with two decimals (whole numbers from 100 on).
    assert abs(float(m.group(2).replace(",", "")) - mean) <= (0.5 if mean >= 100 else 0.005), (line, mean)
    assert int(m.group(3).replace(",", "")) == last, line
    csv = counter_output(run([memscope, "stat", "--input", str(rec), "-x,"]).stderr)
    fields = next(l for l in csv.splitlines() if ",proc.threads," in l).split(",")
    assert fields[0] == str(peak) and fields[-1] == "peak", fields


def test_stat_samples_gauges_while_the_command_runs(memscope):
    """Without -I a gauge is not read once after the command exited (0 threads) but while it
    ran: 5 threads at the peak."""
    res = run([memscope, "stat", "-e", "proc.faults,proc.threads", "--", "python3", "-c", THREADS])
    if res.returncode != 0 and "eBPF" in res.stderr:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stderr
    line = next(l for l in counter_output(res.stderr).splitlines() if " proc.threads" in l)
    assert re.search(r"^\s*5\s+proc\.threads  \(peak of \d+ samples; mean [\d.]+, last 0\)$", line), line


def test_top_says_its_node_panel_is_the_whole_machine_for_one_pid(memscope):
    pid = os.getpid()
    res = run([memscope, "top", "-b", "-n", "1", "-I", "100", "-p", str(pid)])
    assert res.returncode == 0, res.stderr
    assert f"scope: nodes: the whole machine, not only pid {pid}\n" in res.stdout, res.stdout[:600]
    plain = run([memscope, "top", "-b", "-n", "1", "-I", "100"])
    assert plain.returncode == 0 and "scope:" not in plain.stdout
