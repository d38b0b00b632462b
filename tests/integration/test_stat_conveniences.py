"""perf stat's conveniences in memscope stat: --interval-count, --timeout, -o FILE, -A/--no-aggr."""
import os
import re
import time

from conftest import run
from stat_output import intervals, parse_csv, totals

PAGE = 4096


def stat(memscope, args, **kw):
    return run([memscope, "stat"] + args, **kw)


def test_interval_count_gives_that_many_lines_and_totals_of_them(memscope):
    start = time.monotonic()
    res = stat(memscope, ["-x,", "--self-describing", "-I", "100", "--interval-count", "3",
                          "-e", "task-clock,context-switches", "--", "sleep", "30"])
    took = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    rows = parse_csv(res.stdout)
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
    rows = parse_csv(res.stdout)
    assert ("total", "task-clock") in totals(rows)
    # The text form says how long it counted: the timeout, not sleep's 30 s.
    res = stat(memscope, ["--timeout", "300", "-e", "task-clock", "--", "sleep", "30"])
    assert res.returncode == 0, res.stderr
    elapsed = float(re.search(r"([0-9.]+) +seconds time elapsed", res.stdout).group(1))
    assert 0.29 <= elapsed < 15, elapsed


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
    assert res.stdout == ""
    faults = totals(parse_csv(out.read_text()))[("total", "page-faults")]
    expected = 40 * 1024 * 1024 // PAGE
    assert abs(faults - expected) <= 0.02 * expected, faults
    # Text: the same lines as on standard output, numbers aside.
    text = tmp_path / "stat.txt"
    res = stat(memscope, ["-o", str(text), "-I", "100", "-e", "page-faults", "--", "sleep", "0.35"])
    assert res.returncode == 0 and res.stdout == "", res.stderr
    res2 = stat(memscope, ["-I", "100", "-e", "page-faults", "--", "sleep", "0.35"])

    def shape(s):
        return [re.sub(r"[0-9.]+", "N", line) for line in s.splitlines()]

    a, b = shape(text.read_text()), shape(res2.stdout)
    assert a[0] == b[0] and "page-faults" in a[0]
    assert [l for l in a if "Memory-system" in l] == [l for l in b if "Memory-system" in l]
    assert any("seconds time elapsed" in l for l in a)


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
        rows[flag] = sorted(s for (s, e) in totals(parse_csv(res.stdout)))
    assert rows["-A"] == rows["--no-aggr"] == rows["--per-cpu"]
    assert len(rows["-A"]) == ncpu, rows
    res = stat(memscope, ["-A", "--per-node", "-a", "-e", "task-clock", "--", "true"])
    assert res.returncode == 2 and "one kind of row at a time" in res.stderr, res.stderr
