"""memscope stat -m: catalog metrics computed live here, and on fixture machines through --replay."""
import json
import re

from conftest import fixture_env, run
from stat_output import counter_output, intervals, parse_csv, totals


def write_replay(path, frames):
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines += [json.dumps({"t": t, "values": values}) for t, values in frames]
    path.write_text("\n".join(lines) + "\n")


def kunpeng_ddrc(overrides):
    """Every DDRC flux_rd of the 2-socket Kunpeng 920 fixture (4 SCCLs x 4 channels)."""
    values = {f"hisi_sccl{s}_ddrc{c}/flux_rd/": 0 for s in (1, 3, 5, 7) for c in range(4)}
    values.update(overrides)
    return values


def test_kunpeng_read_bandwidth_per_node_from_replayed_counters(memscope, tmp_path):
    replay = tmp_path / "kunpeng.jsonl"
    write_replay(replay, [
        (1.0, kunpeng_ddrc({"hisi_sccl1_ddrc0/flux_rd/": 1000, "hisi_sccl1_ddrc1/flux_rd/": 500})),
        (2.0, kunpeng_ddrc({"hisi_sccl1_ddrc0/flux_rd/": 2000, "hisi_sccl3_ddrc2/flux_rd/": 250})),
    ])
    env = fixture_env("kunpeng920-2s")
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.read_bytes",
               "--per-node", "-I", "1000", "-x,", "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    per_interval = {(r["time"], r["scope"], r["event"]): r["value"] for r in intervals(rows)}
    # DDRC v1 flux counts 32 bytes (vendor tooling); SCCL1 is node 0, SCCL3 node 1.
    assert per_interval[("1.000000", "node0", "mem.read_bw")] == (1000 + 500) * 32
    assert per_interval[("1.000000", "node1", "mem.read_bw")] == 0
    assert per_interval[("2.000000", "node0", "mem.read_bw")] == 2000 * 32
    assert per_interval[("2.000000", "node1", "mem.read_bw")] == 250 * 32
    t = totals(rows)
    assert t[("node0", "mem.read_bytes")] == 3500 * 32
    assert t[("node0", "mem.read_bw")] == 3500 * 32 / 2.0
    assert t[("node1", "mem.read_bw")] == 250 * 32 / 2.0
    assert t[("node2", "mem.read_bw")] == 0 and t[("node3", "mem.read_bw")] == 0
    # The raw inputs stay out of the output unless asked for with -e.
    assert not any(r["event"].startswith("hisi_") for r in rows)


def test_replay_with_a_missing_counter_never_shows_zero(memscope, tmp_path):
    replay = tmp_path / "partial.jsonl"
    write_replay(replay, [(1.0, {"hisi_sccl1_ddrc0/flux_rd/": 1000})])
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw", "-x,", "--self-describing"],
              env=fixture_env("kunpeng920-2s"))
    assert res.returncode == 0, res.stderr
    row = [r for r in parse_csv(counter_output(res.stderr)) if r["event"] == "mem.read_bw"][0]
    assert row["counted"] is False and row["value"] == "<not counted>"


def test_replay_needs_metrics_and_no_target(memscope, tmp_path):
    res = run([memscope, "stat", "--replay", str(tmp_path / "x.jsonl"), "-a"])
    assert res.returncode == 2
    assert "--replay FILE replays the counters of -m METRICS" in res.stderr


def test_unknown_metric_is_a_usage_error(memscope):
    res = run([memscope, "stat", "-m", "mem.reed_bw", "--", "true"])
    assert res.returncode == 2
    assert "unknown metric 'mem.reed_bw'" in res.stderr


def test_unavailable_metric_says_why(memscope):
    # This machine has no uncore PMU: memory bandwidth cannot be measured here.
    res = run([memscope, "stat", "-m", "mem.read_bw", "--", "true"])
    assert res.returncode == 1
    assert "mem.read_bw" in res.stderr


def test_kernel_metrics_live_agree_with_the_workload(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "-m", "kernel.faults,numa.hit",
               "--", touchmem, "64"])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    pages = 64 * 256
    assert t[("total", "kernel.faults")] == t[("total", "page-faults")]
    assert abs(t[("total", "kernel.faults")] - pages) <= 0.02 * pages
    # numa_hit is system-wide: at least the workload's pages, allocated on this node.
    assert t[("total", "numa.hit")] >= 0.98 * pages


def test_kunpeng_bandwidth_per_channel(memscope, tmp_path):
    """--per-channel: one row per DDRC (a channel each); HiSilicon names are unique, so no @cpu."""
    replay = tmp_path / "kunpeng.jsonl"
    write_replay(replay, [
        (1.0, kunpeng_ddrc({"hisi_sccl1_ddrc0/flux_rd/": 1000, "hisi_sccl1_ddrc1/flux_rd/": 500})),
        (2.0, kunpeng_ddrc({"hisi_sccl1_ddrc0/flux_rd/": 2000, "hisi_sccl3_ddrc2/flux_rd/": 250})),
    ])
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.read_bytes", "--per-channel",
               "-I", "1000", "-x,", "--self-describing"], env=fixture_env("kunpeng920-2s"))
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    t = totals(rows)
    channels = [f"hisi_sccl{s}_ddrc{c}" for s in (1, 3, 5, 7) for c in range(4)]
    assert sorted({scope for scope, _ in t}) == sorted(channels)
    expected = {c: 0 for c in channels}
    expected.update({"hisi_sccl1_ddrc0": 3000, "hisi_sccl1_ddrc1": 500, "hisi_sccl3_ddrc2": 250})
    for channel, count in expected.items():
        assert t[(channel, "mem.read_bytes")] == count * 32, channel
        assert t[(channel, "mem.read_bw")] == count * 32 / 2.0, channel
    per_interval = {(r["time"], r["scope"], r["event"]): r["value"] for r in intervals(rows)}
    assert per_interval[("1.000000", "hisi_sccl1_ddrc1", "mem.read_bw")] == 500 * 32
    assert per_interval[("2.000000", "hisi_sccl1_ddrc1", "mem.read_bw")] == 0
    # The channels add up to the node: the same run --per-node.
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bytes", "--per-node", "-x,", "--self-describing"],
              env=fixture_env("kunpeng920-2s"))
    assert totals(parse_csv(counter_output(res.stderr)))[("node0", "mem.read_bytes")] == sum(
        t[(f"hisi_sccl1_ddrc{c}", "mem.read_bytes")] for c in range(4))


def test_skylake_bandwidth_per_channel_names_the_socket_cpu(memscope, tmp_path):
    """Each uncore_imc_N is a channel on each socket, read through one CPU of it: the rows are
    uncore_imc_N@cpuC, as the replay names the counters; JSON names the channel too."""
    values = {}
    for i in range(6):
        values[f"uncore_imc_{i}/cas_count_read/@cpu0"] = (i + 1) * 1000
        values[f"uncore_imc_{i}/cas_count_read/@cpu4"] = (i + 1) * 2000
    replay = tmp_path / "skx.jsonl"
    write_replay(replay, [(2.0, values)])
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw", "--per-channel", "--json", "--self-describing"],
              env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    total = json.loads(counter_output(res.stderr).strip().splitlines()[-1])
    assert total["aggregation"] == "channel"
    got = {r["channel"]: r["metrics"]["mem.read_bw"]["value"] for r in total["rows"]}
    # 64 B per CAS over 2 s; socket 0 first, then socket 1, imc_0..5 in order.
    assert list(got) == [f"uncore_imc_{i}@cpu{c}" for c in (0, 4) for i in range(6)]
    for i in range(6):
        assert got[f"uncore_imc_{i}@cpu0"] == (i + 1) * 1000 * 64 / 2
        assert got[f"uncore_imc_{i}@cpu4"] == (i + 1) * 2000 * 64 / 2


def icelake_imc(reads0, reads4, writes0, writes4):
    """The Ice Lake-SP fixture's 4 IMCs on cpu0 (socket 0) and cpu4 (socket 1). Reads use the
    encoding memscope opens (umask 0x0f; the fixture's stale alias says 0x03), writes the
    catalog event name."""
    values = {}
    for i in range(4):
        values[f"uncore_imc_{i}/event=0x04,umask=0x0f/@cpu0"] = reads0[i]
        values[f"uncore_imc_{i}/event=0x04,umask=0x0f/@cpu4"] = reads4[i]
        values[f"uncore_imc_{i}/cas_count_write/@cpu0"] = writes0[i]
        values[f"uncore_imc_{i}/cas_count_write/@cpu4"] = writes4[i]
    return values


def test_icelake_bandwidth_per_socket_and_per_channel(memscope, tmp_path):
    replay = tmp_path / "icx.jsonl"
    write_replay(replay, [
        (1.0, icelake_imc([1000, 2000, 3000, 4000], [3000, 6000, 9000, 12000], [500] * 4, [0] * 4)),
        (2.0, icelake_imc([0] * 4, [1000, 2000, 3000, 4000], [0] * 4, [250] * 4)),
    ])
    env = fixture_env("icelake-sp-2s")
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.write_bw", "--per-socket",
               "-I", "1000", "-x,", "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    per_interval = {(r["time"], r["scope"], r["event"]): r["value"] for r in intervals(rows)}
    # 64 B per CAS: 10000 and 30000 reads in the first second, 0 and 10000 in the second.
    assert per_interval[("1.000000", "socket0", "mem.read_bw")] == 10000 * 64
    assert per_interval[("1.000000", "socket1", "mem.read_bw")] == 30000 * 64
    assert per_interval[("2.000000", "socket0", "mem.read_bw")] == 0
    assert per_interval[("2.000000", "socket1", "mem.read_bw")] == 10000 * 64
    assert per_interval[("1.000000", "socket0", "mem.write_bw")] == 2000 * 64
    assert per_interval[("2.000000", "socket1", "mem.write_bw")] == 1000 * 64
    t = totals(rows)
    assert t[("socket0", "mem.read_bw")] == 10000 * 64 / 2.0
    assert t[("socket1", "mem.read_bw")] == 40000 * 64 / 2.0
    assert t[("socket0", "mem.write_bw")] == 2000 * 64 / 2.0
    assert t[("socket1", "mem.write_bw")] == 1000 * 64 / 2.0

    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.write_bw", "--per-channel",
               "-x,", "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    channels = [f"uncore_imc_{i}@cpu{c}" for c in (0, 4) for i in range(4)]
    # one row per channel and metric, socket 0 first
    assert list(dict.fromkeys(r["scope"] for r in rows)) == channels
    t = totals(rows)
    for i in range(4):
        # (i + 1) x 1000 reads on cpu0; (i + 1) x (3000 + 1000) on cpu4; over 2 s
        assert t[(f"uncore_imc_{i}@cpu0", "mem.read_bw")] == (i + 1) * 1000 * 64 / 2.0
        assert t[(f"uncore_imc_{i}@cpu4", "mem.read_bw")] == (i + 1) * 4000 * 64 / 2.0
        assert t[(f"uncore_imc_{i}@cpu0", "mem.write_bw")] == 500 * 64 / 2.0
        assert t[(f"uncore_imc_{i}@cpu4", "mem.write_bw")] == 250 * 64 / 2.0


def sapphire_rapids_imc(reads0, reads4, writes0, writes4):
    """The SPR fixture's IMCs (discovery box IDs 0, 2, 3, 10; no events/ directory)."""
    values = {}
    for k, i in enumerate((0, 2, 3, 10)):
        values[f"uncore_imc_{i}/event=0x05,umask=0xcf/@cpu0"] = reads0[k]
        values[f"uncore_imc_{i}/event=0x05,umask=0xcf/@cpu4"] = reads4[k]
        values[f"uncore_imc_{i}/cas_count_write/@cpu0"] = writes0[k]
        values[f"uncore_imc_{i}/cas_count_write/@cpu4"] = writes4[k]
    return values


def test_sapphire_rapids_bandwidth_per_socket_and_gapped_channels(memscope, tmp_path):
    replay = tmp_path / "spr.jsonl"
    write_replay(replay, [(1.0, sapphire_rapids_imc([100, 200, 300, 400], [1000, 2000, 3000, 4000],
                                                    [50] * 4, [25] * 4))])
    env = fixture_env("sapphire-rapids-2s")
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.write_bw", "--per-socket", "-x,", "--self-describing"],
              env=env)
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert t[("socket0", "mem.read_bw")] == 1000 * 64
    assert t[("socket1", "mem.read_bw")] == 10000 * 64
    assert t[("socket0", "mem.write_bw")] == 200 * 64
    assert t[("socket1", "mem.write_bw")] == 100 * 64

    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw,mem.write_bw", "--per-channel",
               "-x,", "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    # the box IDs as the kernel names them, gaps kept, 10 after 3 (natural order)
    channels = [f"uncore_imc_{i}@cpu{c}" for c in (0, 4) for i in (0, 2, 3, 10)]
    assert list(dict.fromkeys(r["scope"] for r in rows)) == channels
    t = totals(rows)
    for k, i in enumerate((0, 2, 3, 10)):
        assert t[(f"uncore_imc_{i}@cpu0", "mem.read_bw")] == (k + 1) * 100 * 64
        assert t[(f"uncore_imc_{i}@cpu4", "mem.read_bw")] == (k + 1) * 1000 * 64
        assert t[(f"uncore_imc_{i}@cpu0", "mem.write_bw")] == 50 * 64
        assert t[(f"uncore_imc_{i}@cpu4", "mem.write_bw")] == 25 * 64


def test_sapphire_rapids_explain_names_the_gapped_instances(memscope):
    res = run([memscope, "list", "--explain", "mem.read_bytes"], env=fixture_env("sapphire-rapids-2s"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "computed by family intel-sapphire-rapids" in out
    assert "formula: imc.cas_count_read * 64" in out
    # encoded from the format fields: the fixture IMCs publish no aliases
    assert re.search(r"^\s+imc\.cas_count_read = event=0x05,umask=0xcf$", out, re.M), out
    for i in (0, 2, 3, 10):
        assert re.search(rf"^\s+uncore_imc_{i}/event=0x05,umask=0xcf/\s+type=\d+ config=0xcf05\s+"
                         r"on cpu 0 \(node 0, socket 0\), cpu 4 \(node 1, socket 1\)$", out, re.M), i
    # box IDs the discovery table does not list, and the free-running PMUs, are not instances
    assert "uncore_imc_1/" not in out and "uncore_imc_free_running" not in out


def test_per_channel_needs_channel_metrics(memscope, tmp_path):
    res = run([memscope, "stat", "--per-channel", "--", "true"])
    assert res.returncode == 2 and "name some with -m" in res.stderr, res.stderr
    # This machine's metrics are the kernel's: none is counted per memory channel.
    res = run([memscope, "stat", "-m", "kernel.faults", "--per-channel", "--", "true"])
    assert res.returncode == 1, res.stderr
    assert "none of the metrics asked for is counted per memory channel on this machine" in res.stderr


def test_metrics_per_cpu_is_refused(memscope):
    res = run([memscope, "stat", "-m", "kernel.faults", "--per-cpu", "--", "true"])
    assert res.returncode == 2
    assert "not per CPU" in res.stderr


# ---- Catalog metrics on the eBPF series (family linux-ebpf) ----------------

def perf_page_faults(cmd):
    """perf stat's page-faults for one run of cmd."""
    res = run(["perf", "stat", "-x,", "-e", "page-faults", "--"] + cmd)
    assert res.returncode == 0, res.stderr
    line = [l for l in res.stderr.splitlines() if ",page-faults," in l][0]
    return float(line.split(",")[0])


def test_ebpf_page_placement_per_node(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "proc.faults,proc.pages_alloc", "--per-node",
               "--", touchmem, "64"])
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    t = totals(rows)
    pages = 64 * 256   # 64 MiB of 4 KiB pages touched once each, THP off
    assert abs(t[("node0", "proc.pages_alloc")] - pages) <= 0.03 * pages
    # A fault count carries no node: the node row says not counted, never 0.
    faults_node0 = [r for r in rows if r["scope"] == "node0" and r["event"] == "proc.faults"][0]
    assert faults_node0["counted"] is False
    # Only the metrics are shown: their eBPF series stay hidden unless -e names them.
    assert {r["event"] for r in rows} == {"proc.faults", "proc.pages_alloc"}


def test_ebpf_faults_agree_with_perf(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "-m", "proc.faults,proc.pages_alloc",
               "--", touchmem, "64"])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    # The same run, counted by perf's software event and by the eBPF probe.
    assert abs(t[("total", "proc.faults")] - t[("total", "page-faults")]) <= 0.01 * t[("total", "page-faults")]
    # And perf stat itself on another run of the same workload.
    expected = perf_page_faults([touchmem, "64"])
    assert abs(t[("total", "proc.faults")] - expected) <= 0.01 * expected
    assert abs(t[("total", "proc.pages_alloc")] - 64 * 256) <= 0.03 * 64 * 256


def test_ebpf_offcpu_ratio_of_a_sleeper(memscope):
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "proc.offcpu_ratio,proc.offcpu_ns", "--", "sleep", "0.3"])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    # sleep runs for about a millisecond of its 300 ms.
    assert t[("total", "proc.offcpu_ratio")] > 0.95
    assert abs(t[("total", "proc.offcpu_ns")] - 0.3e9) <= 0.1 * 0.3e9


def test_ebpf_metric_and_series_have_one_name(memscope, touchmem):
    """The event proc.pages_alloc and the metric are one thing with one name: named both
    ways (-e and -m, as proc.faults can be), both rows carry the same count; the metric's old
    name still means it."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "proc.pages_alloc", "-m", "proc.pages_alloc",
               "--", touchmem, "16"])
    assert res.returncode == 0, res.stderr
    rows = [l.split(",") for l in counter_output(res.stderr).splitlines() if l.startswith("total,total,proc.pages_alloc,")]
    assert rows and len({r[3] for r in rows}) == 1 and 16 * 256 <= float(rows[0][3]) <= 16 * 256 * 1.05, counter_output(res.stderr)
    # The old name: accepted, documented as the old name of the same metric.
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "proc.pages_placed", "--", touchmem, "16"])
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert 16 * 256 <= t[("total", "proc.pages_alloc")] <= 16 * 256 * 1.05, counter_output(res.stderr)
    res = run([memscope, "list", "--metrics"])
    line = [l for l in res.stdout.splitlines() if l.startswith("proc.pages_alloc ")]
    assert len(line) == 1 and "formerly proc.pages_placed" in line[0], res.stdout
    assert not any(l.startswith("proc.pages_placed") for l in res.stdout.splitlines())
    res = run([memscope, "list", "--explain", "proc.pages_placed"])
    assert res.returncode == 0 and res.stdout.count("proc.pages_alloc (counter") == 1, res.stdout


def test_list_explain_shows_the_ebpf_series(memscope):
    res = run([memscope, "list", "--explain", "proc.pages_alloc"])
    assert res.returncode == 0, res.stderr
    assert "computed by family linux-ebpf" in res.stdout
    assert "pages.alloc = eBPF series proc.pages_alloc" in res.stdout
    assert "one series per node" in res.stdout


def test_ebpf_metrics_need_kernel_btf(memscope):
    env = fixture_env("kunpeng920-2s")
    res = run([memscope, "list", "--explain", "proc.faults"], env=env)
    assert res.returncode == 0, res.stderr
    assert "NOT AVAILABLE" in res.stdout
    assert "kunpeng920-2s/sys/kernel/btf/vmlinux" in res.stdout and "no kernel BTF at" in res.stdout


def test_ebpf_pages_per_node_replayed_on_a_4_node_machine(memscope, tmp_path):
    # Only the BTF file's presence is checked before loading: a stand-in lets
    # the family resolve on the fixture.
    btf = tmp_path / "vmlinux"
    btf.write_text("stand-in")
    replay = tmp_path / "pages.jsonl"
    write_replay(replay, [(1.0, {"proc.pages_alloc@node0": 100, "proc.pages_alloc@node1": 300,
                                 "proc.pages_alloc@node2": 0, "proc.pages_alloc@node3": 600})])
    env = fixture_env("kunpeng920-2s", MEMSCOPE_BPF_BTF=str(btf))
    res = run([memscope, "stat", "--replay", str(replay), "-m", "proc.pages_alloc", "--per-node", "-x,", "--self-describing"],
              env=env)
    assert res.returncode == 0, res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert [t[(f"node{n}", "proc.pages_alloc")] for n in range(4)] == [100, 300, 0, 600]
