"""Metric groups as perf's users ask for them: `stat -M TopdownL1`, `-M TopdownL2`, `-M memory` and `--td-level N`
replayed on the Skylake-SP and Sapphire Rapids fixture trees (the counts of test_topdown.py, values worked out by
hand there and here), mixed with metric names, in perf's text, CSV and JSON shapes; on this host (no PMU) each
metric of a group named with its reason; an unknown name a usage error naming the groups; list --groups."""
import json
import os
import re
import shutil

import pytest

from stat_output import counter_output, messages
from conftest import ROOT, fixture_env, run
from test_topdown import SKX, SPR, per_cpu, skx_values, write_replay

MEMORY = ["topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound",
          "topdown.l3_bound", "topdown.dram_bound", "topdown.dram_bandwidth", "topdown.dram_latency",
          "topdown.store_bound", "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache"]
GROUP_NAMES = "TopdownL1, memory, TopdownL2, TopdownL3, TopdownL4, TopdownL5"

# A replay holds exactly the series of the metrics asked for (any other is an error): the Skylake-SP events
# perf's tma_backend_bound reads, then those tma_memory_bound adds.
SKX_L1 = ["cycles", "cycles_any", "one_thread_active", "ref_xclk", "idq_uops_not_delivered", "uops_issued",
          "recovery_cycles", "recovery_cycles_any"]
SKX_L2 = SKX_L1 + ["uops_retired_slots", "stalls_total", "stalls_mem_any", "ports_util_1", "ports_util_2",
                   "bound_on_stores"]
# Sapphire Rapids: the PERF_METRICS shares under slots.
SPR_L1 = ["slots", "td_fe_bound", "td_bad_spec", "td_retiring", "td_be_bound"]
SPR_L2 = SPR_L1 + ["td_mem_bound"]

# Hand-computed in test_topdown.py (the same counts): Skylake-SP 1000 core clocks, 4000 slots a CPU...
SKX_WANT = {"topdown.backend_bound": 0.45, "topdown.memory_bound": 270 / 830, "topdown.l1_bound": 0.1,
            "topdown.l2_bound": 0.05, "topdown.l3_bound": 0.15, "topdown.dram_bound": 0.2,
            "topdown.dram_bandwidth": 0.08, "topdown.dram_latency": 0.07, "topdown.store_bound": 0.1,
            "topdown.local_dram": 59.5 * 4 * 1.125 / 1000, "topdown.remote_dram": 127 * 4 * 1.125 / 1000,
            "topdown.remote_cache": 0.0}
# ... Sapphire Rapids 600 of 1000 slots back-end bound, 300 memory bound.
SPR_WANT = {"topdown.backend_bound": 0.6, "topdown.memory_bound": 0.3, "topdown.l1_bound": 0.2,
            "topdown.l2_bound": 0.1, "topdown.l3_bound": 0.15, "topdown.dram_bound": 0.05,
            "topdown.dram_bandwidth": 0.1, "topdown.dram_latency": 0.2, "topdown.store_bound": 0.04,
            "topdown.local_dram": 72 * 5 / 1000, "topdown.remote_dram": 0.0, "topdown.remote_cache": 133 * 5 / 1000}


def skx_replay(tmp_path, events=None):
    values = skx_values()
    if events is not None:
        values = per_cpu("cpu", {k: SKX[k] for k in events}, range(16))
    return write_replay(tmp_path / "skx.jsonl", [(1.0, values)])


def spr_replay(tmp_path, events=None):
    values = per_cpu("cpu", {k: v for k, v in SPR.items() if events is None or k in events}, range(16))
    if events is None:
        values["msr/tsc/"] = 2500000000             # 2.5 GHz TSC; 2 cycles a TSC tick: 5 GHz
    return write_replay(tmp_path / "spr.jsonl", [(1.0, values)])


def totals(memscope, machine, replay, *args):
    """stat --replay ARGS -x, --self-describing: {metric: value} of the totals, in the order printed."""
    r = run([memscope, "stat", "--replay", str(replay), *args, "-x,", "--self-describing"], env=fixture_env(machine))
    assert r.returncode == 0, r.stderr
    assert messages(r.stderr) == "", r.stderr
    out = {}
    for line in counter_output(r.stderr).splitlines()[1:]:
        time_, scope, metric, value = line.split(",")[:4]
        if time_ == "total" and scope == "total":
            out[metric] = float(value)
    return out


def check(got, want, metrics):
    assert list(got) == metrics
    for metric in metrics:
        assert got[metric] == pytest.approx(want[metric], rel=1e-9), metric


@pytest.mark.parametrize("machine, replay, l1, l2, want", [
    ("skylake-sp-2s", skx_replay, SKX_L1, SKX_L2, SKX_WANT),
    ("sapphire-rapids-2s", spr_replay, SPR_L1, SPR_L2, SPR_WANT)])
def test_each_group_is_its_metrics_with_the_values_by_hand(memscope, tmp_path, machine, replay, l1, l2, want):
    check(totals(memscope, machine, replay(tmp_path, l1), "-M", "TopdownL1"), want, ["topdown.backend_bound"])
    check(totals(memscope, machine, replay(tmp_path, l2), "-M", "TopdownL2"), want, ["topdown.memory_bound"])
    # perf's --td-level 2: levels 1 and 2.
    check(totals(memscope, machine, replay(tmp_path, l2), "--td-level", "2"), want,
          ["topdown.backend_bound", "topdown.memory_bound"])
    check(totals(memscope, machine, replay(tmp_path, l1), "--td-level", "1"), want, ["topdown.backend_bound"])
    # perf's 0: every level, TopdownL1 to TopdownL5 - the twelve, level by level.
    check(totals(memscope, machine, replay(tmp_path), "--td-level", "0"), want,
          ["topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound", "topdown.l3_bound",
           "topdown.dram_bound", "topdown.store_bound", "topdown.dram_bandwidth", "topdown.dram_latency",
           "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache"])
    check(totals(memscope, machine, replay(tmp_path), "-M", "memory"), want, MEMORY)
    # -m takes groups too; a group beside a metric of it and another name: each metric once, in the order asked.
    check(totals(memscope, machine, replay(tmp_path), "-m", "TopdownL4,topdown.dram_bandwidth,TopdownL5,memory"),
          want, ["topdown.dram_bandwidth", "topdown.dram_latency", "topdown.local_dram", "topdown.remote_dram",
                 "topdown.remote_cache", "topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound",
                 "topdown.l2_bound", "topdown.l3_bound", "topdown.dram_bound", "topdown.store_bound"])
    check(totals(memscope, machine, replay(tmp_path, l2), "-M", "topdown.memory_bound", "-M", "TopdownL1"), want,
          ["topdown.memory_bound", "topdown.backend_bound"])


def test_group_metrics_in_perfs_shapes(memscope, tmp_path):
    """perf's text: a metric without a counter after '#' in the metric column; CSV: its value in perf's metric
    field; JSON: metric-value - the same lines -m gives for the same names. The top-down metrics have perf's
    ScaleUnit 100%: printed as perf prints tma_backend_bound, "%8.1f" of the percentage then "%" ("45.0 %")."""
    replay = skx_replay(tmp_path, SKX_L2)
    env = fixture_env("skylake-sp-2s")
    text = run([memscope, "stat", "--replay", str(replay), "--td-level", "2"], env=env)
    assert text.returncode == 0, text.stderr
    lines = [line for line in counter_output(text.stderr).splitlines() if "#" in line]
    # perf: " # " then "%8.1f" then " %  name" (stat-shadow's "%s  %s" of unit and metric).
    assert lines == [" " * 56 + "#     45.0 %  topdown.backend_bound",
                     " " * 56 + "#     32.5 %  topdown.memory_bound"], text.stderr   # 270/830 = 32.53%
    by_name = run([memscope, "stat", "--replay", str(replay), "-m", "topdown.backend_bound,topdown.memory_bound"],
                  env=env)
    assert counter_output(by_name.stderr) == counter_output(text.stderr)
    csv = run([memscope, "stat", "--replay", str(replay), "-M", "TopdownL2,TopdownL1", "-x,"], env=env)
    assert csv.returncode == 0, csv.stderr
    rows = [line.split(",") for line in counter_output(csv.stderr).splitlines()]
    assert [(r[2], r[5], r[6]) for r in rows] == [("topdown.memory_bound", "32.5", "%"),
                                                  ("topdown.backend_bound", "45.0", "%")], rows
    js = run([memscope, "stat", "--replay", str(replay), "-M", "TopdownL1,TopdownL2", "-j"], env=env)
    js_lines = counter_output(js.stderr).splitlines()
    assert js_lines[0].endswith('"metric-value" : 45.000000, "metric-unit" : "%"}'), js_lines   # perf's "%f"
    objs = [json.loads(line) for line in js_lines]
    assert [(o["event"], o["metric-value"], o["metric-unit"]) for o in objs] == [
        ("topdown.backend_bound", 45.0, "%"), ("topdown.memory_bound", pytest.approx(27000 / 830, abs=5e-7), "%")]
    # --metric-only: the percentage under a title naming the unit.
    only = run([memscope, "stat", "--replay", str(replay), "-M", "TopdownL1,TopdownL2", "--metric-only", "-x,"],
               env=env)
    assert counter_output(only.stderr).splitlines() == ["topdown.backend_bound (%),topdown.memory_bound (%),",
                                                        "45.0,32.5,"], only.stderr
    only = run([memscope, "stat", "--replay", str(replay), "-M", "TopdownL1,TopdownL2", "--metric-only", "-j",
                "--per-node"], env=env)
    assert counter_output(only.stderr).splitlines()[0] == (
        '{"node" : "N0", "aggregate-number" : 8, "topdown.backend_bound (%)" : "45.0", '
        '"topdown.memory_bound (%)" : "32.5"}'), only.stderr
    # No clock counted: no metric has a value, and perf's line for that is {"metric-value" : "none"}.
    idle = write_replay(tmp_path / "idle.jsonl", [(1.0, per_cpu("cpu", {k: 0 for k in SKX_L1}, range(16)))])
    only = run([memscope, "stat", "--replay", str(idle), "-M", "TopdownL1", "--metric-only", "-j", "--per-node"],
               env=env)
    assert counter_output(only.stderr).splitlines() == [
        '{"node" : "N0", "aggregate-number" : 8, "metric-value" : "none"}',
        '{"node" : "N1", "aggregate-number" : 8, "metric-value" : "none"}'], only.stderr
    # memscope's own shapes keep the ratio (a recording, --self-describing, Lua read 0.45).
    check(totals(memscope, "skylake-sp-2s", replay, "-M", "TopdownL1,TopdownL2"), SKX_WANT,
          ["topdown.backend_bound", "topdown.memory_bound"])


def test_scale_unit_that_is_not_a_factor_and_unit_names_the_line(memscope, tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", root, ignore=shutil.ignore_patterns("meson.build"))
    text = (root / "metrics.yaml").read_text()
    assert text.count("scale_unit: 100%") == 12
    (root / "metrics.yaml").write_text(text.replace("scale_unit: 100%", "scale_unit: percent", 1))
    line = text[:text.index("scale_unit: 100%")].count("\n") + 1
    r = run([memscope, "list", "--metrics"], env=dict(os.environ, MEMSCOPE_CATALOG_DIR=str(root)))
    assert r.returncode != 0
    assert f"metrics.yaml:{line}" in r.stderr and "scale_unit 'percent' is not a factor and a unit" in r.stderr, \
        r.stderr


def test_no_pmu_here_names_each_metric_of_the_group_with_its_reason(memscope):
    r = run([memscope, "stat", "-M", "TopdownL1", "--", "true"])
    assert r.returncode == 1, r
    assert "metric 'topdown.backend_bound' is not available on this host: " in r.stderr, r.stderr
    r = run([memscope, "stat", "-M", "TopdownL3", "--", "true"])
    assert r.returncode == 1, r
    assert "none of the metrics asked for can be counted on this host" in r.stderr
    for metric in ["topdown.l1_bound", "topdown.l2_bound", "topdown.l3_bound", "topdown.dram_bound",
                   "topdown.store_bound"]:
        assert f"'{metric}': " in r.stderr, r.stderr
    # Something else to count: each metric is a note with its reason, the run counts the rest and succeeds.
    r = run([memscope, "stat", "-M", "memory", "-e", "page-faults", "-x,", "--", "true"])
    assert r.returncode == 0, r.stderr
    notes = re.findall(r"note: metric '([^']+)' is not available on this host: (.+?) \(memscope list --explain",
                       r.stderr)
    assert [m for m, _ in notes] == MEMORY, r.stderr
    assert all(why for _, why in notes)
    assert [line.split(",")[2] for line in counter_output(r.stderr).splitlines()] == ["page-faults"]


def test_unknown_group_is_a_usage_error_naming_the_groups(memscope, tmp_path):
    for args in (["-M", "TopdownL9"], ["-m", "topdown.memory_bound,Topdownl1x"]):
        r = run([memscope, "stat", *args, "--", "true"])
        assert r.returncode == 2, r
        assert f"nor is it a metric group (the groups: {GROUP_NAMES})" in r.stderr, r.stderr
    assert "unknown metric 'TopdownL9'; did you mean 'TopdownL1', 'TopdownL2' or 'TopdownL3'?" in \
        run([memscope, "stat", "-M", "TopdownL9", "--", "true"]).stderr
    # Group names are perf's, case and all.
    r = run([memscope, "stat", "--replay", str(skx_replay(tmp_path, SKX_L1)), "-M", "topdownl1"],
            env=fixture_env("skylake-sp-2s"))
    assert r.returncode == 2 and "unknown metric 'topdownl1'; did you mean 'TopdownL1'" in r.stderr, r.stderr
    for level in ("6", "-1", "two", "1x", ""):
        r = run([memscope, "stat", "--td-level", level, "--", "true"])
        assert r.returncode == 2, r
        assert f"--td-level {level}: give a level from 1 to 5 (TopdownL1 ... TopdownL5), or 0 for every level" \
            in r.stderr, r.stderr


def test_list_groups_shows_each_group_with_its_metrics(memscope):
    r = run([memscope, "list", "--groups"], env=fixture_env("skylake-sp-2s"))
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[2:]}
    assert list(rows) == ["TopdownL1", "memory", "TopdownL2", "TopdownL3", "TopdownL4", "TopdownL5"]
    assert re.match(r"^TopdownL1 +1 of 1 +topdown\.backend_bound$", rows["TopdownL1"])
    assert re.match(r"^TopdownL4 +2 of 2 +topdown\.dram_bandwidth, topdown\.dram_latency$", rows["TopdownL4"])
    assert rows["memory"].split(None, 4)[1:4] == ["12", "of", "12"]
    assert rows["memory"].split(None, 4)[4].split(", ") == MEMORY
    # This host has no PMU: each marked, and --metrics ends with the same table.
    here = run([memscope, "list", "--groups"])
    assert re.search(r"^TopdownL1 +0 of 1 +topdown\.backend_bound \(no\)$", here.stdout, re.M), here.stdout
    metrics = run([memscope, "list", "--metrics"])
    assert metrics.stdout.endswith(here.stdout)
    # The shell completes them after -m and -M.
    words = run([memscope, "completion", "--list", "metrics"]).stdout.splitlines()
    assert words[-6:] == ["TopdownL1", "memory", "TopdownL2", "TopdownL3", "TopdownL4", "TopdownL5"]
    assert "-M) _memscope_value metrics" in run([memscope, "completion", "bash"]).stdout


def test_a_recording_takes_groups_when_made_and_when_read(memscope, tmp_path):
    replay = skx_replay(tmp_path, SKX_L2)
    rec = tmp_path / "skx.rec"
    r = run([memscope, "record", "--replay", str(replay), "-m", "TopdownL2,TopdownL1", "-o", str(rec)],
            env=fixture_env("skylake-sp-2s"))
    assert r.returncode == 0, r.stderr
    # Read back on this host: the groups resolve on the recorded Skylake-SP.
    r = run([memscope, "stat", "--input", str(rec), "-M", "TopdownL1", "-x,"])
    assert r.returncode == 0, r.stderr
    assert [line.split(",")[2] for line in counter_output(r.stderr).splitlines()] == ["topdown.backend_bound"]
    assert counter_output(r.stderr).split(",")[5:7] == ["45.0", "%\n"]     # 0.45, perf's ScaleUnit 100%
    r = run([memscope, "stat", "--input", str(rec), "-M", "TopdownL9"])
    assert r.returncode == 2 and f"nor is it a metric group (the groups: {GROUP_NAMES})" in r.stderr, r.stderr
