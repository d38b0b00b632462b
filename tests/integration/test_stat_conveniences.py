"""perf stat's conveniences in memscope stat: --interval-count, --timeout, -o FILE, -A/--no-aggr."""
import os
import re
import time

from conftest import online_cpus, run
from stat_output import counter_output, intervals, parse_csv, perf_count, totals

PAGE = 4096


def stat(memscope, args, **kw):
    return run([memscope, "stat"] + args, **kw)


def test_interval_count_gives_that_many_lines_and_totals_of_them(memscope):
    start = time.monotonic()
    res = stat(memscope, ["-x,", "--self-describing", "-I", "100", "--interval-count", "3",
                          "-e", "task-clock,context-switches", "--", "sleep", "30"])
    took = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    times = sorted({float(r["time"]) for r in intervals(rows)})
    assert len(times) == 3, times
    # The run ended after its third line, not when sleep 30 would have.
    assert took < 20, took
    # The totals are those of the three intervals printed, nothing after them.
    for ev in ("task-clock", "context-switches"):
        parts = [r["value"] for r in intervals(rows) if r["event"] == ev]
        assert len(parts) == 3
        assert abs(sum(parts) - totals(rows)[("total", ev)]) <= 1e-3 * max(1.0, sum(parts)), (ev, parts, rows)


def test_interval_count_without_interval_or_zero_is_refused(memscope):
    res = stat(memscope, ["--interval-count", "3", "-e", "task-clock", "--", "true"])
    assert res.returncode == 2 and "give -I too" in res.stderr, res.stderr
    res = stat(memscope, ["-I", "100", "--interval-count", "0", "-e", "task-clock", "--", "true"])
    assert res.returncode == 2 and "--interval-count 0" in res.stderr and "1 to" in res.stderr, res.stderr


def test_timeout_ends_the_run_and_its_command(memscope):
    start = time.monotonic()
    res = stat(memscope, ["-x,", "--self-describing", "--timeout", "300", "-e", "task-clock", "--",
                          "sleep", "30"])
    took = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    assert took < 20, took
    rows = parse_csv(counter_output(res.stderr))
    assert ("total", "task-clock") in totals(rows)
    # The text form says how long it counted: the timeout, not sleep's 30 s.
    res = stat(memscope, ["--timeout", "300", "-e", "task-clock", "--", "sleep", "30"])
    assert res.returncode == 0, res.stderr
    elapsed = float(re.search(r"([0-9.]+) +seconds time elapsed", counter_output(res.stderr)).group(1))
    # The timer is armed before the counters are enabled: the start-up (a few ms, tens
    # under sanitizers on a loaded machine) comes off the counted time.
    assert 0.2 <= elapsed < 15, elapsed


def test_timeout_of_a_file_is_refused(memscope, tmp_path):
    res = stat(memscope, ["--timeout", "100", "--input", str(tmp_path / "x.rec")])
    assert res.returncode == 2 and "--timeout ends a live run" in res.stderr, res.stderr
    res = stat(memscope, ["--timeout", "1.5", "-e", "task-clock", "--", "true"])
    assert res.returncode == 2 and "--timeout 1.5" in res.stderr, res.stderr


def test_output_file_holds_what_stdout_would(memscope, touchmem, tmp_path):
    out = tmp_path / "stat.csv"
    res = stat(memscope, ["-o", str(out), "-x,", "--self-describing", "-e", "page-faults",
                          "--", touchmem, "40"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and counter_output(res.stderr) == ""
    faults = totals(parse_csv(out.read_text()))[("total", "page-faults")]
    expected = 40 * 1024 * 1024 // PAGE
    assert abs(faults - expected) <= 0.02 * expected, faults
    # Text: the same lines as on standard output, numbers aside.
    text = tmp_path / "stat.txt"
    res = stat(memscope, ["-o", str(text), "-I", "100", "-e", "page-faults", "--", "sleep", "0.35"])
    assert res.returncode == 0 and res.stdout == "" and counter_output(res.stderr) == "", res.stderr
    res2 = stat(memscope, ["-I", "100", "-e", "page-faults", "--", "sleep", "0.35"])

    def shape(s):
        return [re.sub(r"[0-9.]+", "N", line) for line in s.splitlines()]

    a, b = shape(text.read_text()), shape(counter_output(res2.stderr))
    # perf's header, then a line per interval: time, count, event (its rate after '#').
    assert a[0] == b[0] == "#           time             counts unit events"
    assert {l.split()[2] for l in a[1:]} == {l.split()[2] for l in b[1:]} == {"page-faults"}
    assert len(a) >= 4 and len(b) >= 4


def test_output_file_that_cannot_be_created_is_named(memscope, tmp_path):
    res = stat(memscope, ["-o", str(tmp_path / "no" / "such" / "f"), "-e", "task-clock", "--", "true"])
    assert res.returncode == 1
    assert "-o " + str(tmp_path / "no" / "such" / "f") in res.stderr and "No such file" in res.stderr


def test_no_aggr_is_per_cpu(memscope):
    ncpu = os.cpu_count()
    rows = {}
    for flag in ("-A", "--no-aggr", "--per-cpu"):
        res = stat(memscope, ["-x,", "--self-describing", flag, "-a", "-e", "task-clock", "--", "sleep", "0.1"])
        assert res.returncode == 0, res.stderr
        rows[flag] = sorted(s for (s, e) in totals(parse_csv(counter_output(res.stderr))))
    assert rows["-A"] == rows["--no-aggr"] == rows["--per-cpu"]
    assert len(rows["-A"]) == ncpu, rows
    res = stat(memscope, ["-A", "--per-node", "-a", "-e", "task-clock", "--", "true"])
    assert res.returncode == 2 and "one kind of row at a time" in res.stderr, res.stderr


def _sizes_script(tmp_path, touchmem, sizes):
    """A command whose run i touches sizes[i] MB (it counts its runs in a file)."""
    state = tmp_path / "run"
    state.write_text("0\n")
    script = tmp_path / "grow.sh"
    cases = " ".join(str(s) for s in sizes)
    script.write_text(f"#!/bin/sh\ni=$(cat {state})\necho $((i + 1)) > {state}\n"
                      f"set -- {cases}\nshift $i\nexec {touchmem} $1\n")
    script.chmod(0o755)
    return script, state


def test_repeat_gives_the_mean_and_perfs_spread_of_the_runs(memscope, touchmem, tmp_path):
    sizes = [10, 20, 30]
    script, state = _sizes_script(tmp_path, touchmem, sizes)
    # Each run's own count, measured alone.
    own = []
    for _ in sizes:
        res = stat(memscope, ["-x,", "--self-describing", "-e", "page-faults", "--", str(script)])
        assert res.returncode == 0, res.stderr
        own.append(totals(parse_csv(counter_output(res.stderr)))[("total", "page-faults")])
    assert own[1] - own[0] > 2000 and own[2] - own[1] > 2000, own
    n = len(own)
    mean = sum(own) / n
    sd_of_mean = (sum((x - mean) ** 2 for x in own) / (n - 1) / n) ** 0.5
    want_pct = 100 * sd_of_mean / mean

    state.write_text("0\n")
    res = stat(memscope, ["-r", "3", "-x,", "-e", "page-faults", "--", str(script)])
    assert res.returncode == 0, res.stderr
    assert state.read_text().strip() == "3"
    fields = counter_output(res.stderr).strip().split(",")
    # perf's shape: value,unit,event,variance%,runtime,pcnt,metric-value,metric-unit
    assert len(fields) == 8 and fields[2] == "page-faults" and fields[3].endswith("%"), fields
    assert abs(float(fields[0]) - mean) <= 0.02 * mean, (fields, own)
    assert abs(float(fields[3][:-1]) - want_pct) <= 0.1 * want_pct, (fields, own, want_pct)

    state.write_text("0\n")
    res = stat(memscope, ["-r", "3", "-e", "page-faults", "--", str(script)])
    assert res.returncode == 0, res.stderr
    assert "(3 runs):" in counter_output(res.stderr)
    m = re.search(r"^\s+([\d,]+)\s+page-faults\s+\( \+-\s*([0-9.]+)% \)$", counter_output(res.stderr), re.M)
    assert m, counter_output(res.stderr)
    assert abs(int(m.group(1).replace(",", "")) - mean) <= 0.02 * mean and abs(float(m.group(2)) - want_pct) <= 0.1 * want_pct
    assert re.search(r"[0-9.]+ \+- [0-9.]+ seconds time elapsed  \( \+-\s*[0-9.]+% \)", counter_output(res.stderr)), counter_output(res.stderr)


def test_repeat_csv_and_json_have_perfs_fields(memscope):
    import json
    import shutil
    res = stat(memscope, ["-r", "2", "-j", "-e", "page-faults", "--", "true"])
    assert res.returncode == 0, res.stderr
    obj = json.loads(counter_output(res.stderr).strip())
    assert isinstance(obj["variance"], (int, float)) and obj["event"] == "page-faults"
    keys = list(obj)
    assert keys.index("event") < keys.index("variance") < keys.index("event-runtime")
    if shutil.which("perf"):
        peer = run(["perf", "stat", "-r", "2", "-x,", "-e", "page-faults", "--", "true"])
        if peer.returncode == 0:
            line = [l for l in peer.stderr.splitlines() if ",page-faults," in l][0].split(",")
            ours = counter_output(stat(memscope, ["-r", "2", "-x,", "-e", "page-faults", "--", "true"]).stderr).strip().split(",")
            assert len(ours) == len(line) and line[3].endswith("%") and ours[3].endswith("%"), (ours, line)


def test_repeat_refuses_what_it_cannot_average(memscope):
    for args in (["-r", "2", "-p", "1"], ["-r", "2", "-I", "100", "--", "true"], ["-r", "0", "--", "true"]):
        res = stat(memscope, args)
        assert res.returncode == 2, (args, res.stderr)
        assert "-r" in res.stderr, res.stderr


def _place(cpu):
    top = "/sys/devices/system/cpu/cpu%d/topology/" % cpu

    def read(name, default="0"):
        try:
            with open(top + name) as f:
                return f.read().strip()
        except FileNotFoundError:
            return default
    return int(read("physical_package_id")), int(read("die_id")), int(read("core_id"))


def test_per_core_and_die_rows_add_up_their_cpus(memscope, touchmem, tmp_path):
    """One recording, read per CPU and per core/die: each core's (die's) row is the sum of its CPUs'
    rows, named and numbered as perf does (S0-D0-C0,CPUs,value,...)."""
    rec = tmp_path / "r.rec"
    res = run([memscope, "record", "-a", "-e", "page-faults,context-switches", "-o", str(rec), "--", touchmem, "8"])
    assert res.returncode == 0, res.stderr
    per_cpu = stat(memscope, ["--input", str(rec), "-A", "-x,"])
    assert per_cpu.returncode == 0, per_cpu.stderr
    cpu_value = {}
    for line in counter_output(per_cpu.stderr).splitlines():
        f = line.split(",")
        cpu_value[(int(f[0][3:]), f[3])] = int(f[1])
    cpus = sorted({c for c, _ in cpu_value})
    assert cpus == online_cpus()
    for mode in ("core", "die"):
        res = stat(memscope, ["--input", str(rec), "--per-" + mode, "-x,"])
        assert res.returncode == 0, res.stderr
        want = {}
        for cpu in cpus:
            s, d, c = _place(cpu)
            name = "S%d-D%d-C%d" % (s, d, c) if mode == "core" else "S%d-D%d" % (s, d)
            for event in ("page-faults", "context-switches"):
                n, v = want.get((name, event), (0, 0))
                want[(name, event)] = (n + 1, v + cpu_value[(cpu, event)])
        got = {}
        for line in counter_output(res.stderr).splitlines():
            f = line.split(",")
            assert len(f) == 9, line                      # aggr, nr, value, unit, event, runtime, pcnt, metric x2
            assert f[3] == "" and f[6] == "100.00", line
            got[(f[0], f[4])] = (int(f[1]), int(f[2]))
        assert got == want, (mode, got, want)
        assert sum(v for (n, e), (_, v) in got.items() if e == "page-faults") > 8 * 1024 * 1024 // PAGE
        js = stat(memscope, ["--input", str(rec), "--per-" + mode, "-j"])
        objs = [__import__("json").loads(line) for line in counter_output(js.stderr).splitlines()]
        assert {(o[mode], o["event"]): (o["aggregate-number"], perf_count(o["counter-value"])) for o in objs} == want
        text = stat(memscope, ["--input", str(rec), "--per-" + mode])
        for (name, event), (_, v) in want.items():
            # perf's lines: the row, its CPUs, the count, the event.
            assert re.search(r"^%s\s+%d\s+%s\s+%s$" % (name, want[(name, event)][0], format(v, ","), event),
                             counter_output(text.stderr), re.M), counter_output(text.stderr)


def test_per_core_refuses_metrics_and_other_rows(memscope):
    res = stat(memscope, ["--per-core", "--per-socket", "-a", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "--per-core and --per-socket: one kind of row at a time" in res.stderr, res.stderr
    res = stat(memscope, ["--per-die", "-a", "-m", "numa.hit", "--", "true"])
    assert res.returncode == 2 and "not per die" in res.stderr, res.stderr
