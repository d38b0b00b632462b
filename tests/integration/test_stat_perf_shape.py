"""memscope stat -x SEP and -j print perf stat's fields in perf stat's order and with its JSON
keys, so scripts written for perf read memscope: compared field by field with perf stat's own
output on the same kind of run. Numbers carry no binary noise; event names with commas are
quoted; --self-describing keeps memscope's own form."""
import csv
import io
import json
import os
import re
import time

import pytest

from conftest import run
from stat_output import counter_output, messages

EVENTS = "page-faults,task-clock"


def perf(args):
    res = run(["perf", "stat"] + args)
    assert res.returncode == 0, res.stderr
    # perf writes its counts to stderr unless -o is given.
    return res.stderr


def memscope_stat(memscope, args):
    res = run([memscope, "stat"] + args)
    assert res.returncode == 0, res.stderr
    return counter_output(res.stderr)


def csv_lines(text, sep=","):
    return [row for row in csv.reader(io.StringIO(text), delimiter=sep) if any(f.strip() for f in row)]


def test_csv_fields_are_perfs(memscope):
    theirs = {row[2]: row for row in csv_lines(perf(["-x,", "-e", EVENTS, "true"]))}
    ours = {row[2]: row for row in csv_lines(memscope_stat(memscope, ["-x,", "-e", EVENTS, "--", "true"]))}
    assert set(ours) == set(theirs) == {"page-faults", "task-clock"}
    for event in ours:
        o, t = ours[event], theirs[event]
        assert len(o) == len(t) == 7, (o, t)
        assert o[1] == t[1], (o, t)                     # unit: "" and "msec"
        assert float(o[0]) > 0 and int(o[3]) > 0        # counter-value, event-runtime (ns)
        assert o[4] == t[4] == "100.00"                 # pcnt-running
    # A plain count is an integer; task-clock in msec with the digits it has, no noise.
    assert re.fullmatch(r"\d+", ours["page-faults"][0])
    assert re.fullmatch(r"\d+\.\d{1,6}", ours["task-clock"][0]), ours["task-clock"]


def test_csv_intervals_per_node_are_perfs(memscope):
    args = ["-x,", "-a", "--per-node", "-I", "100", "-e", "page-faults"]
    theirs = csv_lines(perf(args + ["sleep", "0.35"]))
    ours = csv_lines(memscope_stat(memscope, args + ["--", "sleep", "0.35"]))
    assert ours and theirs
    for rows in (ours, theirs):
        for row in rows:
            # time, node, CPUs in the node, value, unit, event, runtime, pcnt, metric value, unit
            assert len(row) == 10, row
            assert re.fullmatch(r"\d+\.\d{9}", row[0].strip()), row
            assert re.fullmatch(r"N\d+", row[1]) and row[5] == "page-faults", row
    assert {row[1] for row in ours} == {row[1] for row in theirs}
    assert {row[2] for row in ours} == {row[2] for row in theirs}       # aggregate-number: CPUs per node
    # As perf -I: interval lines only, no totals line.
    assert all(re.fullmatch(r"\d+\.\d{9}", row[0].strip()) for row in ours)


def test_json_keys_are_perfs(memscope):
    theirs = [json.loads(l) for l in perf(["-j", "-e", EVENTS, "true"]).splitlines() if l.startswith("{")]
    ours = [json.loads(l) for l in memscope_stat(memscope, ["-j", "-e", EVENTS, "--", "true"]).splitlines()]
    assert len(ours) == len(theirs) == 2
    counter_keys = ["counter-value", "unit", "event", "event-runtime", "pcnt-running"]
    for o in ours:
        t = next(x for x in theirs if x["event"] == o["event"])
        # perf's keys in perf's order (perf adds its derived metric to each event; memscope's
        # metrics are lines of their own).
        assert list(o)[:5] == counter_keys == [k for k in t if k in counter_keys]
        assert isinstance(o["counter-value"], str) and float(o["counter-value"]) > 0
        assert o["unit"] == t["unit"] and isinstance(o["event-runtime"], int)


def rate(count, task_msec):
    """perf's "/sec" shadow metric of a count: per second of task-clock, with K/M/G."""
    value = count * 1000.0 / task_msec
    for step, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= step:
            return value / step, prefix + "/sec"
    return value, "/sec"


def test_json_lines_are_written_as_perfs_with_its_shadow_metrics(memscope):
    theirs = [l for l in perf(["-j", "-e", EVENTS, "true"]).splitlines() if l.startswith("{")]
    ours = memscope_stat(memscope, ["-j", "-e", EVENTS, "--", "true"]).splitlines()
    # perf's spacing, "key" : value, and its keys in its order, metric fields on every line.
    shape = re.compile(r'\{"counter-value" : "\d+\.\d{6}", "unit" : "(msec)?", "event" : "[a-z-]+", '
                       r'"event-runtime" : \d+, "pcnt-running" : 100\.00, "metric-value" : \d+\.\d{6}, '
                       r'"metric-unit" : "[^"]+"\}')
    for line in ours + theirs:
        assert shape.fullmatch(line), line
    o = {j["event"]: j for j in map(json.loads, ours)}
    t = {j["event"]: j for j in map(json.loads, theirs)}
    assert o["task-clock"]["metric-unit"] == t["task-clock"]["metric-unit"] == "CPUs utilized"
    task_msec = float(o["task-clock"]["counter-value"])
    value, unit = rate(float(o["page-faults"]["counter-value"]), task_msec)
    assert o["page-faults"]["metric-unit"] == unit and t["page-faults"]["metric-unit"].endswith("/sec")
    assert abs(o["page-faults"]["metric-value"] - value) <= 1e-6 * value + 1e-6


def test_csv_shadow_metrics_are_perfs(memscope):
    rows = {row[2]: row for row in csv_lines(memscope_stat(memscope, ["-x,", "-e", EVENTS, "--", "true"]))}
    # msec with perf's two decimals; the metric with three.
    assert re.fullmatch(r"\d+\.\d\d", rows["task-clock"][0]), rows["task-clock"]
    assert rows["task-clock"][6] == "CPUs utilized" and re.fullmatch(r"\d+\.\d{3}", rows["task-clock"][5])
    task_msec = int(rows["task-clock"][3]) / 1e6          # the runtime in ns: the unrounded task-clock
    value, unit = rate(int(rows["page-faults"][0]), task_msec)
    assert rows["page-faults"][6] == unit and abs(float(rows["page-faults"][5]) - value) <= 0.0005 + 1e-6 * value


def test_json_interval_and_cpu_rows_are_perfs(memscope):
    args = ["-j", "-a", "-I", "100", "--per-cpu", "-e", "page-faults"]
    ours = [json.loads(l) for l in memscope_stat(memscope, args + ["--", "sleep", "0.25"]).splitlines()]
    theirs = [json.loads(l) for l in perf(["-j", "-a", "-I", "100", "-A", "-e", "page-faults", "sleep", "0.25"])
              .splitlines() if l.startswith("{")]
    assert ours and theirs
    assert {tuple(o)[:3] for o in ours} == {("interval", "cpu", "counter-value")}
    assert {tuple(t)[:3] for t in theirs} == {("interval", "cpu", "counter-value")}
    assert {o["cpu"] for o in ours} == {t["cpu"] for t in theirs}


def test_metrics_are_perfs_metric_fields(memscope, touchmem):
    out = memscope_stat(memscope, ["-x,", "-e", "page-faults", "-m", "kernel.faults", "--", touchmem, "8"])
    rows = {row[2]: row for row in csv_lines(out)}
    metric = rows["kernel.faults"]
    assert metric[0] == "" and metric[1] == "" and metric[3] == ""      # no counter of its own
    assert metric[5] and float(metric[5]) == float(rows["page-faults"][0])
    assert metric[6] == "faults"


def test_numbers_have_no_binary_noise(memscope, touchmem):
    out = memscope_stat(memscope, ["-j", "--self-describing", "-I", "20", "-e", "page-faults,task-clock", "--",
                                   touchmem, "16"])
    for number in re.findall(r"-?\d+\.\d+(?:e[-+]\d+)?", out):
        digits = re.sub(r"[^\d]", "", number.split("e")[0]).lstrip("0")
        assert len(digits) <= 15, number
    out = memscope_stat(memscope, ["-x,", "--self-describing", "-e", "task-clock", "--", "true"])
    value = next(row for row in csv_lines(out)[1:] if row[2] == "task-clock")[3]
    assert len(re.sub(r"[^\d]", "", value).lstrip("0")) <= 15, value


def test_event_names_with_commas_are_quoted(memscope):
    event = "software/config=2,config1=0/"
    out = memscope_stat(memscope, ["-x,", "-e", event, "--", "true"])
    assert f'"{event}"' in out
    rows = csv_lines(out)
    assert rows[0][2] == event and len(rows[0]) == 7
    out = memscope_stat(memscope, ["-x;", "-e", event, "--", "true"])
    assert csv_lines(out, ";")[0][2] == event and f'"{event}"' not in out


def test_self_describing_forms(memscope):
    out = memscope_stat(memscope, ["-x,", "--self-describing", "-e", "page-faults", "--", "true"])
    assert out.splitlines()[0] == "time,scope,event,value,unit,coverage,note"
    out = memscope_stat(memscope, ["--json", "--self-describing", "-e", "page-faults", "--", "true"])
    assert json.loads(out.splitlines()[-1])["type"] == "total"


@pytest.mark.parametrize("args,message", [
    (["-x,", "--json"], "-x and --json are two output forms; choose one"),
    (["--self-describing"], "--self-describing is a form of -x SEP or --json"),
    (["--per-node", "--per-socket"], "--per-node and --per-socket: one kind of row at a time"),
    (["--per-node", "--per-cache"], "--per-node and --per-cache: one kind of row at a time"),
    (["--columns", "-x,"], "--columns is a form of the text output; it excludes -x, --json and --metric-only"),
])
def test_output_options_that_contradict_are_refused(memscope, args, message):
    res = run([memscope, "stat"] + args + ["-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and message in res.stderr, res.stderr


def test_default_events_are_perfs(memscope):
    """Without -e, the events perf stat counts, in its order (system-wide: cpu-clock)."""
    for extra in ([], ["-a"]):
        theirs = [row[2] for row in csv_lines(perf(["-x,"] + extra + ["true"]))]
        ours = [row[2] for row in csv_lines(memscope_stat(memscope, ["-x,"] + extra + ["--", "true"]))]
        assert ours == theirs, (extra, ours, theirs)
    # Hardware events without a PMU are shown as perf shows them, and not noted.
    res = run([memscope, "stat", "--", "true"])
    assert res.returncode == 0 and messages(res.stderr) == "", res.stderr


def text_layout(text):
    """Each event line's layout: where its name and its '#' start, its unit and the metric's unit."""
    lines = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(\S+) (msec|    ) ([a-z-]+)( +# +\d+\.\d{3} (.*?))?\s*$", line)
        if m:
            lines[m.group(3)] = (line.index(m.group(3)), line.find("#"), m.group(2), m.group(5))
    return lines


def test_text_lines_are_perfs(memscope):
    theirs = perf(["-e", EVENTS, "true"])
    ours = memscope_stat(memscope, ["-e", EVENTS, "--", "true"])
    assert "\n Performance counter stats for 'true':\n\n" in ours
    assert re.search(r"\n\n {7}\d\.\d{9} seconds time elapsed\n", ours), ours
    t, o = text_layout(theirs), text_layout(ours)
    assert set(o) == set(t) == {"page-faults", "task-clock"}, (ours, theirs)
    for event in o:
        # name and '#' in perf's columns, perf's unit; the rate's K/M prefix follows the count
        assert o[event][:3] == t[event][:3], (event, ours, theirs)
        assert o[event][3].endswith("/sec") if event == "page-faults" else o[event][3] == "CPUs utilized"


def sysfs_int(path):
    with open(path) as f:
        return int(f.read())


def test_per_cache_and_per_cluster_rows_are_the_cpus_sharing_them(memscope):
    """perf's S0-D0-L3-ID0 and S0-D0-CLS0 rows, each adding up the CPUs sysfs says share it."""
    cpus = sorted(int(d[3:]) for d in os.listdir("/sys/devices/system/cpu") if re.fullmatch(r"cpu\d+", d)
                  and os.path.exists(f"/sys/devices/system/cpu/{d}/topology/core_id"))
    want = {"cache": {}, "cluster": {}, "cache=L2": {}, "cache=l1": {}}
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}"
        place = f"S{sysfs_int(base + '/topology/physical_package_id')}-D" + (
            str(sysfs_int(base + "/topology/die_id")) if os.path.exists(base + "/topology/die_id") else "0")
        # perf's cache instance: the first CPU of the cache's shared_cpu_list.
        levels = {}
        for i in sorted(os.listdir(base + "/cache")):
            if i.startswith("index"):
                with open(f"{base}/cache/{i}/shared_cpu_list") as f:
                    first = int(re.split(r"[-,]", f.read().strip())[0])
                levels[sysfs_int(f"{base}/cache/{i}/level")] = first
        for mode, level in (("cache", max(levels)), ("cache=L2", 2), ("cache=l1", 1)):
            key = f"{place}-L{level}-ID{levels[level]}"
            want[mode][key] = want[mode].get(key, 0) + 1
        cluster = sysfs_int(base + "/topology/cluster_id") if os.path.exists(base + "/topology/cluster_id") else 0
        key = f"{place}-CLS{cluster}"
        want["cluster"][key] = want["cluster"].get(key, 0) + 1
    for mode in ("cache", "cluster", "cache=L2", "cache=l1"):
        rows = csv_lines(memscope_stat(memscope, ["-x,", "-a", "--per-" + mode, "-e", "cpu-clock", "--", "true"]))
        assert {row[0]: int(row[1]) for row in rows} == want[mode], (mode, rows)
        assert all(row[4] == "cpu-clock" and row[8] == "CPUs utilized" for row in rows), rows
        objs = [json.loads(l) for l in memscope_stat(memscope, ["-j", "-a", "--per-" + mode, "-e", "cpu-clock", "--",
                                                                "true"]).splitlines()]
        assert {o[mode.split("=")[0]]: o["aggregate-number"] for o in objs} == want[mode], objs
    # perf's levels are L1..L4; one this host lacks is named with the ones it has.
    res = run([memscope, "stat", "-a", "--per-cache=L5", "-e", "cpu-clock", "--", "true"])
    assert res.returncode == 2 and "--per-cache=L5: the cache level is L1, L2, L3 or L4" in res.stderr, res.stderr
    cpu0_levels = {sysfs_int(f"/sys/devices/system/cpu/cpu0/cache/{i}/level")
                   for i in os.listdir("/sys/devices/system/cpu/cpu0/cache") if i.startswith("index")}
    if 4 not in cpu0_levels:
        res = run([memscope, "stat", "-a", "--per-cache=L4", "-e", "cpu-clock", "--", "true"])
        assert res.returncode == 2 and "--per-cache=L4: cpu0 has no level-4 cache in sysfs" in res.stderr, res.stderr


def test_pid_with_a_command_counts_the_process_while_the_command_runs(memscope, touchmem):
    """perf's -p PID -- CMD: the process's counts for as long as CMD runs; the process goes on."""
    import subprocess
    busy = subprocess.Popen([touchmem, "4", "--repeat", "1000000"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        for tool in ([memscope, "stat"], ["perf", "stat"]):
            res = run(tool + ["-x,", "-p", str(busy.pid), "-e", "page-faults", "--", "sleep", "0.3"])
            assert res.returncode == 0, res.stderr
            rows = csv_lines(counter_output(res.stderr) if tool[0] == memscope else res.stderr)
            assert len(rows) == 1 and rows[0][2] == "page-faults", (tool, rows)
            # 4 MB touched afresh over and over: 1024 faults a round, many rounds in 0.3 s.
            assert int(rows[0][0]) > 1024, (tool, rows)
        assert busy.poll() is None
    finally:
        busy.kill()
        busy.wait()


def test_per_cpu_lines_are_event_major_as_perfs(memscope):
    """-A: each event over the CPUs, in CSV, JSON and text, in perf's order."""
    args = ["-a", "-A", "-e", "page-faults,cpu-clock"]
    theirs = [(r[0], r[3]) for r in csv_lines(perf(["-x,"] + args + ["true"]))]
    ours = [(r[0], r[3]) for r in csv_lines(memscope_stat(memscope, ["-x,"] + args + ["--", "true"]))]
    assert ours == theirs and len(ours) == 2 * len({cpu for cpu, _ in ours}), (ours, theirs)
    objs = [json.loads(l) for l in memscope_stat(memscope, ["-j"] + args + ["--", "true"]).splitlines()]
    assert [("CPU" + o["cpu"], o["event"]) for o in objs] == ours
    text = memscope_stat(memscope, args + ["--", "true"])
    assert re.findall(r"^(CPU\d+) .* (page-faults|cpu-clock)\b", text, re.M) == ours, text
