"""Short-lived processes are written compactly (format 5, docs/recording-format.md "Brief
series"): a process series whose whole life is one frame is a "brief" record with its value,
taking no place in the frame lines, and a retired place is free again at once. Nothing a report
shows changes: a system-wide recording at -I 10 while this test's python3 runs /bin/true 80
times, one after another, read by stat --input, report (summary.lua, faults.lua), top -b
--input and the page's reader gives field by field what the same file written the version 4
way (each brief series given a place, its value in its frame, a retire record after it) gives,
and what the recording run's own faults.lua printed; the brief series are counted in the end
record and the file is smaller."""
import json
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, run
from live_server import Live

CHILDREN = 80
SPAWN = ("import subprocess, sys, time\n"
         "pids = []\n"
         "for _ in range(%d):\n"
         "    p = subprocess.Popen(['/bin/true'])\n"
         "    p.wait()\n"
         "    pids.append(p.pid)\n"
         "    time.sleep(0.01)\n"
         "open(sys.argv[1], 'w').write(' '.join(map(str, pids)))\n" % CHILDREN)
FAULTS = "faults.lua:top=1000000"


@pytest.fixture(scope="module")
def churn(memscope, tmp_path_factory):
    """(the recording, this test's children's pids, the recording run's own faults.lua report)"""
    tmp = tmp_path_factory.mktemp("compact")
    rec, pidfile, script = tmp / "churn.rec", tmp / "children.pid", tmp / "spawn.py"
    script.write_text(SPAWN)
    res = run([memscope, "record", "-a", "-I", "10", "-e", "proc.faults", "--lua", FAULTS, "-o", str(rec),
               "--", "python3", str(script), str(pidfile)], timeout=300)
    if res.returncode != 0 and ("eBPF" in res.stderr or "permission" in res.stderr.lower()):
        pytest.skip(f"needs the eBPF probes (root): {res.stderr.strip()}")
    assert res.returncode == 0, res.stderr
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == CHILDREN
    return rec, pids, res.stdout + res.stderr


def dumps(record):
    return json.dumps(record, separators=(",", ":"))   # as memscope writes: no spaces


def to_version_4(lines):
    """The recording as format 4 wrote it: each brief series given a place (a retired index,
    else the table's end) before its frame, its value in that frame, a retire record after."""
    header = json.loads(lines[0])
    header["version"] = 4
    retired = [bool(s.get("retired")) for s in header["series"]]
    out, brief = [dumps(header)], []
    for line in lines[1:]:
        r = json.loads(line)
        if "brief" in r:
            entries = []
            for e in r["brief"]:
                e = dict(e)
                value = e.pop("v")
                e = {"name": e.pop("name"), "kind": e.pop("kind", "counter"), **e}   # format 4 wrote the kind
                i = next((k for k, gone in enumerate(retired) if gone), len(retired))
                if i == len(retired):
                    retired.append(False)
                retired[i] = False
                brief.append((i, value))
                entries.append({"i": i, **e})
            out.append(dumps({"series": entries, "t": r["t"]}))
            continue
        if "series" in r:
            for e in r["series"]:
                if e["i"] == len(retired):
                    retired.append(False)
                retired[e["i"]] = False
        elif "retire" in r:
            for i in r["retire"]:
                retired[i] = True
        elif "v" in r:
            r["v"] += [None] * (len(retired) - len(r["v"]))
            for i, value in brief:
                r["v"][i] = value
            out.append(dumps(r))
            if brief:
                out.append(dumps({"retire": [i for i, _ in brief], "t": r["t"]}))
                for i, _ in brief:
                    retired[i] = True
            brief = []
            continue
        elif "end" in r:
            del r["brief_series"]
            out.append(dumps(r))
            continue
        out.append(line)
    return "".join(l + "\n" for l in out)


@pytest.fixture(scope="module")
def old_form(churn):
    rec, _, _ = churn
    old = rec.with_name("old.rec")
    old.write_text(to_version_4(rec.read_text().splitlines()))
    return old


def records(rec):
    return [json.loads(l) for l in rec.read_text().splitlines()]


def test_brief_series_are_counted_and_each_child_is_in_the_file(churn):
    rec, pids, _ = churn
    lines = records(rec)
    assert lines[0]["version"] == 5
    brief = [e for r in lines if "brief" in r for e in r["brief"]]
    placed = [s for r in lines if "series" in r and "t" in r for s in r["series"]]
    # The end record counts the brief series, and they are all there.
    assert lines[-1]["brief_series"] == len(brief) > 0
    # Only processes' or threads' series are brief, each with its one value.
    assert all(("pid" in e or "tid" in e) and isinstance(e["v"], int) and e["v"] >= 0 for e in brief)
    # Every child of this test is in the file: a brief series or one with a place (it lived
    # across a frame's end), never lost. Many were brief: each lived about a millisecond.
    seen = {e["pid"] for e in brief + placed if e["name"] == "proc.faults" and "pid" in e}
    assert set(pids) <= seen, sorted(set(pids) - seen)
    mine_brief = {e["pid"] for e in brief if e.get("pid") in pids}
    assert len(mine_brief) >= CHILDREN // 10, (len(mine_brief), CHILDREN)
    # Only processes' or threads' series are brief, with the kind left out for counters.
    assert all("kind" not in e or e["kind"] == "gauge" for e in brief)


def test_a_new_series_takes_the_lowest_free_place(churn):
    """Frame lines are as long as the most series alive at once: a retire record frees its
    places for the next frame, and a series record takes the lowest free one, or a new place
    at the end only when none is free (format 4 kept memscope's own indices, free only once
    every consumer of the run was done with them)."""
    rec, _, _ = churn
    lines = records(rec)
    free = {i for i, s in enumerate(lines[0]["series"]) if s.get("retired")}
    width = len(lines[0]["series"])
    for r in lines[1:]:
        if "series" in r:
            for s in r["series"]:
                if free:
                    assert s["i"] == min(free), (s, sorted(free))
                    free.remove(s["i"])
                else:
                    assert s["i"] == width, (s, width)
                    width += 1
        elif "retire" in r:
            free |= set(r["retire"])
        elif "v" in r:
            # Trailing nulls are left out: a line ends at its last value.
            assert len(r["v"]) <= width and (not r["v"] or r["v"][-1] is not None)
            assert all(r["v"][i] is None for i in free if i < len(r["v"]))


def test_the_file_is_smaller_than_version_4s(churn, old_form):
    """The same series written format 4's way (each brief series a series entry, a value in
    its frame and a retire entry; places reused at once, as format 5 does, so this is the
    least format 4 could have written) take more bytes: "i", the kind, a place in the frame
    and a retire entry against "v", 20 to 60 bytes a brief series (less when many share a
    frame: format 4's records for them are shared too)."""
    rec, _, _ = churn
    new, old = rec.stat().st_size, old_form.stat().st_size
    briefs = records(rec)[-1]["brief_series"]
    assert old - new >= 15 * briefs, (old, new, briefs)


def same_but_name(memscope, args, rec, old):
    got = run([memscope, *args, str(rec)], timeout=300)
    want = run([memscope, *args, str(old)], timeout=300)
    assert got.returncode == 0 and want.returncode == 0, (got.stderr, want.stderr)
    return got.stdout.replace(rec.name, "R").splitlines(), want.stdout.replace(old.name, "R").splitlines()


def test_stat_input_reads_the_same_as_version_4(memscope, churn, old_form):
    rec, _, _ = churn
    for args in (["stat", "--input"], ["stat", "-x,", "--input"]):
        got = run([memscope, *args, str(rec)], timeout=300)
        want = run([memscope, *args, str(old_form)], timeout=300)
        assert got.returncode == 0 and want.returncode == 0, (got.stderr, want.stderr)
        strip = lambda text, name: [l for l in text.replace(name, "R").splitlines() if "seconds time" not in l]  # noqa: E731
        assert strip(got.stderr + got.stdout, rec.name) == strip(want.stderr + want.stdout, old_form.name)
        assert any("proc.faults" in l for l in strip(got.stderr + got.stdout, rec.name))


def test_report_rows_are_the_same_as_version_4(memscope, churn, old_form):
    rec, pids, _ = churn
    for script in ("summary.lua", FAULTS):
        got, want = same_but_name(memscope, ["report", "--format", "json", "--lua", script], rec, old_form)
        got = [json.loads(l) for l in got if l.startswith("{")]
        want = [json.loads(l) for l in want if l.startswith("{")]
        assert got and len(got) == len(want)
        for a, b in zip(got, want):
            assert a.get("title") == b.get("title")
            assert a.get("rows") == b.get("rows"), a.get("title")
    # The children are rows of faults.lua (the last script read), each with faults of its own.
    rows = next(o for o in got if o.get("title", "").startswith("Faults per process"))["rows"]
    # (A child's row before its exec, under python3's name, may hold no fault: by pid.)
    faults = {}
    for r in rows:
        if r["pid"] in pids:
            faults[r["pid"]] = faults.get(r["pid"], 0) + r["faults"]
    assert len(faults) >= CHILDREN * 3 // 4 and all(f > 0 for f in faults.values()), (faults, CHILDREN)


def test_top_input_reads_the_same_as_version_4(memscope, churn, old_form):
    rec, pids, _ = churn
    got, want = same_but_name(memscope, ["top", "-b", "--input"], rec, old_form)
    assert got == want
    assert any(l.split()[0] == str(pids[0]) for l in got if l.split()), "the first child is a row of top"


def test_the_runs_own_report_is_the_files(memscope, churn):
    """faults.lua as the recording run printed it, and as report prints it from the file:
    every process row the same, field by field."""
    rec, pids, printed = churn
    res = run([memscope, "report", "--lua", FAULTS, str(rec)], timeout=300)
    assert res.returncode == 0, res.stderr

    def rows(text):
        at = text.index("Faults per process")
        return [l.split() for l in text[at:].splitlines()[1:] if l.strip() and l.split()[0].isdigit()]

    live, replayed = rows(printed), rows(res.stdout)
    assert live and live == replayed
    assert sum(1 for r in live if int(r[0]) in pids) >= CHILDREN * 3 // 4


def served_totals(memscope, path):
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--no-ui", "--input", str(path)])
    try:
        deadline = time.time() + 120
        while not live.session()["ended"]:
            assert time.time() < deadline, "the replay never ended"
            time.sleep(0.1)
        status, _, text = live.get("/api/totals")
        assert status == 200, text
    finally:
        live.stop()
    return json.loads(text)


def test_live_input_totals_are_the_same_as_version_4(memscope, churn, old_form):
    rec, pids, _ = churn
    got, want = served_totals(memscope, rec), served_totals(memscope, old_form)
    assert got.keys() == want.keys()
    for key in got:
        assert got[key] == want[key], key
    # Every child is a process of the totals, with its faults; they add up to the run's.
    faults = {}
    for p in got["processes"]:
        if p["pid"] in pids:
            faults[p["pid"]] = faults.get(p["pid"], 0) + p["totals"].get("proc.faults", 0)
    assert len(faults) >= CHILDREN * 3 // 4 and all(f > 0 for f in faults.values()), faults
    listed = sum(p["totals"].get("proc.faults", 0) for p in got["processes"])
    assert listed + got["unattributed"]["proc.faults"] == got["all"]["proc.faults"]


PAGE_READER = """
const rec = require(process.argv[1]);
const text = require("fs").readFileSync(process.argv[2], "utf8");
process.stdout.write(JSON.stringify(rec.parse(text, "r.rec")));
"""


def page(path):
    res = subprocess.run(["node", "-e", PAGE_READER, str(ROOT / "contrib" / "web" / "recording.js"), str(path)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_page_reads_the_same_as_version_4(churn, old_form):
    if not shutil.which("node"):
        pytest.skip("needs node to run the page's reader of recordings")
    rec, pids, _ = churn
    got, want = page(rec), page(old_form)
    assert got["batches"] == want["batches"]
    assert got["session"]["columns"] == want["session"]["columns"]
    # The process tables count the children (each period lists its 30 busiest processes and
    # counts all it had: each child is counted in a period).
    assert sum(b["p"]["all"] for b in got["batches"] if "p" in b) >= CHILDREN
    # A brief record in a version 4 file is refused with its line.
    lines = rec.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith('{"brief"'))
    lines[0] = lines[0].replace('"version":5', '"version":4')
    bad = rec.with_name("v4-with-brief.rec")
    bad.write_text("\n".join(lines) + "\n")
    res = subprocess.run(["node", "-e", PAGE_READER, str(ROOT / "contrib" / "web" / "recording.js"), str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and f"r.rec:{at + 1}: a \"brief\" series record in a version 4 recording" in res.stderr


def test_a_brief_record_in_a_version_4_file_is_refused(memscope, churn):
    rec, _, _ = churn
    lines = rec.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith('{"brief"'))
    lines[0] = lines[0].replace('"version":5', '"version":4')
    bad = rec.with_name("v4-with-brief.rec")
    bad.write_text("\n".join(lines) + "\n")
    res = run([memscope, "stat", "--input", str(bad)], timeout=300)
    assert res.returncode != 0
    assert (f"{bad}:{at + 1}: a \"brief\" series record in a version 4 recording; they exist from version 5 on"
            in res.stderr), res.stderr
