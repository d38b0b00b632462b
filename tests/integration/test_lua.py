"""Lua scripts as a user runs them: the built-in reports over recordings made here and over
replays of fixture machines (Kunpeng 920, Westmere-EP, Skylake-SP, EPYC), checked value by value;
a user's own script from a temporary directory; and scripts that fail, each disabled alone."""
import csv
import json
import os
import subprocess
import time

import pytest

from conftest import fixture_env, run
from stat_output import counter_output

MB = 100
PAGES = MB * 256


def report(memscope, *args, env=None, cwd=None):
    """Run memscope report --format json; return (result, tables by title prefix, notes)."""
    res = run([memscope, "report", "--format", "json", *[str(a) for a in args]], env=env, cwd=cwd)
    tables, notes = {}, []
    for line in res.stdout.splitlines():
        obj = json.loads(line)
        if "title" in obj:
            tables[(obj["script"], obj["title"])] = obj
        else:
            notes.append(obj["note"])
    return res, tables, notes


def table(tables, script, title_start):
    for (s, title), t in tables.items():
        if s == script and title.startswith(title_start):
            return t
    pytest.fail(f"{script}: no table titled '{title_start}...' in {list(tables)}")


def row(t, key_column, key):
    for r in t["rows"]:
        if r[key_column] == key:
            return r
    pytest.fail(f"no row {key_column}={key!r} in {t['title']}: {t['rows']}")


def record(memscope, path, events, cmd, extra=()):
    res = run([memscope, "record", "-o", str(path), "-I", "20", "-e", events, *extra, "--", *[str(c) for c in cmd]])
    assert res.returncode == 0, res.stderr
    return path


@pytest.fixture(scope="module")
def touch_recording(memscope, touchmem, tmp_path_factory):
    # The workload sleeps after touching its memory so the recording holds frames past the
    # 4th at any machine speed (a script below fails on frame 3); sleeping adds no faults.
    path = tmp_path_factory.mktemp("rec") / "touch.rec"
    record(memscope, path, "page-faults,proc.faults,proc.faults_user,proc.faults_kernel,"
           "proc.faults_read,proc.faults_write,proc.pages_alloc", [touchmem, MB, "--sleep-ms", 200])
    frames = sum(1 for line in path.read_text().splitlines() if line.startswith('{"t":'))
    assert frames >= 5, f"{path}: {frames} frames"
    return path


def summary_totals(memscope, recording):
    res, tables, _ = report(memscope, recording)
    assert res.returncode == 0, res.stderr
    totals = {}
    for r in table(tables, "summary.lua", "Series")["rows"]:
        totals[(r["series"], r["labels"])] = r["total"]
    return totals


def per_task(labels):
    """A per-process or per-thread series: it repeats part of the series without these labels."""
    return any(part.startswith(("pid=", "tid=")) for part in labels.split(","))


def total_of(totals, name):
    """A series' total over all its labels but pid and tid (those series repeat the others)."""
    values = [v for (n, labels), v in totals.items() if n == name and not per_task(labels)]
    assert values, f"no series {name} in {sorted(totals)}"
    return sum(values)


# ---- recordings made here ----

def test_faults_on_a_recording_made_here(memscope, touch_recording):
    totals = summary_totals(memscope, touch_recording)
    res, tables, notes = report(memscope, "--lua", "faults.lua", touch_recording)
    assert res.returncode == 0, res.stderr
    faults = table(tables, "faults.lua", "Faults")
    total = row(faults, "faults", "all faults")
    # touchmem writes one byte per 4 KiB page of 100 MB: 25,600 faults plus start-up.
    assert PAGES <= total["count"] <= PAGES * 1.02, total
    assert total["source"].startswith("eBPF fault probes")
    # The script's numbers are the recording's, to the fault.
    assert total["count"] == totals[("proc.faults", "")]
    user, kernel = row(faults, "faults", "user mode"), row(faults, "faults", "kernel mode")
    assert user["count"] + kernel["count"] == total["count"]
    assert row(faults, "faults", "writes")["count"] >= PAGES
    assert user["count"] == totals[("proc.faults_user", "")]
    pages = table(tables, "faults.lua", "Pages allocated per node")
    assert sum(r["pages"] for r in pages["rows"]) == total_of(totals, "proc.pages_alloc")
    assert pages["rows"][0]["node"] == 0
    assert abs(pages["rows"][0]["MiB"] - pages["rows"][0]["pages"] * 4096 / 1048576) < 1e-9
    rate = table(tables, "faults.lua", "Fault rate")["rows"][0]
    assert rate["peak/s"] >= rate["avg/s"] > 0
    # The recording has the process's own series (format 2): the one process made every fault.
    per_process = table(tables, "faults.lua", "Faults per process")["rows"]
    assert len(per_process) == 1 and per_process[0]["faults"] == total["count"], per_process
    assert per_process[0]["share"] == 1.0


def test_faults_text_names_its_sources(memscope, touch_recording):
    res = run([memscope, "report", "--lua", "faults", str(touch_recording)])
    assert res.returncode == 0, res.stderr
    assert "faults.lua: page faults and page placement (recording " in res.stdout
    assert "eBPF fault probes (the target's processes)" in res.stdout
    assert "Pages allocated per node (eBPF page allocations" in res.stdout


def test_faults_live_with_stat(memscope, touchmem):
    """stat --lua: the script sees the same frames as stat's own totals."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "proc.faults", "--lua", "faults.lua", "--", touchmem, str(MB)])
    assert res.returncode == 0, res.stderr
    stat_faults = None
    for line in counter_output(res.stderr).splitlines():
        fields = line.split(",")       # time,scope,event,value,unit,coverage
        if len(fields) > 3 and fields[2] == "proc.faults":
            stat_faults = float(fields[3])
    assert stat_faults is not None, counter_output(res.stderr)
    # The script's report stays on standard output: it is not stat's counts.
    lua_rows = [l for l in res.stdout.splitlines() if l.startswith("all faults,")]
    assert lua_rows, res.stdout
    assert int(lua_rows[0].split(",")[1]) == stat_faults
    assert PAGES <= stat_faults <= PAGES * 1.02


def test_faults_live_with_record(memscope, touchmem, tmp_path):
    """record --lua: the script runs on the frames being recorded, and the file
    reports the same numbers afterwards."""
    rec = tmp_path / "live.rec"
    res = run([memscope, "record", "-o", str(rec), "-e", "proc.faults", "--lua", "faults.lua", "--",
               touchmem, str(MB)])
    assert res.returncode == 0, res.stderr
    live = [l for l in res.stdout.splitlines() if l.strip().startswith("all faults")]
    assert live, res.stdout
    live_faults = int(live[0].split()[2])
    assert PAGES <= live_faults <= PAGES * 1.02
    later = run([memscope, "report", "--lua", "faults.lua", str(rec)])
    assert later.returncode == 0, later.stderr
    again = [l for l in later.stdout.splitlines() if l.strip().startswith("all faults")]
    assert int(again[0].split()[2]) == live_faults


PER_PAGE = """
script = { description = "faults per allocated page" }
memscope.metric {
  name = "faults.per_page", unit = "faults/page",
  inputs = { "proc.faults", "proc.pages_alloc" },
  compute = function(v, scope)
    local p = v["proc.pages_alloc"]
    if p and p > 0 and v["proc.faults"] then return v["proc.faults"] / p end
  end,
}
"""


def test_lua_metric_is_a_stat_metric(memscope, touchmem, tmp_path):
    """A metric a script defines is asked for with -m like a catalog one; its inputs
    (eBPF series here) are measured without being named."""
    script = tmp_path / "per_page.lua"
    script.write_text(PER_PAGE)
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "faults.per_page,kernel.faults", "--lua", str(script),
               "--", touchmem, str(MB)])
    assert res.returncode == 0, res.stderr
    rows = {(f[1], f[2]): f[3] for f in (l.split(",") for l in counter_output(res.stderr).splitlines()) if f[0] == "total"}
    # One fault per page touched, each page one allocation: about 1.
    assert abs(float(rows[("total", "faults.per_page")]) - 1.0) <= 0.03, rows
    assert PAGES <= float(rows[("total", "kernel.faults")]) <= PAGES * 1.02
    # Inputs are measured, not shown.
    assert not any(event.startswith("proc.") for _, event in rows)
    # Per node: the eBPF faults are not split by node, so the script has no value there.
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "faults.per_page", "--lua", str(script), "--per-node",
               "--", touchmem, "16"])
    assert res.returncode == 0, res.stderr
    assert "total,node0,faults.per_page,<not counted>,faults/page,," in counter_output(res.stderr).splitlines()
    # With -I the totals line has no single frame to compute a Lua metric from: n/a, not a number.
    res = run([memscope, "stat", "-x,", "--self-describing", "-I", "50", "-m", "faults.per_page", "--lua", str(script), "--",
               touchmem, "16", "--sleep-ms", "120"])
    assert res.returncode == 0, res.stderr
    total = [l for l in counter_output(res.stderr).splitlines() if l.startswith("total,total,faults.per_page,")]
    assert total == ["total,total,faults.per_page,n/a,faults/page,,"], total
    per_frame = [float(l.split(",")[3]) for l in counter_output(res.stderr).splitlines()
                 if ",faults.per_page," in l and not l.startswith("total") and "<" not in l]
    assert per_frame and abs(per_frame[0] - 1.0) <= 0.05, per_frame


def test_lua_metric_through_record_and_report(memscope, touchmem, tmp_path):
    """record -m with a script's metric records its inputs; a report with the same
    script computes it again from the file."""
    script = tmp_path / "per_page.lua"
    script.write_text(PER_PAGE)
    reader = tmp_path / "print_per_page.lua"
    reader.write_text('local last\n'
                      'function on_frame(f) local v = memscope.value("faults.per_page") if v then last = v end end\n'
                      'function on_end(run) print(string.format("faults.per_page %.4f", last or -1)) end\n')
    rec = tmp_path / "per_page.rec"
    res = run([memscope, "record", "-o", str(rec), "-m", "faults.per_page", "--lua", str(script), "--",
               touchmem, str(MB)])
    assert res.returncode == 0, res.stderr
    res = run([memscope, "report", "--lua", str(script), "--lua", str(reader), str(rec)])
    assert res.returncode == 0, res.stderr
    value = float(res.stdout.split("faults.per_page ")[1].split()[0])
    assert abs(value - 1.0) <= 0.03, res.stdout


def test_numa_balance_on_a_recording_made_here(memscope, touchmem, tmp_path):
    rec = record(memscope, tmp_path / "numa.rec", "proc.migrations,proc.numa_task_moves", [touchmem, 8],
                 extra=["-m", "numa.hint_faults,numa.hint_faults_local,kernel.pages_migrated"])
    totals = summary_totals(memscope, rec)
    res, tables, notes = report(memscope, "--lua", "numa_balance.lua", rec)
    assert res.returncode == 0, res.stderr
    t = table(tables, "numa_balance.lua", "Migrations and NUMA balancing")
    hint = row(t, "activity", "NUMA hinting faults")
    assert hint["source"].startswith("kernel")
    assert hint["total"] == total_of(totals, "vmstat/numa_hint_faults")
    moved = row(t, "activity", "pages migrated (all causes)")
    assert moved["total"] == total_of(totals, "vmstat/pgmigrate_success")
    assert row(t, "activity", "task moves by the balancer")["total"] == total_of(totals, "proc.numa_task_moves")
    assert row(t, "activity", "CPU migrations")["total"] == total_of(totals, "proc.migrations")
    # Not counted in this run: said so, with the reason.
    assert row(t, "activity", "page migrations failed")["source"] == "not measured"
    assert any("kernel.page_migrate_failures" in n for n in notes)


def test_numa_balance_names_the_process_whose_migrations_failed(memscope, tmp_path):
    """A process that compacts memory (writes /proc/sys/vm/compact_memory) migrates pages in its own
    context; perf records the kernel's migrate:mm_migrate_pages records of that process alone
    (nr_succeeded, nr_failed): numa_balance.lua gives the same two sums for its pid."""
    if os.geteuid() != 0:
        pytest.skip("compacting memory needs root")
    rec, data = tmp_path / "compact.rec", tmp_path / "perf.data"
    res = run([memscope, "record", "-o", str(rec), "-e",
               "proc.pages_migrated,proc.pages_migrate_failed,proc.pages_migrate_failed_by_reason", "--", "perf", "record", "-q", "-o", str(data), "-e", "migrate:mm_migrate_pages", "--",
               "sh", "-c", "echo $$ > " + str(tmp_path / "pid") + "; echo 1 > /proc/sys/vm/compact_memory"])
    assert res.returncode == 0, res.stderr
    pid = int((tmp_path / "pid").read_text())
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid,trace"], capture_output=True, text=True)
    assert script.returncode == 0, script.stderr
    succeeded = failed = 0
    for line in script.stdout.splitlines():
        fields = line.split()
        assert int(fields[0]) == pid, line
        kv = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        assert kv["reason"] == "compaction", line
        succeeded += int(kv["nr_succeeded"])
        failed += int(kv["nr_failed"])
    res, tables, notes = report(memscope, "--lua", "numa_balance.lua", rec)
    assert res.returncode == 0, res.stderr
    if succeeded + failed == 0:
        # Memory was already compact: the process has no row, and nothing failed.
        assert not any(title.startswith("Page migrations per process") for _, title in tables), tables
        return
    per_process = table(tables, "numa_balance.lua", "Page migrations per process")
    mine = row(per_process, "pid", pid)
    assert (mine["comm"], mine["pages migrated"], mine["pages failed"]) == ("sh", succeeded, failed), (mine, succeeded,
                                                                                                      failed)
    # The kernel's reason, as its tracepoint names it (every record above said compaction).
    assert mine["failed: the kernel's reason"] == (f"compaction {failed}" if failed else ""), mine
    if failed:
        assert any(n.startswith(f"    - pid {pid} (sh): {failed} page migrations failed in its context (")
                   and n.endswith(f" {succeeded} pages migrated; the kernel's reason: compaction {failed}")
                   for n in notes), notes


def test_remote_ratio_on_a_recording_made_here(memscope, touchmem, tmp_path):
    rec = record(memscope, tmp_path / "rr.rec", "proc.pages_alloc", [touchmem, 20], extra=["-m", "numa.local,numa.other"])
    totals = summary_totals(memscope, rec)
    res, tables, notes = report(memscope, "--lua", "remote_ratio.lua", rec)
    assert res.returncode == 0, res.stderr
    pages = table(tables, "remote_ratio.lua", "Pages of the target by node (eBPF")
    assert row(pages, "node", 0)["pages"] == total_of(totals, "proc.pages_alloc") >= 20 * 256
    alloc = table(tables, "remote_ratio.lua", "Page allocations (kernel numastat")
    everyone = row(alloc, "node", "all")
    assert everyone["local pages"] == total_of(totals, "numastat/local_node")
    assert everyone["remote pages"] == total_of(totals, "numastat/other_node")
    # The whole system allocated at least the target's pages, on its one node.
    assert everyone["local pages"] >= 20 * 256
    # No memory-access counters in this virtual machine: said, with the catalog's reason.
    assert any(n.startswith("  memory accesses: not measured: mem.remote_accesses: ") for n in notes), notes


# ---- a user's script ----

USER_SCRIPT = r"""
script = { description = "doubled faults", args = { { name = "factor", default = "2" } } }

memscope.metric { name = "faults.scaled", unit = "faults", inputs = { "proc.faults" },
  compute = function(v, scope) return v["proc.faults"] * tonumber(memscope.args.factor) end }

local sum, frames, last_hist = 0, 0, 0
function on_frame(f)
  sum = sum + (memscope.value("faults.scaled") or 0)
  frames = frames + 1
  local h = memscope.history("proc.faults", nil, 3)
  last_hist = h[#h]
end

function on_end(run)
  memscope.emit { title = "mine", columns = { "scaled", "total", "frames", "last", "factor" },
    rows = { { sum, memscope.total("proc.faults"), frames, last_hist, memscope.args.factor } } }
end
"""


def test_user_script_from_a_temporary_directory(memscope, touch_recording, tmp_path):
    (tmp_path / "mine.lua").write_text(USER_SCRIPT)
    totals = summary_totals(memscope, touch_recording)
    res, tables, _ = report(memscope, "--lua", "./mine.lua:factor=3", touch_recording, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    r = table(tables, "mine.lua", "mine")["rows"][0]
    faults = totals[("proc.faults", "")]
    assert r["total"] == faults
    assert r["scaled"] == 3 * faults
    assert r["factor"] == "3"
    # on_frame ran once per frame of the recording; the history's last value is a frame's count.
    assert r["frames"] == sum(1 for line in touch_recording.read_text().splitlines() if line.startswith('{"t":'))
    assert isinstance(r["last"], (int, float)) and 0 <= r["last"] <= faults, r
    # The same script by absolute path, with its default argument.
    res, tables, _ = report(memscope, "--lua", tmp_path / "mine.lua", touch_recording)
    assert table(tables, "mine.lua", "mine")["rows"][0]["scaled"] == 2 * faults


# ---- failures ----

BROKEN = {
    "syntax.lua": "function on_frame(f)\n  local = 1\nend\n",
    "runtime.lua": "function on_frame(f)\n  if f.seq == 3 then\n    return nil + 1\n  end\nend\n",
    "loop.lua": "function on_frame(f)\n  while true do end\nend\n",
    # 64 KiB a step: past 16 MiB in a few ms, long before the CPU limit even on a loaded machine.
    "alloc.lua": "function on_frame(f)\n  local t, s = {}, string.rep('x', 65536)\n  for i = 1, 1e9 do t[i] = s .. i end\nend\n",
}


def test_each_failing_script_is_disabled_alone(memscope, touch_recording, tmp_path):
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(text)
    env = dict(os.environ, MEMSCOPE_LUA_CPU_MS="200", MEMSCOPE_LUA_MEMORY_MB="16")
    args = []
    for name in BROKEN:
        args += ["--lua", f"./{name}"]
    start = time.monotonic()
    res = run([memscope, "report", *args, "--lua", "faults.lua", str(touch_recording)], env=env, cwd=tmp_path)
    took = time.monotonic() - start
    assert res.returncode == 1
    err = res.stderr
    assert "syntax.lua:2: <name> expected near '='" in err
    assert "runtime.lua:3: attempt to perform arithmetic on a nil value (frame 3, in on_frame); " \
           "./runtime.lua is disabled, the rest goes on" in err
    assert "loop.lua:2: CPU limit: on_frame used more than 200 ms of CPU" in err
    assert "(frame 0, in on_frame); ./loop.lua is disabled" in err
    assert "alloc.lua:3: memory limit: the script used more than 16 MiB" in err
    assert took < 10, took
    # The healthy script still reports.
    assert "all faults" in res.stdout


C_LOOPS = {
    # A C loop with no allocation and no Lua code: record --lua never ended, the file had no end record.
    "move.lua": "function on_frame(f)\n  local t = {1, 2, 3}\n  table.move(t, 1, 1 << 50, 2)\nend\n",
    # 2^40 JSON values out of 41 tables: 4 GB made by jansson's plain malloc, past the 64 MiB budget.
    "json.lua": "function on_frame(f)\n  local t = {1}\n  for i = 1, 40 do t = {t, t} end\n"
                "  return memscope.json(t)\nend\n",
}


def test_c_loops_and_json_keep_the_limits_under_record(memscope, tmp_path):
    """Scripts whose time or memory went into the C of a built-in are disabled by their limit with
    script:line; record exits 0, its file ends with the end record, and memscope stays near its
    budget (its own peak RSS, from wait4)."""
    for name, text in C_LOOPS.items():
        (tmp_path / name).write_text(text)
    rec = tmp_path / "loops.rec"
    env = dict(os.environ, MEMSCOPE_LUA_CPU_MS="300")
    errors = tmp_path / "stderr"
    with open(errors, "w") as stderr:
        proc = subprocess.Popen([memscope, "record", "-o", str(rec), "-I", "50", "-e", "page-faults",
                                 "--lua", "./move.lua", "--lua", "./json.lua", "--", "sleep", "1"],
                                cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    # Reaped here, for its own resource usage.
    deadline = time.monotonic() + 60
    pid = status = 0
    while not pid and time.monotonic() < deadline:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        time.sleep(0.05)
    if not pid:
        proc.kill()
        os.wait4(proc.pid, 0)
    err = errors.read_text()
    assert pid and os.waitstatus_to_exitcode(status) == 0, err
    assert "move.lua:3: CPU limit: on_frame used more than 300 ms of CPU" in err, err
    assert "(frame 0, in on_frame); ./move.lua is disabled, the rest goes on" in err, err
    # Whichever limit it reaches first (memory, or the clock on a slow or busy machine), at its line.
    assert ("json.lua:4: memory limit: the script used more than 64 MiB" in err or
            "json.lua:4: CPU limit: on_frame used more than 300 ms of CPU" in err), err
    last = json.loads(rec.read_text().splitlines()[-1])
    assert last["end"] == "the command exited", last
    # Two 64 MiB budgets and memscope itself (150 MB under ASan): it was 7.6 GB at 40 s, growing.
    assert usage.ru_maxrss < 512 * 1024, usage.ru_maxrss


def test_sandbox_from_the_command_line(memscope, touch_recording, tmp_path):
    (tmp_path / "escape.lua").write_text("print(os.execute, io, package)\nos.execute('touch pwned')\n")
    res = run([memscope, "report", "--lua", "./escape.lua", str(touch_recording)], cwd=tmp_path)
    assert res.returncode == 1
    assert "nil\tnil\tnil" in res.stdout
    assert "escape.lua:2: attempt to call a nil value (field 'execute')" in res.stderr
    assert not (tmp_path / "pwned").exists()
    res = run([memscope, "report", "--lua-unsafe", "--lua", "./escape.lua", str(touch_recording)], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "pwned").exists()


def test_usage_errors(memscope, touch_recording, tmp_path):
    res = run([memscope, "report", "--lua", "nosuch.lua", str(touch_recording)])
    assert res.returncode == 2
    assert "Lua script 'nosuch.lua' not found" in res.stderr
    assert "faults.lua" in res.stderr
    res = run([memscope, "report", "--lua", "faults.lua:depth=3", str(touch_recording)])
    assert res.returncode == 2
    assert "the script takes no argument 'depth'; it takes: top, points" in res.stderr
    res = run([memscope, "report", "--format", "xml", str(touch_recording)])
    assert res.returncode == 2
    res = run([memscope, "report"], cwd=tmp_path)
    assert res.returncode == 1
    assert "memscope.rec" in res.stderr


# ---- fixture machines, replayed ----

def write_replay(path, frames):
    with open(path, "w") as f:
        f.write(json.dumps({"format": "memscope-replay", "version": 1}) + "\n")
        for t, values in frames:
            f.write(json.dumps({"t": t, "values": values}) + "\n")
    return path


def kunpeng_values():
    """Kunpeng 920: SCCL 1,3,5,7 = nodes 0..3; DDRC counts are 32 B each."""
    v = {}
    sccl = [1, 3, 5, 7]
    for s in range(4):
        for ch in range(4):
            v[f"hisi_sccl{sccl[s]}_ddrc{ch}/flux_rd/"] = 1000 if (s, ch) == (0, 0) else 500 if (s, ch) == (0, 1) else 0
            v[f"hisi_sccl{sccl[s]}_ddrc{ch}/flux_wr/"] = 250 * (ch + 1) if s == 2 else 0
    for s in range(4):
        for h in (2, 3):
            v[f"hisi_sccl{sccl[s]}_hha{h}/rx_ops_num/"] = (1000 if h == 2 else 600) if s == 0 else 400 if (s, h) == (1, 2) else 0
            v[f"hisi_sccl{sccl[s]}_hha{h}/rx_outer/"] = (100 if h == 2 else 50) if s == 0 else 0
            v[f"hisi_sccl{sccl[s]}_hha{h}/rx_sccl/"] = 150 if (s, h) == (0, 2) else 100 if (s, h) == (1, 2) else 0
    return v


def test_kunpeng920_remote_ratio_and_bandwidth(memscope, tmp_path):
    replay = write_replay(tmp_path / "kp.jsonl", [(1, kunpeng_values()), (2, kunpeng_values())])
    res, tables, _ = report(memscope, "--replay", replay, "--lua", "remote_ratio.lua", "--lua", "bandwidth.lua",
                            env=fixture_env("kunpeng920-2s"))
    assert res.returncode == 0, res.stderr
    acc = table(tables, "remote_ratio.lua", "Memory accesses (PMU counters")
    # node 0 per frame: local (1000-100-150)+(600-50) = 1300, remote 250+50 = 300; two frames.
    n0 = row(acc, "node", "0")
    assert (n0["local accesses"], n0["remote accesses"]) == (2600, 600)
    assert n0["remote share"] == pytest.approx(0.1875)
    n1 = row(acc, "node", "1")
    assert (n1["local accesses"], n1["remote accesses"]) == (600, 200)
    assert n1["remote share"] == pytest.approx(0.25)
    assert row(acc, "node", "2")["remote share"] is None        # no accesses: no ratio, not 0
    assert row(acc, "node", "all")["remote share"] == pytest.approx(0.2)
    bw = table(tables, "bandwidth.lua", "Bandwidth in MB/s")
    # (1000 + 500) x 32 B per second on node 0; (250+500+750+1000) x 32 B written on node 2.
    assert row(bw, "scope", "node 0")["read avg"] == pytest.approx(0.048)
    assert row(bw, "scope", "node 0")["read peak"] == pytest.approx(0.048)
    assert row(bw, "scope", "node 2")["write avg"] == pytest.approx(0.08)
    assert row(bw, "scope", "socket 1")["write avg"] == pytest.approx(0.08)
    assert row(bw, "scope", "system")["total avg"] == pytest.approx(0.128)
    # Per channel (a DDRC each): 1000 and 500 reads on SCCL 1's first two, (ch + 1) x 250 writes on SCCL 5's.
    channels = [r for r in bw["rows"] if r["scope"].startswith("channel ")]
    assert len(channels) == 16
    assert row(bw, "scope", "channel hisi_sccl1_ddrc0 (node 0)")["read avg"] == pytest.approx(0.032)
    assert row(bw, "scope", "channel hisi_sccl1_ddrc1 (node 0)")["read avg"] == pytest.approx(0.016)
    for ch in range(4):
        assert row(bw, "scope", f"channel hisi_sccl5_ddrc{ch} (node 2)")["write avg"] == pytest.approx(0.008 * (ch + 1))
        assert row(bw, "scope", f"channel hisi_sccl7_ddrc{ch} (node 3)")["total avg"] == 0


def westmere_values(full):
    return {
        "uncore/gq_cycles_full_rt/@cpu0": full, "uncore/gq_cycles_full_rt/@cpu1": 0,
        "uncore/clockticks/@cpu0": 2000, "uncore/clockticks/@cpu1": 1000,
        "uncore/qhl_occupancy_local/@cpu0": 3000, "uncore/qhl_occupancy_remote/@cpu0": 1000,
        "uncore/qhl_occupancy_local/@cpu1": 0, "uncore/qhl_occupancy_remote/@cpu1": 500,
        "uncore/qmc_normal_reads_any/@cpu0": 1000000, "uncore/qmc_normal_reads_any/@cpu1": 250000,
    }


def test_westmere_topdown_global_queue(memscope, tmp_path):
    replay = write_replay(tmp_path / "wsm.jsonl", [(1, westmere_values(200)), (2, westmere_values(400))])
    res, tables, notes = report(memscope, "--replay", replay, "--lua", "topdown.lua", "--lua", "remote_ratio.lua",
                                env=fixture_env("westmere-ep-2s"))
    assert res.returncode == 0, res.stderr
    # remote_ratio.lua on the same run: the replay gave no access counts, and it says so.
    assert any(n.startswith("  memory accesses: not measured: mem.remote_accesses: counted, but no value")
               for n in notes), notes
    tree = table(tables, "topdown.lua", "Memory top-down")
    branches = {r["branch"].strip(): r for r in tree["rows"]}
    # (200 + 400) GQ-full cycles of (2000 + 1000) x 2 clockticks.
    assert branches["queue saturation"]["value"] == "10.0% of cycles full"
    # occupancy (3000 + 1000 + 500) / 3000 = 1.5 entries in each frame.
    assert branches["queue occupancy"]["value"] == "1.50 entries"
    # 1.25e6 reads x 64 B per second.
    assert branches["DRAM traffic"]["value"].startswith("80.0 MB/s (read 80.0 MB/s")
    # No core top-down on Westmere: one row says so, pointing at the Global Queue.
    assert branches["backend bound"]["value"] == "not measurable"
    assert "Global Queue" in branches["backend bound"]["from"]
    assert "memory bound" not in branches
    assert branches["interconnect"]["value"] == "not measurable"
    assert branches["interconnect"]["from"]     # with the catalog's reason
    # The tree's order and depth.
    names = [r["branch"] for r in tree["rows"]]
    assert names.index("  queue saturation") > names.index("DRAM traffic") > names.index("backend bound")
    assert names.index("    queue occupancy") == names.index("  queue saturation") + 1


def skylake_values():
    v = {}
    for i in range(6):
        v[f"uncore_imc_{i}/cas_count_read/@cpu0"] = (i + 1) * 1000
        v[f"uncore_imc_{i}/cas_count_read/@cpu4"] = (i + 1) * 2000
    for i in range(3):
        v[f"uncore_upi_{i}/txl_flits_all_data/@cpu0"] = 900
        v[f"uncore_upi_{i}/txl_flits_all_data/@cpu4"] = 0
    return v


def test_skylake_bandwidth_and_interconnect(memscope, tmp_path):
    replay = write_replay(tmp_path / "skx.jsonl", [(2, skylake_values())])
    res, tables, _ = report(memscope, "--replay", replay, "--lua", "bandwidth.lua", "--lua", "topdown.lua",
                            env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    bw = table(tables, "bandwidth.lua", "Bandwidth in MB/s")
    # 21000 x 64 B / 2 s on socket 0, twice that on socket 1.
    assert row(bw, "scope", "socket 0")["read avg"] == pytest.approx(0.672)
    assert row(bw, "scope", "socket 1")["read avg"] == pytest.approx(1.344)
    assert row(bw, "scope", "system")["read peak"] == pytest.approx(2.016)
    # Each IMC is a channel on each socket: (i + 1) x 1000 (socket 0) and x 2000 (socket 1) x 64 B / 2 s.
    channels = [r["scope"] for r in bw["rows"] if r["scope"].startswith("channel ")]
    assert channels == [f"channel uncore_imc_{i} (node {n})" for n in (0, 1) for i in range(6)]
    for i in range(6):
        assert row(bw, "scope", f"channel uncore_imc_{i} (node 0)")["read avg"] == pytest.approx(0.032 * (i + 1))
        assert row(bw, "scope", f"channel uncore_imc_{i} (node 1)")["read avg"] == pytest.approx(0.064 * (i + 1))
    tree = {r["branch"].strip(): r for r in table(tables, "topdown.lua", "Memory top-down")["rows"]}
    # 2700 flits x 64/9 B over 2 s = 9600 B/s
    assert tree["interconnect"]["value"].startswith("tx 9.60 KB/s")


CHANNEL_LUA = """
local out = {}
function on_frame()
  for _, ch in ipairs(memscope.channels()) do
    out[#out + 1] = string.format("%s cpu=%d node=%d socket=%d", ch.instance, ch.cpu, ch.node, ch.socket)
  end
  local v, why = memscope.value("mem.read_bytes", { instance = "uncore_imc_2" })
  out[#out + 1] = "ambiguous: " .. tostring(v) .. " " .. why
  out[#out + 1] = "socket 1: " .. memscope.value("mem.read_bytes", { instance = "uncore_imc_2", socket = 1 })
  out[#out + 1] = "rate: " .. memscope.rate("mem.read_bytes", { instance = "uncore_imc_2", cpu = 0 })
  v, why = memscope.value("mem.read_bytes", { instance = "uncore_imc_9" })
  out[#out + 1] = "missing: " .. tostring(v) .. " " .. why
end
function on_end() for _, line in ipairs(out) do print(line) end end
"""


def test_channels_in_the_lua_api(memscope, tmp_path):
    """memscope.channels() lists the channel-scoped PMU instances; value() with {instance=} reads
    a catalog metric on one, and says why when the labels name none or several."""
    imc = {k: v for k, v in skylake_values().items() if "imc" in k}
    replay = write_replay(tmp_path / "skx.jsonl", [(2, imc)])
    (tmp_path / "ch.lua").write_text(CHANNEL_LUA)
    res = run([memscope, "report", "--replay", str(replay), "-m", "mem.read_bytes", "--lua", str(tmp_path / "ch.lua")],
              env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[:12] == [f"uncore_imc_{i} cpu={c} node={n} socket={n}" for c, n in ((0, 0), (4, 1)) for i in range(6)]
    assert lines[12] == ("ambiguous: nil that instance is a channel on several sockets: add socket = N "
                         "(memscope.channels() lists them)")
    assert lines[13] == "socket 1: 384000.0"          # 3 x 2000 CAS x 64 B
    assert lines[14] == "rate: 96000.0"               # 3 x 1000 x 64 B over 2 s
    assert lines[15] == "missing: nil no memory channel with these labels (memscope.channels() lists them)"


def test_epyc_zen3_multiplexed_bandwidth(memscope, tmp_path):
    v = {f"amd_df/dram_channel_{ch}/@cpu{cpu}": {"value": 1000, "enabled_ns": 1000000000, "running_ns": 500000000}
         for ch in range(8) for cpu in (0, 8)}
    replay = write_replay(tmp_path / "zen3.jsonl", [(1, v)])
    res, tables, _ = report(memscope, "--replay", replay, "--lua", "bandwidth.lua", env=fixture_env("epyc-zen3-2s"))
    assert res.returncode == 0, res.stderr
    bw = table(tables, "bandwidth.lua", "Bandwidth in MB/s")
    # each count extrapolated to 2000 (ran half the time): 8 x 2000 x 64 B per socket per second
    assert row(bw, "scope", "socket 0")["total avg"] == pytest.approx(1.024)
    assert row(bw, "scope", "system")["total avg"] == pytest.approx(2.048)
    assert row(bw, "scope", "system")["read avg"] is None      # the DF counts do not split reads from writes
    assert not [r for r in bw["rows"] if r["scope"].startswith("channel ")]
    assert "per channel: not measured: on this machine the catalog maps these metrics to PMUs of a whole socket" \
        in res.stdout


def test_epyc_zen4_bandwidth(memscope, tmp_path):
    v = {f"amd_umc_{u}/cas_rd/": 1000 if u < 4 else 3000 for u in range(8)}
    replay = write_replay(tmp_path / "zen4.jsonl", [(1, v), (2, {k: 0 for k in v})])
    res, tables, _ = report(memscope, "--replay", replay, "--lua", "bandwidth.lua", env=fixture_env("epyc-zen4-2s"))
    assert res.returncode == 0, res.stderr
    bw = table(tables, "bandwidth.lua", "Bandwidth in MB/s")
    # 4 x 1000 x 64 B in the first of two seconds: 0.256 MB/s peak, half that on average.
    assert row(bw, "scope", "socket 0")["read peak"] == pytest.approx(0.256)
    assert row(bw, "scope", "socket 0")["read avg"] == pytest.approx(0.128)
    assert row(bw, "scope", "socket 1")["read peak"] == pytest.approx(0.768)
    for u in range(8):
        assert row(bw, "scope", f"channel amd_umc_{u} (node {u // 4})")["read peak"] == pytest.approx(
            0.064 if u < 4 else 0.192)


def test_csv_of_a_system_wide_recording_has_every_row_of_the_json(memscope, tmp_path):
    """report --format csv of a recording with a process's series per process (tables of many
    KiB, built in a Lua string buffer): the same rows and cells as --format json, none lost.
    It once wrote past its buffer as the table grew (a use-after-free, exit 139)."""
    rec = tmp_path / "a.rec"
    res = run([memscope, "record", "-a", "-I", "200", "-o", str(rec), "--", "sleep", "0.6"])
    assert res.returncode == 0, res.stderr
    csv_out = run([memscope, "report", "--format", "csv", str(rec)])
    assert csv_out.returncode == 0, csv_out.stderr
    _, tables, _ = report(memscope, rec)
    series = table(tables, "summary.lua", "Series")
    lines = [l for l in csv_out.stdout.splitlines() if l and not l.startswith("#")]
    header = ",".join(series["columns"])
    start = lines.index(header)
    body = list(csv.reader(lines[start + 1:start + 1 + len(series["rows"])]))
    assert len(series["rows"]) > 20 and len(body) == len(series["rows"]), (len(body), len(series["rows"]))
    for cells, want in zip(body, series["rows"]):
        assert cells[0] == want["series"] and cells[1] == want["labels"], (cells, want)
        # CSV cells carry the table's two decimals.
        assert (float(cells[3]) if cells[3] else "") == (pytest.approx(want["total"], abs=0.0051)
                                                        if want["total"] != "" else ""), (cells, want)
    assert len(csv_out.stdout) > 4096
