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


# ---- An event two metrics share is counted in each one's group ----

def own_group(values, pmu, counts, running):
    """Every CPU's series of counts counted `running` of the time (1 s enabled): keys "event" or "event/#N"."""
    for cpu in range(16):
        for key, value in counts.items():
            name = f"{pmu}/{key}" + ("" if "/#" in key else "/")
            values[f"{name}@cpu{cpu}"] = {"value": value, "enabled_ns": 1000000000,
                                          "running_ns": int(running * 1000000000)}
    return values


def same_share(got, want):
    """A share printed as a fraction (0.45) or in percent (45.0)."""
    return got == pytest.approx(want, rel=1e-9) or got == pytest.approx(100 * want, rel=1e-9)


def recorded_plan(memscope, machine, replay, metrics, tmp_path):
    """record -m METRICS: the recording, and {metric: {(series, group)}} of its header's plan."""
    rec = tmp_path / f"{machine}.rec"
    r = run([memscope, "record", "--replay", str(replay), "-m", metrics, "-o", str(rec)], env=fixture_env(machine))
    assert r.returncode == 0, r.stderr
    header = json.loads(open(rec).readline())
    return rec, {m["name"]: {(e["series"], e["group"]) for e in m["events"]} for m in header["catalog"]["metrics"]}


# Skylake-SP levels 1-3 (perf's rule, largest first): memory bound's 13 general events take 4 groups and back-end
# bound reads them; DRAM bound's 7 take 2 more (its own cycles, #2) and L2 bound reads them, L3 bound the first of
# the two; L1 bound has STALLS_L1D_MISS and cycles in groups that take turns, so it gets a group of its own
# (cycles #3, STALLS_MEM_ANY and STALLS_L1D_MISS #2), and store bound's event joins it (BOUND_ON_STORES #2).
# Each copy here counts something else, multiplexed differently.
SKX_L3_COPIES = [("cycles/#2", 500, 0.25),
                 ("stalls_mem_any/#2", 300, 0.5), ("stalls_l1d_miss/#2", 200, 0.5), ("cycles/#3", 800, 0.5),
                 ("bound_on_stores/#2", 120, 0.5)]
SKX_L3_WANT = {"topdown.backend_bound": 0.45, "topdown.memory_bound": 270 / 830,   # copy 1, as alone
               "topdown.l1_bound": (600 - 400) / 1600, "topdown.store_bound": 240 / 1600,
               # cycles #2 = 500 / 0.25: (300 - 100) / 2000; 100 x 1.25 / (125 + 125) x (400 - 300) / 2000;
               # 100/2000 + 100/2000 - that
               "topdown.l3_bound": 0.1, "topdown.l2_bound": 0.025, "topdown.dram_bound": 0.075}


def skx_l3_replay(tmp_path):
    counts = {k: SKX[k] for k in SKX_L2 + ["stalls_l1d_miss", "stalls_l2_miss", "stalls_l3_miss", "load_l2_hit",
                                            "load_fb_hit", "load_l1_miss", "fb_full_cycles"]}
    values = per_cpu("cpu", counts, range(16))
    for key, value, running in SKX_L3_COPIES:
        own_group(values, "cpu", {key: value}, running)
    return write_replay(tmp_path / "skx-l3.jsonl", [(1.0, values)])


def test_skylake_sp_levels_1_to_3_each_metric_from_its_own_group(memscope, tmp_path):
    replay = skx_l3_replay(tmp_path)
    got = totals(memscope, "skylake-sp-2s", replay, "-M", "TopdownL1,TopdownL2,TopdownL3")
    assert list(got) == ["topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound",
                         "topdown.l3_bound", "topdown.dram_bound", "topdown.store_bound"]
    for metric, want in SKX_L3_WANT.items():
        assert same_share(got[metric], want), (metric, got[metric], want)
    rec, plan = recorded_plan(memscope, "skylake-sp-2s", replay, "TopdownL1,TopdownL2,TopdownL3", tmp_path)
    events = set().union(*plan.values())
    assert len(events) == 26 and len({g for _, g in events}) == 7
    assert sorted(s for s, _ in events if "#" in s) == sorted(
        ["cpu/event=0x3c/#2", "cpu/event=0x3c/#3", "cpu/event=0xa3,umask=0x14,cmask=20/#2",
         "cpu/event=0xa3,umask=0x0c,cmask=12/#2", "cpu/event=0xa6,umask=0x40/#2"])
    for metric in ("topdown.l1_bound", "topdown.l3_bound", "topdown.store_bound"):
        assert len({g for _, g in plan[metric]}) == 1, metric          # one group: the same time slices
    assert {g for _, g in plan["topdown.l1_bound"]} == {g for _, g in plan["topdown.store_bound"]}
    assert {g for _, g in plan["topdown.l3_bound"]} < {g for _, g in plan["topdown.dram_bound"]}
    assert ("cpu/event=0x3c/#3", min(g for _, g in plan["topdown.l1_bound"])) in plan["topdown.l1_bound"]
    # Read back with one level: the recorded groups and copies, so the same values.
    r = run([memscope, "stat", "--input", str(rec), "-M", "TopdownL3", "-x,"])
    assert r.returncode == 0, r.stderr
    back = {line.split(",")[2]: float(line.split(",")[5]) for line in counter_output(r.stderr).splitlines()}
    assert list(back) == ["topdown.l1_bound", "topdown.l2_bound", "topdown.l3_bound", "topdown.dram_bound",
                          "topdown.store_bound"]
    for metric, value in back.items():
        assert same_share(value, SKX_L3_WANT[metric]), metric


# Sapphire Rapids, -M memory: remote cache's 7 events lead (slots' group, and the msr TSC's); the other
# metrics join that group up to its 8 general counters (L1 bound is the last to fit); L2 bound starts a second
# group with its own cycles and STALLS_L1D_MISS (#2), and L3, DRAM, bandwidth, latency and store bound join it.
SPR_MEMORY_OWN = {"cycles/#2": 600, "stalls_l1d_miss/#2": 180, "stalls_l2_miss": 100, "stalls_l3_miss": 30,
                  "data_rd_outstanding_4": 60, "cycles_with_data_rd": 180, "bound_on_stores": 30}
SPR_MEMORY_WANT = dict(SPR_WANT, **{"topdown.l2_bound": (360 - 200) / 1200, "topdown.l3_bound": (200 - 60) / 1200,
                                    "topdown.dram_bound": 60 / 1200, "topdown.dram_bandwidth": 120 / 1200,
                                    "topdown.dram_latency": 360 / 1200 - 120 / 1200,
                                    "topdown.store_bound": 60 / 1200})


def test_sapphire_rapids_memory_each_metric_from_its_own_group(memscope, tmp_path):
    values = per_cpu("cpu", {k: v for k, v in SPR.items() if k not in SPR_MEMORY_OWN}, range(16))
    values["msr/tsc/"] = 2500000000
    own_group(values, "cpu", SPR_MEMORY_OWN, 0.5)          # the second group counted half the time
    replay = write_replay(tmp_path / "spr-memory.jsonl", [(1.0, values)])
    got = totals(memscope, "sapphire-rapids-2s", replay, "-M", "memory")
    assert list(got) == MEMORY
    for metric in MEMORY:
        assert same_share(got[metric], SPR_MEMORY_WANT[metric]), (metric, got[metric], SPR_MEMORY_WANT[metric])
    _, plan = recorded_plan(memscope, "sapphire-rapids-2s", replay, "memory", tmp_path)
    events = set().union(*plan.values())
    assert len(events) == 24 and len({g for _, g in events}) == 3
    assert sorted(s for s, _ in events if "#" in s) == ["cpu/event=0x3c/#2", "cpu/event=0x47,umask=0x03,cmask=3/#2"]
    slots_group = {g for s, g in plan["topdown.backend_bound"]}
    assert len(slots_group) == 1 and {g for s, g in plan["topdown.l1_bound"]} == slots_group
    assert len({g for s, g in plan["topdown.l2_bound"]}) == 1 and {g for s, g in plan["topdown.l2_bound"]} != slots_group


def shared_page_faults_catalog(tmp_path):
    """A catalog copy whose perf software PMU has 2 counters and two metrics that share page-faults: their
    3 events do not fit one group."""
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", cat, ignore=shutil.ignore_patterns("meson.build"))
    fam = cat / "pmu" / "linux-kernel.yaml"
    text = fam.read_text()
    for old, new in [("    scope: cpu\n    description: perf software events",
                      "    scope: cpu\n    counters: 2\n    description: perf software events"),
                     ("      cpu_migrations: { perf: cpu-migrations,",
                      "      context_switches: { perf: context-switches, description: task switches }\n"
                      "      cpu_migrations: { perf: cpu-migrations,"),
                     ("\nmetrics:\n", "\nmetrics:\n"
                      "  test.faults_a:\n    - formula: sw.page_faults + 0 * sw.context_switches\n      source: a test\n"
                      "  test.faults_b:\n    - formula: sw.page_faults + 0 * sw.cpu_migrations\n      source: a test\n")]:
        assert old in text, old
        text = text.replace(old, new, 1)
    fam.write_text(text)
    with open(cat / "metrics.yaml", "a") as f:
        for name in ("test.faults_a", "test.faults_b"):
            f.write(f"  - name: {name}\n    unit: faults\n    kind: counter\n    description: page faults, for a test\n")
    return cat


def test_a_shared_event_is_opened_in_each_group_on_this_host(memscope, touchmem, tmp_path):
    """Live, on this host's perf software PMU (given 2 counters in a catalog copy): page-faults, which both metrics
    read, is opened in each one's group (the second copy page-faults#2, from the same event string), and each
    metric counts the command's faults from its own copy: the same number, at least the 256 pages touched."""
    env = dict(os.environ, MEMSCOPE_CATALOG_DIR=str(shared_page_faults_catalog(tmp_path)))
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "test.faults_a,test.faults_b", "--", touchmem,
               "256"], env=env)
    assert res.returncode == 0, res.stderr
    rows = {f[2]: float(f[3]) for f in (line.split(",") for line in counter_output(res.stderr).splitlines())
            if len(f) > 3 and f[0] == "total"}
    assert rows["test.faults_a"] >= 256 and rows["test.faults_b"] == rows["test.faults_a"], counter_output(res.stderr)
    rec = tmp_path / "faults.rec"
    res = run([memscope, "record", "-m", "test.faults_a,test.faults_b", "-o", str(rec), "--", touchmem, "256"],
              env=env)
    assert res.returncode == 0, res.stderr
    header = json.loads(open(rec).readline())
    plan = {m["name"]: {(e["series"], e["group"]) for e in m["events"]} for m in header["catalog"]["metrics"]}
    assert {s for s, _ in plan["test.faults_a"]} == {"page-faults", "context-switches"}
    assert {s for s, _ in plan["test.faults_b"]} == {"page-faults#2", "cpu-migrations"}
    groups = [{g for _, g in plan[m]} for m in ("test.faults_a", "test.faults_b")]
    assert len(groups[0]) == 1 and len(groups[1]) == 1 and groups[0] != groups[1]
    assert {"page-faults", "page-faults#2"} <= {s["name"] for s in header["series"]}
