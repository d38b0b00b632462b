"""The memory top-down as a user meets it: `stat --replay -m topdown.*` and `report --lua topdown.lua` on the
Skylake-SP, Sapphire Rapids, EPYC Zen 4 and Neoverse N1 fixture trees, every level checked against values
worked out by hand from the replayed counts; the report of a memory-bound and of a core-bound run (the
dominant branch marked, a column per node, DRAM bandwidth against what validate stored); and a run on a
host without a PMU, which says so once and shows what the kernel still counts."""
import json

import pytest

from conftest import FIXTURES, fixture_env, run
from stat_output import counter_output

TOPDOWN = ["topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound",
           "topdown.l3_bound", "topdown.dram_bound", "topdown.dram_bandwidth", "topdown.dram_latency",
           "topdown.store_bound", "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache"]


def write_replay(path, frames):
    with open(path, "w") as f:
        f.write(json.dumps({"format": "memscope-replay", "version": 1}) + "\n")
        for t, values in frames:
            f.write(json.dumps({"t": t, "values": values}) + "\n")
    return path


def per_cpu(pmu, counts, cpus, override=None):
    """Series of every CPU: counts for each, override(cpu) -> changes for some."""
    v = {}
    for cpu in cpus:
        c = dict(counts, **(override(cpu) if override else {}))
        for name, value in c.items():
            v[f"{pmu}/{name}/@cpu{cpu}"] = value
    return v


def stat(memscope, machine, replay, metrics, env=None):
    """stat --replay -x, --self-describing, for the system and --per-node: {(scope, metric): value or None}
    of the run (scope "total" or "nodeN")."""
    out = {}
    for args in ([], ["--per-node"]):
        r = run([memscope, "stat", "--replay", str(replay), "-m", ",".join(metrics), "-x,", "--self-describing",
                 *args], env=env or fixture_env(machine))
        assert r.returncode == 0, r.stderr
        for line in counter_output(r.stderr).splitlines()[1:]:
            time_, scope, metric, value = line.split(",")[:4]
            if time_ == "total":
                out[(scope, metric)] = None if value.startswith("<") else float(value)
    return out


def report(memscope, machine, replay, env=None):
    r = run([memscope, "report", "--format", "json", "--replay", str(replay), "--lua", "topdown.lua"],
            env=env or fixture_env(machine))
    assert r.returncode == 0, r.stderr
    tables, notes = {}, []
    for line in r.stdout.splitlines():
        obj = json.loads(line)
        if "title" in obj:
            tables[obj["title"]] = obj
        else:
            notes.append(obj["note"])
    tree = tables["Memory top-down (system, over the run)"]
    return {row["branch"]: row for row in tree["rows"]}, tree, notes


# ---- Skylake-SP: 16 CPUs (2 per core), nodes 0 (CPUs 0-3, 8-11) and 1 (4-7, 12-15) ----

SKX = {"cycles": 1000, "cycles_any": 2000, "one_thread_active": 0, "ref_xclk": 1, "ref_tsc": 500,
       "idq_uops_not_delivered": 400, "uops_issued": 1600, "recovery_cycles": 0, "recovery_cycles_any": 100,
       "uops_retired_slots": 1200, "stalls_total": 600, "stalls_mem_any": 500, "stalls_l1d_miss": 400,
       "stalls_l2_miss": 300, "stalls_l3_miss": 100, "ports_util_1": 100, "ports_util_2": 100,
       "bound_on_stores": 100, "load_l2_hit": 100, "load_fb_hit": 50, "load_l1_miss": 200, "fb_full_cycles": 125,
       "data_rd_outstanding_4": 80, "cycles_with_data_rd": 150, "l3_miss_local_dram": 1, "l3_miss_remote_dram": 1,
       "l3_miss_remote_hitm": 0, "l3_miss_remote_fwd": 0}
NODE1 = {4, 5, 6, 7, 12, 13, 14, 15}


def skx_values(memory_bound=True):
    """Every CPU the same, except node 1's CPUs stall twice as long on L3 misses (memory-bound run) - or a
    run that hardly waits on memory (core-bound)."""
    counts = dict(SKX)
    if not memory_bound:
        counts.update(stalls_mem_any=50, bound_on_stores=10)
    v = per_cpu("cpu", counts, range(16), lambda c: {"stalls_l3_miss": 200} if c in NODE1 and memory_bound else {})
    v["msr/tsc/"] = 2000000000                   # one CPU's TSC over 1 s: 2 GHz
    return v


def test_skylake_sp_every_level_by_hand(memscope, tmp_path):
    replay = write_replay(tmp_path / "skx.jsonl", [(1.0, skx_values())])
    got = stat(memscope, "skylake-sp-2s", replay, TOPDOWN)
    # SMT on, counted on every CPU: core clocks = CPU_CLK_UNHALTED.THREAD_ANY / 2 = 1000, slots 4000 a CPU.
    # frontend 400/4000 = 0.1; bad speculation + retiring (1600 + 4 x 100/2)/4000 = 0.45: backend 0.45.
    # retiring 1200/4000 = 0.3; memory = (500 + 100) / (600 + (100 + 0.3 x 100) + 100) x 0.45 = 270/830.
    want = {"topdown.backend_bound": 0.45, "topdown.memory_bound": 270 / 830,
            "topdown.l1_bound": 0.1,                       # (500 - 400)/1000
            "topdown.l2_bound": 0.05,                      # 100 x 1.25 / (125 + 125) x (400 - 300)/1000
            "topdown.store_bound": 0.1,                    # 100/1000
            "topdown.dram_bandwidth": 0.08,                # min(1000, 80)/1000
            "topdown.dram_latency": 0.07,                  # min(1000, 150)/1000 - 0.08
            # core GHz = 16000/8000 cycles per TSC tick x 2 GHz = 4; 59.5 ns x 4 x 16 x (1 + 50/200/2) / 16000
            "topdown.local_dram": 59.5 * 4 * 1.125 / 1000,
            "topdown.remote_dram": 127 * 4 * 1.125 / 1000,
            "topdown.remote_cache": 0.0}
    for metric, value in want.items():
        assert got[("total", metric)] == pytest.approx(value, rel=1e-9), metric
        assert got[("node0", metric)] == pytest.approx(value, rel=1e-9) or metric.endswith(("_dram", "cache")), metric
    # L3 misses stall 100 cycles a CPU on node 0, 200 on node 1.
    assert got[("node0", "topdown.l3_bound")] == pytest.approx(0.2)          # (300 - 100)/1000
    assert got[("node1", "topdown.l3_bound")] == pytest.approx(0.1)          # (300 - 200)/1000
    assert got[("total", "topdown.l3_bound")] == pytest.approx(0.15)
    assert got[("node0", "topdown.dram_bound")] == pytest.approx(0.15)       # 0.1 + 0.1 - 0.05
    assert got[("node1", "topdown.dram_bound")] == pytest.approx(0.25)       # 0.2 + 0.1 - 0.05
    assert got[("total", "topdown.dram_bound")] == pytest.approx(0.2)
    # The TSC is counted on CPU 0 only: node 1 has no core frequency, and says so rather than 0.
    assert got[("node1", "topdown.local_dram")] is None


def test_skylake_sp_report_memory_bound(memscope, tmp_path):
    replay = write_replay(tmp_path / "skx.jsonl", [(1.0, skx_values())])
    validation = tmp_path / "validation.json"
    root = str(FIXTURES / "skylake-sp-2s" / "sys")
    validation.write_text(json.dumps({"format": "memscope-validation", "version": 1, "machine": "sysfs " + root,
                                      "date": "2026-11-01", "verdicts": [
                                          {"metric": "mem.read_bw", "node": 1, "verdict": "agrees", "text": "",
                                           "expected": 100e9, "measured": 1e6, "workload": "bench rd"}]}))
    values = skx_values()
    for i in range(6):        # 1,000 CAS reads a channel on each socket: 12,000 x 64 B in 1 s
        values[f"uncore_imc_{i}/cas_count_read/@cpu0"] = 1000
        values[f"uncore_imc_{i}/cas_count_read/@cpu4"] = 1000
    replay = write_replay(tmp_path / "skx-bw.jsonl", [(1.0, values)])
    rows, tree, notes = report(memscope, "skylake-sp-2s", replay,
                               env=fixture_env("skylake-sp-2s", MEMSCOPE_VALIDATION=str(validation)))
    assert tree["columns"] == ["branch", "value", "dominant", "from", "node 0", "node 1"]
    assert rows["backend bound"]["value"] == "45.0%"
    mb = rows["  memory bound"]
    assert (mb["value"], mb["dominant"], mb["node 0"], mb["node 1"]) == ("32.5%", "yes", "32.5%", "32.5%")
    assert (rows["  core bound"]["value"], rows["  core bound"]["dominant"]) == ("12.5%", "")   # 0.45 - 0.3253
    levels = {name.strip(): r for name, r in rows.items() if name.startswith("    ") and not name.startswith("      ")}
    assert {k: v["value"] for k, v in levels.items() if k.endswith("bound")} == {
        "L1 bound": "10.0%", "L2 bound": "5.0%", "L3 bound": "15.0%", "DRAM bound": "20.0%", "store bound": "10.0%"}
    assert [k for k, v in levels.items() if v["dominant"] == "yes"] == ["DRAM bound"]
    assert (rows["    L3 bound"]["node 0"], rows["    L3 bound"]["node 1"]) == ("20.0%", "10.0%")
    assert rows["      bandwidth"]["value"] == "8.0%" and rows["      bandwidth"]["dominant"] == "yes"
    assert rows["      latency"]["value"] == "7.0%"
    assert rows["        remote DRAM"]["value"] == "57.1%" and rows["        remote DRAM"]["dominant"] == "yes"
    assert rows["        local DRAM"]["value"] == "26.8%"        # 0.26775; remote 0.5715 (57.1% in binary)
    # 768 KB/s of reads, half on node 1 (socket 1's IMCs): 384 KB/s against the 1 MB/s validate measured there.
    assert rows["DRAM traffic"]["value"] == ("768 KB/s (read 768 KB/s, write n/a; reads: node 1 38.4% of the "
                                             "1.00 MB/s validate measured (2026-11-01))"), rows["DRAM traffic"]["value"]
    assert not any("no core top-down" in n for n in notes)


def test_skylake_sp_report_core_bound(memscope, tmp_path):
    replay = write_replay(tmp_path / "skx.jsonl", [(1.0, skx_values(memory_bound=False)), (2.0, skx_values(False))])
    rows, _, _ = report(memscope, "skylake-sp-2s", replay)
    # memory = (50 + 10) / (600 + 130 + 10) x 0.45 = 27/740; core = 0.45 - 27/740 = 0.4135.
    assert (rows["  memory bound"]["value"], rows["  memory bound"]["dominant"]) == ("3.6%", "")
    assert (rows["  core bound"]["value"], rows["  core bound"]["dominant"]) == ("41.4%", "yes")
    assert rows["    L1 bound"]["value"] == "0.0%"                  # max((50 - 400)/1000, 0)


# ---- Sapphire Rapids: PERF_METRICS shares; Zen 4; Neoverse N1 ----

SPR = {"cycles": 1000, "ref_tsc": 500, "slots": 4000, "td_fe_bound": 100, "td_bad_spec": 50, "td_retiring": 250,
       "td_be_bound": 600, "td_mem_bound": 300, "bound_on_loads": 500, "stalls_l1d_miss": 300, "stalls_l2_miss": 200,
       "stalls_l3_miss": 50, "data_rd_outstanding_4": 100, "cycles_with_data_rd": 300, "bound_on_stores": 40,
       "load_fb_hit": 0, "load_l1_miss": 100, "l3_miss_local_dram": 1, "l3_miss_remote_dram": 0,
       "l3_miss_remote_hitm": 1, "l3_miss_remote_fwd": 0}


def test_sapphire_rapids_every_level_by_hand(memscope, tmp_path):
    values = per_cpu("cpu", SPR, range(16))
    values["msr/tsc/"] = 2500000000             # 2.5 GHz TSC; 2 cycles a TSC tick: 5 GHz
    replay = write_replay(tmp_path / "spr.jsonl", [(1.0, values)])
    got = stat(memscope, "sapphire-rapids-2s", replay, TOPDOWN)
    want = {"topdown.backend_bound": 0.6,            # 600 / (100 + 50 + 250 + 600)
            "topdown.memory_bound": 0.3,             # 300 / 1000
            "topdown.l1_bound": 0.2, "topdown.l2_bound": 0.1, "topdown.l3_bound": 0.15, "topdown.dram_bound": 0.05,
            "topdown.dram_bandwidth": 0.1, "topdown.dram_latency": 0.2, "topdown.store_bound": 0.04,
            "topdown.local_dram": 72 * 5 / 1000,     # 72 ns x 5 GHz x 1 load a CPU / 1000 cycles
            "topdown.remote_dram": 0.0,
            "topdown.remote_cache": 133 * 5 / 1000}
    for metric, value in want.items():
        assert got[("total", metric)] == pytest.approx(value, rel=1e-9), metric


def test_zen4_backend_and_memory_bound_by_hand(memscope, tmp_path):
    counts = {"cycles_not_halted": 1000, "backend_stalls": 2400, "retire_load_not_complete": 300,
              "retire_not_complete": 400}
    replay = write_replay(tmp_path / "zen4.jsonl", [(1.0, per_cpu("cpu", counts, range(32)))])
    got = stat(memscope, "epyc-zen4-2s", replay, ["topdown.backend_bound", "topdown.memory_bound"])
    assert got[("total", "topdown.backend_bound")] == pytest.approx(0.4)        # 2400 / (6 x 1000)
    assert got[("total", "topdown.memory_bound")] == pytest.approx(0.3)         # 0.4 x 300/400
    rows, _, _ = report(memscope, "epyc-zen4-2s", replay)
    assert rows["backend bound"]["value"] == "40.0%"
    assert rows["  memory bound"]["value"] == "30.0%" and rows["  memory bound"]["dominant"] == "yes"
    assert rows["  core bound"]["value"] == "10.0%"
    assert rows["    L1 bound"]["value"] == "not measurable"
    assert "no stall-cycle events by cache level" in rows["    L1 bound"]["from"]


def test_neoverse_n1_backend_bound_by_hand(memscope, tmp_path):
    counts = {"stall_backend": 250, "cpu_cycles": 1000}
    replay = write_replay(tmp_path / "n1.jsonl", [(1.0, per_cpu("armv8_pmuv3_0", counts, range(8)))])
    got = stat(memscope, "neoverse-n1-cmn", replay, ["topdown.backend_bound"])
    assert got[("total", "topdown.backend_bound")] == pytest.approx(0.25)
    rows, _, _ = report(memscope, "neoverse-n1-cmn", replay)
    assert rows["backend bound"]["value"] == "25.0%"
    assert rows["  memory bound"]["value"] == "not measurable"
    assert "perf defines no memory-bound metric for Neoverse" in rows["  memory bound"]["from"]
    assert "  core bound" not in rows


def test_no_pmu_says_so_once_and_shows_the_kernel(memscope, tmp_path):
    """A host whose CPU no family is written for (here: a fixture Westmere's core has no top-down, and a
    replay that gives only the kernel's page faults): one row says why, the kernel rows still count."""
    replay = write_replay(tmp_path / "wsm.jsonl", [(1.0, {"page-faults@cpu0": 100, "page-faults@cpu1": 50})
                                                   for _ in range(1)])
    r = run([memscope, "report", "--format", "json", "--replay", str(replay), "-m", "kernel.faults", "--lua",
             "topdown.lua"], env=fixture_env("westmere-ep-2s"))
    assert r.returncode == 0, r.stderr
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    tree = next(o for o in objs if o.get("title", "").startswith("Memory top-down"))
    rows = {row["branch"]: row for row in tree["rows"]}
    assert rows["backend bound"]["value"] == "not measurable"
    assert "Global Queue" in rows["backend bound"]["from"]
    assert not any(name.strip() in ("memory bound", "L1 bound", "core bound") for name in rows)
    assert rows["  page faults"]["value"].startswith("150 ")
    notes = [o["note"] for o in objs if "note" in o]
    assert sum("no core top-down" in n for n in notes) == 1
    assert sum("Global Queue" in str(v) for row in tree["rows"] for v in row.values()) == 1


def test_explain_names_the_groups_and_how_the_events_share_counters(memscope):
    env = fixture_env("skylake-sp-2s")
    r = run([memscope, "list", "--explain", "topdown.l3_bound"], env=env)
    assert r.returncode == 0, r.stderr
    assert "  groups: TopdownL3, memory\n" in r.stdout
    # stalls_l2_miss and stalls_l3_miss on 2 of the core PMU's 4 counters, cycles on its fixed counter.
    assert ("grouping: its 3 core events open as one group on each instance (2 of 4 counters, the others on fixed "
            "counters)") in r.stdout
    r = run([memscope, "list", "--explain", "topdown.memory_bound"], env=env)
    assert "  groups: TopdownL2, memory\n" in r.stdout
    # 13 general events and the cycles: 4 groups of at most 4.
    assert ("grouping: its 14 core events do not fit one group of 4 counters and the fixed ones: they open in 4 "
            "groups that take turns (perf's --metric-no-group)") in r.stdout
    assert "source: perf skylakex/skx-metrics.json tma_memory_bound" in r.stdout


def test_multiplexed_counts_are_scaled_and_the_coverage_shown(memscope, tmp_path):
    """Half the time on the counters: counts doubled, the ratio unchanged, coverage 50% shown."""
    values = {}
    for cpu in range(16):
        values[f"cpu/stalls_l2_miss/@cpu{cpu}"] = {"value": 150, "enabled_ns": 1000000000, "running_ns": 500000000}
        values[f"cpu/stalls_l3_miss/@cpu{cpu}"] = {"value": 50, "enabled_ns": 1000000000, "running_ns": 500000000}
        values[f"cpu/cycles/@cpu{cpu}"] = 1000
    replay = write_replay(tmp_path / "mux.jsonl", [(1.0, values)])
    r = run([memscope, "stat", "--replay", str(replay), "-m", "topdown.l3_bound", "-x,", "--self-describing"],
            env=fixture_env("skylake-sp-2s"))
    assert r.returncode == 0, r.stderr
    total = [line.split(",") for line in counter_output(r.stderr).splitlines() if line.startswith("total,total,")]
    assert total[0][2:4] == ["topdown.l3_bound", "0.2"]          # (300 - 100) / 1000
    assert total[0][5] == "0.5000"


def test_part_of_an_smt_core_takes_perfs_per_thread_estimate(memscope, tmp_path):
    """stat -C 0 counts one thread of an SMT core: perf's #core_wide is 0 and its #SMT_on still 1, so the core's
    clocks are estimated from the thread's: cycles / 2 x (1 + ONE_THREAD_ACTIVE / REF_XCLK)."""
    counts = {"cycles": 1000, "cycles_any": 2000, "one_thread_active": 500, "ref_xclk": 1000,
              "idq_uops_not_delivered": 400, "uops_issued": 1600, "recovery_cycles": 0, "recovery_cycles_any": 100}
    replay = write_replay(tmp_path / "c0.jsonl", [(1.0, per_cpu("cpu", counts, [0]))])
    r = run([memscope, "stat", "--replay", str(replay), "-C", "0", "-m", "topdown.backend_bound", "-x,",
             "--self-describing"], env=fixture_env("skylake-sp-2s"))
    assert r.returncode == 0, r.stderr
    value = float(counter_output(r.stderr).splitlines()[1].split(",")[3])
    # core clocks 500 x 1.5 = 750, slots 3000: 1 - 400/3000 - (1600 + 4 x 100/2)/3000
    assert value == pytest.approx(1 - 400 / 3000 - 1800 / 3000, rel=1e-12)
