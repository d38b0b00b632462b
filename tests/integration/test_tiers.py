"""Per-node memory tier statistics: promotion and demotion counters (nodeN/vmstat) and node
memory (nodeN/meminfo) through the procfs source, checked against the kernel's own files on
this one-node host (counts the test's own workload causes, bounded by the kernel's deltas over
a window around the run) and, for a machine with CXL tiers, against hand-computed values
replayed on its fixture tree."""
import json
import pathlib
import shutil
import threading

from conftest import fixture_env, run
from stat_output import counter_output, intervals, parse_csv, totals

NODE0 = pathlib.Path("/sys/devices/system/node/node0")
PAGE = 4096
TIER_COUNTERS = ["pgpromote_success", "pgpromote_candidate", "pgdemote_kswapd", "pgdemote_direct",
                 "pgdemote_khugepaged", "pgdemote_proactive"]


def node_vmstat():
    return {k: int(v) for k, v in (line.split() for line in (NODE0 / "vmstat").read_text().splitlines())}


def node_meminfo_kb(key):
    for line in (NODE0 / "meminfo").read_text().splitlines():
        parts = line.split()
        if parts[2] == key + ":":
            return int(parts[3])
    raise KeyError(key)


def stat(memscope, args, **kw):
    res = run([memscope, "stat", "-x,", "--self-describing"] + args, **kw)
    assert res.returncode == 0, res.stderr
    return parse_csv(counter_output(res.stderr))


def test_a_node_counter_is_the_kernels_delta(memscope, touchmem):
    """touchmem allocates 100 MiB on node0 (the only node): node0's numa_local grows by at
    least its 25,600 pages during the run, and memscope's count of it is no more than what
    the kernel's own file grew by over a window that holds the run."""
    before = node_vmstat()
    rows = stat(memscope, ["-a", "--per-node", "-e", "node_vmstat/numa_local", "--", touchmem, "100"])
    after = node_vmstat()
    counted = totals(rows)[("node0", "node_vmstat/numa_local")]
    assert 100 * 1024 * 1024 // PAGE <= counted <= after["numa_local"] - before["numa_local"]


def test_tier_metrics_are_the_kernels_deltas(memscope, touchmem):
    before = node_vmstat()
    metrics = "tier.promoted_pages,tier.promote_candidates,tier.demoted_pages,tier.demoted_pages_kswapd"
    rows = stat(memscope, ["-a", "--per-node", "-m", metrics, "--", touchmem, "20"])
    after = node_vmstat()
    t = totals(rows)
    delta = {k: after[k] - before[k] for k in TIER_COUNTERS}
    demoted = sum(delta[k] for k in TIER_COUNTERS if k.startswith("pgdemote_"))
    # Counted (not "<not counted>") and bounded by the kernel's own deltas around the run.
    assert 0 <= t[("node0", "tier.promoted_pages")] <= delta["pgpromote_success"]
    assert 0 <= t[("node0", "tier.promote_candidates")] <= delta["pgpromote_candidate"]
    assert 0 <= t[("node0", "tier.demoted_pages")] <= demoted
    assert 0 <= t[("node0", "tier.demoted_pages_kswapd")] <= delta["pgdemote_kswapd"]


def test_node_memory_gauges_follow_the_kernels_file(memscope, touchmem):
    """While the test samples node0's meminfo itself, a command sleeps, then touches and holds
    200 MiB: every AnonPages value memscope shows lies within what the test saw (64 MiB
    either side for other processes between two reads), and the held memory shows."""
    seen, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            seen.append(node_meminfo_kb("AnonPages") * 1024)
            stop.wait(0.01)

    poller = threading.Thread(target=sample)
    poller.start()
    try:
        rows = stat(memscope, ["-a", "--per-node", "-I", "100", "-m", "numa.anon_bytes,numa.used_bytes",
                               "--", "sh", "-c", f"sleep 0.4; exec {touchmem} 200 --hold-ms 800"])
    finally:
        stop.set()
        poller.join()
    anon = [r["value"] for r in intervals(rows) if r["event"] == "numa.anon_bytes" and r["scope"] == "node0"]
    used = [r["value"] for r in intervals(rows) if r["event"] == "numa.used_bytes" and r["scope"] == "node0"]
    slack = 64 << 20
    assert len(anon) >= 5 and all(v % 1024 == 0 for v in anon + used)
    assert all(min(seen) - slack <= v <= max(seen) + slack for v in anon)
    # The 200 MiB held shows between the first intervals (sleep) and the held ones.
    assert max(anon) - anon[0] >= 120 << 20
    assert all(u >= a for u, a in zip(used, anon))


def cxl_replay(path):
    """Two intervals of a CXL machine (sapphire-rapids-cxl-2s: DDR nodes 0-1 in tier 4,
    CXL nodes 2-3 in tier 40): node0 promotes into itself and demotes to CXL, node1 demotes,
    node2's used memory is given in kB."""
    nodes = range(4)
    def frame(t, given):
        values = {f"node_vmstat/{k}@node{n}": 0 for k in TIER_COUNTERS for n in nodes}
        values.update({f"node_meminfo/{k}@node{n}": 0 for k in ("MemUsed", "AnonPages")
                       for n in nodes})
        values.update(given)
        return json.dumps({"t": t, "values": values})
    path.write_text("\n".join([
        json.dumps({"format": "memscope-replay", "version": 1}),
        frame(1.0, {"node_vmstat/pgpromote_success@node0": 300, "node_vmstat/pgpromote_candidate@node0": 450,
                    "node_vmstat/pgdemote_kswapd@node0": 1000, "node_vmstat/pgdemote_direct@node0": 24,
                    "node_meminfo/MemUsed@node2": 1048576, "node_meminfo/AnonPages@node2": 524288}),
        frame(3.0, {"node_vmstat/pgpromote_success@node0": 600, "node_vmstat/pgdemote_kswapd@node1": 500,
                    "node_vmstat/pgdemote_proactive@node1": 12, "node_meminfo/MemUsed@node2": 2097152,
                    "node_meminfo/AnonPages@node2": 1572864}),
    ]) + "\n")


def recorded_cxl_replay(memscope, tmp_path, metrics):
    """cxl_replay's two intervals recorded on the CXL machine with these metrics: the recording."""
    replay, rec = tmp_path / "cxl.jsonl", tmp_path / "cxl.rec"
    cxl_replay(replay)
    res = run([memscope, "record", "-o", str(rec), "--replay", str(replay), "-m", metrics],
              env=fixture_env("sapphire-rapids-cxl-2s"))
    assert res.returncode == 0, res.stderr
    return rec


def test_a_cxl_machines_tier_statistics_replayed(memscope, tmp_path):
    replay = tmp_path / "cxl.jsonl"
    cxl_replay(replay)
    metrics = ("tier.promoted_pages,tier.promote_candidates,tier.promote_rate,tier.demoted_pages,"
               "tier.demoted_pages_direct,tier.demote_rate,numa.used_bytes,numa.anon_bytes")
    rows = stat(memscope, ["--replay", str(replay), "--per-node", "-I", "1000", "-m", metrics],
                env=fixture_env("sapphire-rapids-cxl-2s"))
    at = {(r["time"], r["scope"], r["event"]): r["value"] for r in rows}
    first, second = "1.000000", "3.000000"
    assert at[(first, "node0", "tier.promoted_pages")] == 300
    assert at[(first, "node0", "tier.promote_candidates")] == 450
    assert at[(first, "node0", "tier.promote_rate")] == 300          # 300 pages in 1 s
    assert at[(second, "node0", "tier.promote_rate")] == 300         # 600 pages in 2 s
    assert at[(first, "node0", "tier.demoted_pages")] == 1024        # kswapd 1000 + direct 24
    assert at[(first, "node0", "tier.demoted_pages_direct")] == 24
    assert at[(first, "node0", "tier.demote_rate")] == 1024
    assert at[(second, "node1", "tier.demoted_pages")] == 512        # kswapd 500 + proactive 12
    assert at[(second, "node1", "tier.demote_rate")] == 256          # 512 pages in 2 s
    assert at[(first, "node2", "numa.used_bytes")] == 1 << 30        # 1048576 kB
    assert at[(second, "node2", "numa.used_bytes")] == 2 << 30
    assert at[(second, "node2", "numa.anon_bytes")] == 1536 << 20
    t = totals(rows)
    assert t[("node0", "tier.promoted_pages")] == 900
    assert t[("node1", "tier.demoted_pages")] == 512
    # A gauge's total is its last value, not a sum.
    assert t[("node2", "numa.used_bytes")] == 2 << 30
    assert t[("node2", "tier.demoted_pages")] == 0


def test_per_tier_sums_the_nodes_of_each_tier(memscope, tmp_path):
    """--per-tier on the CXL machine (tier 4: nodes 0-1, DDR; tier 40: nodes 2-3, CXL): each row
    is the metric over the nodes the kernel lists in the tier, here sums of hand-made counts."""
    replay = tmp_path / "tiers.jsonl"
    zero = dict.fromkeys(k for k in TIER_COUNTERS if k != "pgpromote_candidate")
    zero = dict.fromkeys(zero, 0)

    def frame(t, nodes):
        return json.dumps({"t": t, "values": {f"node_vmstat/{k}@node{n}": v for n, counters in nodes.items()
                                              for k, v in dict(zero, **counters).items()}})
    replay.write_text("\n".join([
        json.dumps({"format": "memscope-replay", "version": 1}),
        frame(1.0, {0: {"pgpromote_success": 300, "pgdemote_kswapd": 1000}, 1: {"pgpromote_success": 100,
                                                                             "pgdemote_direct": 24},
                    2: {}, 3: {"pgdemote_kswapd": 7}}),
        frame(3.0, {0: {"pgpromote_success": 600}, 1: {"pgdemote_kswapd": 500}, 2: {}, 3: {}}),
    ]) + "\n")
    env = fixture_env("sapphire-rapids-cxl-2s")
    rows = stat(memscope, ["--replay", str(replay), "--per-tier", "-I", "1000", "-m",
                           "tier.promoted_pages,tier.demoted_pages,tier.promote_rate,tier.demote_rate"], env=env)
    at = {(r["time"], r["scope"], r["event"]): r["value"] for r in rows}
    assert at[("1.000000", "tier4", "tier.promoted_pages")] == 300 + 100
    assert at[("1.000000", "tier4", "tier.demoted_pages")] == 1000 + 24
    assert at[("1.000000", "tier40", "tier.demoted_pages")] == 7           # node 3 to a slower tier: none, so 0
    assert at[("3.000000", "tier4", "tier.promote_rate")] == 600 / 2
    assert at[("3.000000", "tier4", "tier.demote_rate")] == 500 / 2
    assert at[("3.000000", "tier40", "tier.promote_rate")] == 0
    t = totals(rows)
    assert t[("tier4", "tier.promoted_pages")] == 1000
    assert t[("tier4", "tier.demoted_pages")] == 1524
    assert t[("tier40", "tier.demoted_pages")] == 7
    assert {scope for scope, _ in t} == {"tier4", "tier40"}
    res = run([memscope, "stat", "-j", "--replay", str(replay), "--per-tier", "-m", "tier.promoted_pages,"
               "tier.demoted_pages"], env=env)
    assert res.returncode == 0, res.stderr
    first = json.loads(counter_output(res.stderr).splitlines()[0])
    assert first["tier"] == "tier4" and first["metric-value"] == 1000.0, first
    # The Lua API: each node's tier, and the tiers fastest first.
    script = tmp_path / "tiers.lua"
    script.write_text("function on_end()\n  local t = memscope.topology()\n"
                      "  for _, n in ipairs(t.nodes) do print('node ' .. n .. ' tier ' .. t.tier[n]) end\n"
                      "  for _, x in ipairs(t.tiers) do print('tier ' .. x.tier .. ': ' .. table.concat(x.nodes, ',')) end\n"
                      "end\n")
    res = run([memscope, "stat", "--replay", str(replay), "-m", "tier.promoted_pages,tier.demoted_pages",
               "--lua", str(script)], env=env)
    assert res.returncode == 0, res.stderr
    assert "node 0 tier 4\nnode 1 tier 4\nnode 2 tier 40\nnode 3 tier 40\ntier 4: 0,1\ntier 40: 2,3\n" in res.stdout
    # Without -m, and where the kernel lists no tiers, --per-tier says why.
    res = run([memscope, "stat", "--per-tier", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "--per-tier shows catalog metrics per memory tier: name some with -m" \
        in res.stderr, res.stderr
    tree = tmp_path / "tree"
    shutil.copytree(pathlib.Path(__file__).parents[1] / "fixtures/sysfs/sapphire-rapids-cxl-2s", tree, symlinks=True)
    shutil.rmtree(tree / "sys/devices/virtual/memory_tiering")
    res = run([memscope, "stat", "--replay", str(replay), "--per-tier", "-m", "tier.promoted_pages,tier.demoted_pages"],
              env=dict(env, MEMSCOPE_SYSFS_ROOT=str(tree / "sys"), MEMSCOPE_PROCFS_ROOT=str(tree / "proc")))
    assert res.returncode == 1 and "--per-tier: the kernel lists no memory tiers here" in res.stderr, res.stderr


# ---- A process's memory by node (numa_maps/bytes) ----

def numa_maps_bytes(pid):
    """{node: bytes} of /proc/PID/numa_maps, as the test reads it itself."""
    out = {}
    for line in open(f"/proc/{pid}/numa_maps"):
        fields = line.split()
        kb = next((int(f.split("=")[1]) for f in fields if f.startswith("kernelpagesize_kB=")), 4)
        for f in fields:
            if len(f) > 1 and f[0] == "N" and f[1].isdigit() and "=" in f:
                node, pages = f[1:].split("=")
                out[int(node)] = out.get(int(node), 0) + int(pages) * kb * 1024
    return out


def test_numa_maps_bytes_of_a_process_are_its_numa_maps(memscope, touchmem):
    """A process holds 64 MiB it touched: every interval of stat -p shows exactly the bytes
    its numa_maps gives node0 when the test reads the file itself, before and after (the
    file is read once in this 1.2 s run, at most every 5 s, and its value shown each interval)."""
    import subprocess
    import time
    work = subprocess.Popen([touchmem, "64", "--hold-ms", "6000"])
    try:
        deadline = time.monotonic() + 20
        while numa_maps_bytes(work.pid).get(0, 0) < 64 << 20:
            assert time.monotonic() < deadline, "touchmem never held 64 MiB"
            time.sleep(0.05)
        before = numa_maps_bytes(work.pid)
        res = run(["timeout", "-s", "INT", "1.2", memscope, "stat", "-x,", "--self-describing", "--per-node",
                   "-I", "200", "-e", "numa_maps/bytes", "-p", str(work.pid)])
        after = numa_maps_bytes(work.pid)
    finally:
        work.kill()
        work.wait()
    assert before == after, "the held memory did not change while stat read it"
    values = [r["value"] for r in intervals(parse_csv(counter_output(res.stderr))) if r["scope"] == "node0"]
    assert len(values) >= 3 and set(values) == {before[0]}, (values, before, res.stderr)
    assert before[0] >= 64 << 20


def test_numa_maps_bytes_needs_named_processes(memscope):
    res = run([memscope, "stat", "-a", "-e", "numa_maps/bytes", "--", "true"])
    assert res.returncode == 1
    assert "numa_maps/bytes reads the memory by node of the measured processes (-p PID or -- CMD)" in res.stderr
    assert "Sanitizer" not in res.stderr



def test_numa_balance_report_says_why_pages_are_remote(memscope, tmp_path):
    """report --lua numa_balance.lua over the CXL machine's recorded statistics: the tier rows
    are the hand-computed sums, and the demotions are given as a reason for remote pages."""
    rec = recorded_cxl_replay(memscope, tmp_path, "tier.promoted_pages,tier.promote_candidates,tier.demoted_pages,"
                              "tier.demoted_pages_direct,tier.demoted_pages_kswapd,numa.used_bytes,numa.anon_bytes")
    res = run([memscope, "report", "--lua", "numa_balance.lua", str(rec)])
    assert res.returncode == 0, res.stderr
    rows = {line[:51].strip(): line[51:].split()[:2] for line in res.stdout.splitlines() if line.startswith("  ")}
    assert rows["pages promoted to a faster tier"] == ["900", "300.00"]          # 300 + 600 in 3 s
    assert rows["pages demoted to a slower tier"] == ["1536", "512.00"]          # 1024 + 512
    assert rows["by kswapd (background reclaim)"] == ["1500", "500.00"]
    assert rows["by direct reclaim (allocations short of memory)"] == ["24", "8.00"]
    assert ("    - 1536 pages were demoted under memory pressure to a slower tier (a CPU-less node: remote to "
            "every CPU), 24 of them by direct reclaim in allocating tasks\n") in res.stdout


# ---- CXL memory devices' PMUs (catalog/pmu/cxl-pmu.yaml) ----

def test_cxl_pmu_bytes_per_device_replayed(memscope, tmp_path):
    """Two CXL memory devices' CPMU counts replayed on the CXL machine's tree: 64 bytes per
    S2M DRS MemData (read) and per M2S RwD MemWr or MemWrPtl (write), per device."""
    replay = tmp_path / "cpmu.jsonl"
    frames = [
        (1.0, {"mem0.0": (1000, 300, 20), "mem1.0": (250, 0, 0)}),
        (3.0, {"mem0.0": (4000, 0, 0), "mem1.0": (0, 1000, 0)}),
    ]
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    for t, devices in frames:
        values = {}
        for dev, (drs, wr, ptl) in devices.items():
            values.update({f"cxl_pmu_{dev}/s2m_drs_memdata/": drs, f"cxl_pmu_{dev}/m2s_rwd_memwr/": wr,
                           f"cxl_pmu_{dev}/m2s_rwd_memwrptl/": ptl})
        lines.append(json.dumps({"t": t, "values": values}))
    replay.write_text("\n".join(lines) + "\n")
    rows = stat(memscope, ["--replay", str(replay), "--per-channel", "-I", "1000",
                           "-m", "cxl.read_bytes,cxl.write_bytes,cxl.read_bw"],
                env=fixture_env("sapphire-rapids-cxl-2s"))
    at = {(r["time"], r["scope"], r["event"]): r["value"] for r in rows}
    assert at[("1.000000", "cxl_pmu_mem0.0", "cxl.read_bytes")] == 64000           # 1000 x 64
    assert at[("1.000000", "cxl_pmu_mem0.0", "cxl.write_bytes")] == (300 + 20) * 64
    assert at[("1.000000", "cxl_pmu_mem1.0", "cxl.read_bytes")] == 16000
    assert at[("3.000000", "cxl_pmu_mem0.0", "cxl.read_bw")] == 4000 * 64 / 2      # over 2 s
    assert at[("3.000000", "cxl_pmu_mem1.0", "cxl.write_bytes")] == 64000
    t = totals(rows)
    assert t[("cxl_pmu_mem0.0", "cxl.read_bytes")] == 5000 * 64
    assert t[("cxl_pmu_mem1.0", "cxl.write_bytes")] == 1000 * 64


def test_cxl_pmu_bytes_count_on_the_node_the_device_backs(memscope, tmp_path):
    """On the CXL machine, mem0 is region1's target (decoder3.0 of endpoint3, whose uport is
    mem0) and region1's dax1.0 is node 3; mem1 is region0's, node 2. Each device's bytes are
    added to mem.read_bytes/mem.write_bytes of that node, beside the IMC bytes of nodes 0 and 1
    (counted through CPUs 0 and 4); cxl.read_bytes shows them on their node, not on CPU 0's."""
    replay = tmp_path / "node.jsonl"
    values = {}
    for imc in (0, 2, 3, 10):
        values.update({f"uncore_imc_{imc}/cas_count_read/@cpu0": 1000, f"uncore_imc_{imc}/cas_count_write/@cpu0": 500,
                       f"uncore_imc_{imc}/cas_count_read/@cpu4": 2000, f"uncore_imc_{imc}/cas_count_write/@cpu4": 0})
    for dev, (drs, wr, ptl) in {"mem0.0": (300, 100, 10), "mem1.0": (50, 0, 0)}.items():
        values.update({f"cxl_pmu_{dev}/s2m_drs_memdata/": drs, f"cxl_pmu_{dev}/m2s_rwd_memwr/": wr,
                       f"cxl_pmu_{dev}/m2s_rwd_memwrptl/": ptl})
    replay.write_text(json.dumps({"format": "memscope-replay", "version": 1}) + "\n" +
                      json.dumps({"t": 1.0, "values": values}) + "\n")
    env = fixture_env("sapphire-rapids-cxl-2s")
    rows = stat(memscope, ["--replay", str(replay), "--per-node", "-m", "mem.read_bytes,mem.write_bytes,cxl.read_bytes"],
                env=env)
    t = totals(rows)
    assert t[("node0", "mem.read_bytes")] == 4 * 1000 * 64
    assert t[("node0", "mem.write_bytes")] == 4 * 500 * 64
    assert t[("node1", "mem.read_bytes")] == 4 * 2000 * 64
    assert t[("node2", "mem.read_bytes")] == 50 * 64                  # mem1 -> region0 -> node 2
    assert t[("node2", "mem.write_bytes")] == 0
    assert t[("node3", "mem.read_bytes")] == 300 * 64                 # mem0 -> region1 -> node 3
    assert t[("node3", "mem.write_bytes")] == (100 + 10) * 64
    assert t[("node3", "cxl.read_bytes")] == 300 * 64
    assert t[("node2", "cxl.read_bytes")] == 50 * 64
    assert t[("node0", "cxl.read_bytes")] == "<not counted>"         # read through CPU 0, not node 0's
    rows = stat(memscope, ["--replay", str(replay), "-m", "mem.read_bytes,mem.write_bytes"], env=env)
    t = totals(rows)
    assert t[("total", "mem.read_bytes")] == (4000 + 8000 + 50 + 300) * 64
    assert t[("total", "mem.write_bytes")] == (2000 + 110) * 64
    res = run([memscope, "list", "--explain", "mem.read_bytes"], env=env)
    assert "cxl_pmu_mem0.0/vid=0x1e98,gid=0x25,mask=0x1/ type=26 config=0x1e98002500000001  on cpu 0 (node 0, " \
           "socket 0); counted on node 3, the node of the memory it backs" in res.stdout, res.stdout
    # A device that backs no region (its memory is not a node) is counted on no node.
    tree = tmp_path / "tree"
    shutil.copytree(pathlib.Path(__file__).parents[1] / "fixtures/sysfs/sapphire-rapids-cxl-2s", tree, symlinks=True)
    (tree / "sys/bus/cxl/devices/region1/target0").unlink()
    res = run([memscope, "list", "--explain", "cxl.read_bytes"], env=dict(env, MEMSCOPE_SYSFS_ROOT=str(tree / "sys"),
                                                                         MEMSCOPE_PROCFS_ROOT=str(tree / "proc")))
    assert "counted on no node: mem0 is the target of no CXL region with a dax device onlined as memory" \
        in res.stdout, res.stdout


def test_a_recorded_cxl_machine_counts_each_device_on_its_node(memscope, tmp_path):
    """A recording cannot keep the region links (endpointP/uport is a symlink), but it needs
    none: each CXL device's series carries the node its memory is (the "node" label, resolved
    when recorded), so the replay, with no fixture tree, gives the live fixture run's per-node
    figures (mem0 -> decoder3.0 -> region1 -> node 3, mem1 -> decoder2.0 -> region0 -> node 2)."""
    replay, rec = tmp_path / "node.jsonl", tmp_path / "node.rec"
    values = {}
    for imc in (0, 2, 3, 10):
        values.update({f"uncore_imc_{imc}/cas_count_read/@cpu0": 1000, f"uncore_imc_{imc}/cas_count_write/@cpu0": 500,
                       f"uncore_imc_{imc}/cas_count_read/@cpu4": 2000, f"uncore_imc_{imc}/cas_count_write/@cpu4": 0})
    for dev, (drs, wr, ptl) in {"mem0.0": (300, 100, 10), "mem1.0": (50, 7, 0)}.items():
        values.update({f"cxl_pmu_{dev}/s2m_drs_memdata/": drs, f"cxl_pmu_{dev}/m2s_rwd_memwr/": wr,
                       f"cxl_pmu_{dev}/m2s_rwd_memwrptl/": ptl})
    replay.write_text(json.dumps({"format": "memscope-replay", "version": 1}) + "\n" +
                      json.dumps({"t": 1.0, "values": values}) + "\n")
    by_hand = {("node0", "mem.read_bytes"): 4 * 1000 * 64, ("node0", "mem.write_bytes"): 4 * 500 * 64,
               ("node1", "mem.read_bytes"): 4 * 2000 * 64, ("node1", "mem.write_bytes"): 0,
               ("node2", "mem.read_bytes"): 50 * 64, ("node2", "mem.write_bytes"): 7 * 64,
               ("node3", "mem.read_bytes"): 300 * 64, ("node3", "mem.write_bytes"): (100 + 10) * 64,
               ("tier4", "mem.read_bytes"): 4 * 3000 * 64, ("tier40", "mem.read_bytes"): 350 * 64,
               ("tier40", "mem.write_bytes"): 117 * 64}
    env = fixture_env("sapphire-rapids-cxl-2s")
    metrics = ["-m", "mem.read_bytes,mem.write_bytes"]
    res = run([memscope, "record", "-o", str(rec), "--replay", str(replay)] + metrics, env=env)
    assert res.returncode == 0, res.stderr
    header = json.loads(rec.read_text().splitlines()[0])
    nodes = {(s["instance"], s["node"]) for s in header["series"] if s["name"].startswith("cxl_pmu_")}
    assert nodes == {("cxl_pmu_mem0.0", 3), ("cxl_pmu_mem1.0", 2)}
    for rows in ("--per-node", "--per-tier"):
        live = totals(stat(memscope, ["--replay", str(replay), rows] + metrics, env=env))
        replayed = totals(stat(memscope, ["--input", str(rec), rows] + metrics))   # no fixture tree
        for key, value in by_hand.items():
            if key[0].startswith(rows.removeprefix("--per-")):
                assert live[key] == value, key
                assert replayed[key] == value, key


def test_cxl_pmu_events_are_opened_with_the_drivers_encoding(memscope):
    res = run([memscope, "list", "--explain", "cxl.read_bytes"], env=fixture_env("sapphire-rapids-cxl-2s"))
    assert res.returncode == 0, res.stderr
    # PCI_VENDOR_ID_CXL 0x1e98 << 48 | S2M DRS group 0x25 << 32 | MemData bit 0.
    assert "cxl_pmu_mem0.0/vid=0x1e98,gid=0x25,mask=0x1/ type=26 config=0x1e98002500000001" in res.stdout
    assert "cxl_pmu_mem1.0/vid=0x1e98,gid=0x25,mask=0x1/ type=27 config=0x1e98002500000001" in res.stdout



def test_memory_policy_bytes_and_gauge_totals(memscope, touchmem, tmp_path):
    """A command under numactl --interleave=0 holds 32 MiB. stat's total of a gauge is its last
    value, not the sum of the intervals; a recording's numa_maps/policy_bytes gives every mapped
    byte to the "interleave" policy (the task policy covers every mapping without its own), and
    numa_balance.lua says so."""
    cmd = ["numactl", "--interleave=0", touchmem, "32", "--hold-ms", "900"]
    res = run([memscope, "stat", "-x,", "--self-describing", "--per-node", "-I", "300", "-e", "numa_maps/bytes",
               "--"] + cmd)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    values = [r["value"] for r in intervals(rows) if r["counted"]]
    assert len(values) >= 2 and totals(rows)[("node0", "numa_maps/bytes")] == values[-1] >= 32 << 20

    rec = tmp_path / "policy.rec"
    res = run([memscope, "record", "-I", "300", "-o", str(rec), "-e", "numa_maps/policy_bytes", "-e", "numa_maps/bytes",
               "--"] + cmd)
    assert res.returncode == 0, res.stderr
    script = tmp_path / "policy.lua"
    script.write_text(
        'script = { description = "policy bytes" }\n'
        'function on_end()\n'
        '  for _, p in ipairs({ "default", "preferred", "preferred_many", "bind", "interleave",'
        ' "weighted_interleave", "local" }) do\n'
        '    print(p, memscope.total("numa_maps/policy_bytes", { instance = p, node = 0 }))\n'
        '  end\n'
        '  print("all", memscope.total("numa_maps/bytes", { node = 0 }))\n'
        'end\n')
    res = run([memscope, "report", "--lua", str(script), str(rec)])
    assert res.returncode == 0, res.stderr
    got = {line.split("\t")[0]: float(line.split("\t")[1]) for line in res.stdout.splitlines() if "\t" in line}
    assert got["interleave"] == got["all"] >= 32 << 20
    assert all(got[p] == 0 for p in ("default", "bind", "preferred", "preferred_many", "weighted_interleave",
                                     "local"))
    res = run([memscope, "report", "--lua", "numa_balance.lua", str(rec)])
    assert res.returncode == 0, res.stderr
    assert f"    - interleave: {got['interleave'] / (1 << 20):.1f} MiB on node 0 (placed by the memory policy)\n" \
        in res.stdout
