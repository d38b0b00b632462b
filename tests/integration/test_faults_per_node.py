"""proc.faults is not split by node (the probe keeps each thread's faults, not where they were
taken): --per-node rows leave it out as perf's forms do (memscope's --columns table says so in
its rows), stderr names the event once, and
the README, list --explain and the man page do not claim a per-node value."""
import os
import re

from conftest import run
from stat_output import counter_output, messages

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
MIB = 8
PAGES = MIB * 256


def test_per_node_rows_say_faults_are_not_split(memscope, touchmem):
    res = run([memscope, "stat", "--columns", "-e", "proc.faults,proc.pages_alloc", "--per-node", "--", touchmem,
               str(MIB)])
    assert res.returncode == 0, res.stderr
    faults = re.findall(r"^ node(\d+)\s+(\S+)  proc\.faults(.*)$", counter_output(res.stderr), re.M)
    pages = re.findall(r"^ node(\d+)\s+([\d,]+)  proc\.pages_alloc$", counter_output(res.stderr), re.M)
    nodes = sorted(int(n) for n in os.listdir("/sys/devices/system/node") if re.match(r"node\d+$", n)
                   for n in [n[4:]])
    assert [int(n) for n, _, _ in faults] == nodes, counter_output(res.stderr)
    for _, value, why in faults:
        assert value == "n/a" and "(not split by node: its source counts it as a whole)" in why, counter_output(res.stderr)
    # The pages are split: the workload's pages, placed on the nodes.
    placed = sum(int(v.replace(",", "")) for _, v in pages)
    assert PAGES <= placed <= PAGES * 1.05 + 64, counter_output(res.stderr)
    # Said once on stderr, with where the total is.
    notes = [line for line in messages(res.stderr).splitlines() if "not split by node" in line]
    assert notes == ["memscope stat: proc.faults is not split by node: its source counts it as a whole "
                     "(memscope list --explain proc.faults); its total is the run without --per-node"], res.stderr


def test_perf_text_leaves_the_rows_out(memscope, touchmem):
    res = run([memscope, "stat", "-e", "proc.faults,proc.pages_alloc", "--per-node", "--", touchmem, str(MIB)])
    assert res.returncode == 0, res.stderr
    # perf's lines: node, its CPUs, the value, the event.
    pages = re.findall(r"^N(\d+)\s+\d+\s+([\d,]+)\s+proc\.pages_alloc$", counter_output(res.stderr), re.M)
    assert pages and "proc.faults" not in counter_output(res.stderr), counter_output(res.stderr)
    assert PAGES <= sum(int(v.replace(",", "")) for _, v in pages) <= PAGES * 1.05 + 64, counter_output(res.stderr)
    assert "proc.faults is not split by node" in res.stderr


def test_csv_leaves_the_rows_out_and_says_so(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "-e", "proc.faults,proc.pages_alloc", "--per-node", "--", touchmem, str(MIB)])
    assert res.returncode == 0, res.stderr
    events = [line.split(",")[4] for line in counter_output(res.stderr).splitlines() if line.startswith("N")]
    assert "proc.pages_alloc" in events and "proc.faults" not in events, counter_output(res.stderr)
    assert "proc.faults is not split by node" in res.stderr
    # Without the split the total is there: the workload's faults.
    res = run([memscope, "stat", "-x,", "-e", "proc.faults", "--", touchmem, str(MIB)])
    assert res.returncode == 0, res.stderr
    total = int(next(line for line in counter_output(res.stderr).splitlines() if ",proc.faults," in line).split(",")[0])
    assert PAGES <= total <= PAGES * 1.05 + 200, counter_output(res.stderr)
    assert "not split" not in res.stderr


def test_split_events_get_no_note(memscope, touchmem):
    res = run([memscope, "stat", "-e", "page-faults,proc.pages_alloc", "--per-node", "--", touchmem, str(MIB)])
    assert res.returncode == 0, res.stderr
    assert "not split" not in res.stderr, res.stderr
    for event in ("page-faults", "proc.pages_alloc"):
        values = re.findall(rf"^N\d+\s+\d+\s+(\S+)\s+{re.escape(event)}$", counter_output(res.stderr), re.M)
        assert values and "n/a" not in values, counter_output(res.stderr)


def test_docs_and_list_do_not_offer_faults_per_node(memscope):
    readme = open(os.path.join(ROOT, "README.md")).read().split("\n")
    for line in readme:
        command = line.split("#")[0]
        assert not ("--per-node" in command and re.search(r"-e \S*proc\.faults", command)), line
    res = run([memscope, "list", "--explain", "proc.faults"])
    assert res.returncode == 0, res.stderr
    assert "Not split by node" in res.stdout and "no node split" in res.stdout, res.stdout
