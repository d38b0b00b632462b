"""stat -G and --for-each-cgroup: perf events counted only while the tasks of a cgroup v2 group
run. Each test makes its own cgroups, puts a touchmem of a known size in each (a shell writes
its pid into cgroup.procs, then execs it) while another touchmem runs outside, and checks that
each cgroup's page faults are its own workload's pages, not the whole system's."""
import csv
import io
import json
import os
import time

import pytest

from conftest import cgroup2_mount, remove_cgroup, run
from stat_output import counter_output, perf_count

PAGE = os.sysconf("SC_PAGE_SIZE")
# touchmem touches each page of its buffer once; it and the shell that starts it fault a few
# hundred more pages (their code, stack, libc).
OVERHEAD_PAGES = 600
# Into a cgroup, then the workload.
ENTER = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'


@pytest.fixture
def cgroups():
    """A factory of fresh cgroup v2 groups (name, path), all removed afterwards."""
    mount = cgroup2_mount()
    if os.geteuid() != 0 or not mount:
        pytest.skip("needs root and a cgroup v2 hierarchy")
    made = []

    def make():
        name = f"memscope-G-{os.getpid()}-{time.monotonic_ns()}"
        path = mount / name
        path.mkdir()
        made.append(path)
        return name, path
    yield make
    for path in made:
        remove_cgroup(path)


def workload(touchmem, inside, outside_mb=128):
    """A shell command: a touchmem of MB in each (cgroup path, MB) of inside, and one of
    outside_mb MB outside every cgroup, all at once."""
    parts = [f"sh -c '{ENTER}' sh {path} {touchmem} {mb} &" for path, mb in inside]
    parts.append(f"{touchmem} {outside_mb} & wait")
    return ["sh", "-c", " ".join(parts)]


def pages(mb):
    return mb * 1024 * 1024 // PAGE


def assert_own_pages(count, mb, what):
    assert pages(mb) <= count <= pages(mb) + OVERHEAD_PAGES, \
        f"{what}: {count} page faults, its workload touches {pages(mb)} pages"


def csv_rows(text):
    return [r for r in csv.reader(io.StringIO(text)) if len(r) > 3 and not r[0].startswith("#")]


def test_G_counts_its_workloads_faults_only(memscope, touchmem, cgroups):
    name, path = cgroups()
    res = run([memscope, "stat", "-a", "-x,", "-e", "page-faults,minor-faults", "-G", name, "--"]
              + workload(touchmem, [(path, 64)], outside_mb=128))
    assert res.returncode == 0, res.stderr
    rows = csv_rows(counter_output(res.stderr))
    # perf's -x fields with -G: value, unit, event, cgroup, runtime, pcnt, metric value, metric unit.
    assert [(r[2], r[3]) for r in rows] == [("page-faults", name), ("minor-faults", name)], rows
    for r in rows:
        assert len(r) == 8, r
        # The 128 MB outside the cgroup (32768 pages) is not in it.
        assert_own_pages(int(r[0]), 64, r[2])
        assert float(r[5]) == 100.0


def test_for_each_cgroup_counts_each_cgroup_apart(memscope, touchmem, cgroups):
    (a, path_a), (b, path_b) = cgroups(), cgroups()
    res = run([memscope, "stat", "-a", "-j", "-e", "page-faults,minor-faults", "--for-each-cgroup", f"{a},{b}",
               "--"] + workload(touchmem, [(path_a, 32), (path_b, 96)], outside_mb=64))
    assert res.returncode == 0, res.stderr
    objs = [json.loads(line) for line in counter_output(res.stderr).splitlines() if line.startswith("{")]
    # perf's order: each cgroup, every event; "cgroup" after "event".
    assert [(o["event"], o["cgroup"]) for o in objs] == [
        ("page-faults", a), ("minor-faults", a), ("page-faults", b), ("minor-faults", b)], objs
    assert list(objs[0])[:5] == ["counter-value", "unit", "event", "cgroup", "event-runtime"]
    for o in objs:
        assert_own_pages(perf_count(o["counter-value"]), 32 if o["cgroup"] == a else 96, f"{o['event']} in {o['cgroup']}")


def test_agrees_with_perf_stat_G(memscope, touchmem, cgroups):
    name, path = cgroups()
    args = ["-a", "-x,", "-e", "page-faults", "-G", name, "--"] + workload(touchmem, [(path, 64)])
    ours = run([memscope, "stat"] + args)
    theirs = run(["perf", "stat"] + args)
    assert ours.returncode == 0, ours.stderr
    if theirs.returncode != 0:
        pytest.skip(f"perf stat -G does not run here: {theirs.stderr.strip()[-200:]}")
    mine, perfs = csv_rows(counter_output(ours.stderr)), csv_rows(theirs.stderr)
    assert len(mine) == len(perfs) == 1, (mine, perfs)
    # The same fields, in the same order.
    assert [mine[0][i] for i in (1, 2, 3, 5)] == [perfs[0][i] for i in (1, 2, 3, 5)], (mine, perfs)
    m, p = int(mine[0][0]), int(perfs[0][0])
    assert abs(m - p) <= 0.03 * p, f"memscope {m}, perf {p}"
    assert_own_pages(m, 64, "memscope")


def test_text_rows_carry_the_cgroup(memscope, cgroups):
    name, path = cgroups()
    res = run([memscope, "stat", "-a", "-e", "page-faults", "-G", str(path), "--", "sh", "-c", ENTER, "sh",
               str(path), "true"])
    assert res.returncode == 0, res.stderr
    line = next(l for l in counter_output(res.stderr).splitlines() if "page-faults" in l)
    # An absolute path names the same cgroup; the row shows it as given, after the event.
    assert line.split()[1:] == ["page-faults", str(path)], line
    assert int(line.split()[0].replace(",", "")) > 0, line


@pytest.mark.parametrize("args, message", [
    (["-p", "1", "-e", "page-faults", "-G", "/"], "excludes -p"),
    (["-e", "page-faults", "-G", "/", "--", "true"], "add -a"),
    (["-a", "-e", "page-faults", "-G", "/,/", "--", "true"], "names 2 cgroups for 1 -e events"),
    (["-a", "-G", "/", "--", "true"], "give the events with -e"),
    (["-a", "-m", "mem.read_bw", "-G", "/", "--", "true"], "-m metrics are not counted per cgroup"),
    (["-a", "-e", "page-faults,proc.faults", "-G", "/", "--", "true"],
     "'proc.faults' comes from the bpf source, which counts every task"),
    (["-a", "-e", "page-faults", "--for-each-cgroup", "/", "--per-thread", "--", "true"], "excludes --per-thread"),
    (["-a", "-e", "page-faults", "--for-each-cgroup", "a,b,a", "--", "true"], "names cgroup 'a' twice"),
    (["-a", "-x,", "--self-describing", "-e", "page-faults", "-G", "/", "--", "true"],
     "excludes --self-describing"),
])
def test_refusals(memscope, args, message):
    res = run([memscope, "stat"] + args)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert message in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert res.stdout == "" and counter_output(res.stderr) == ""


def test_a_missing_cgroup_names_the_path_looked_up(memscope):
    mount = cgroup2_mount()
    if not mount:
        pytest.skip("no cgroup v2 hierarchy")
    name = f"memscope-none-{os.getpid()}"
    res = run([memscope, "stat", "-a", "-e", "page-faults", "-G", name, "--", "true"])
    assert res.returncode == 2, res.stderr
    assert f"cannot open {mount / name}: No such file or directory" in res.stderr, res.stderr
    assert "cgroup v2" in res.stderr and res.stderr.count("\n") == 1, res.stderr
