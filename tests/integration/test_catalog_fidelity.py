"""The catalog against its upstream sources, family by family, as a user meets it: list --explain names the
events, their source and their caveat, and stat --replay gives the bandwidth worked out by hand per node,
socket and memory channel. One test (or a part of one) per fact that was wrong before, and one per family."""
import json
import os
import re
import shutil

import pytest

from conftest import FIXTURES, fixture_env, run
from stat_output import counter_output, intervals, parse_csv, totals


def explain(memscope, machine, metric, **env):
    r = run([memscope, "list", "--explain", metric], env=fixture_env(machine, **env))
    assert r.returncode == 0, r.stderr
    return r.stdout


def metrics_list(memscope, machine):
    r = run([memscope, "list", "--metrics"], env=fixture_env(machine))
    assert r.returncode == 0, r.stderr
    return r.stdout


def row(out, metric):
    return [l for l in out.splitlines() if l.startswith(metric + " ")][0]


def replay(memscope, tmp_path, machine, frames, metrics, *args, env=None):
    path = tmp_path / (machine + ".jsonl")
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines += [json.dumps({"t": t, "values": v}) for t, v in frames]
    path.write_text("\n".join(lines) + "\n")
    r = run([memscope, "stat", "--replay", str(path), "-m", metrics, "-x,", "--self-describing"] + list(args),
            env=env or fixture_env(machine))
    assert r.returncode == 0, r.stderr
    return parse_csv(counter_output(r.stderr))


# ---- every fixture machine, as a new user tries it ------------------------------

MACHINES = sorted(d for d in os.listdir(FIXTURES) if (FIXTURES / d / "sys").is_dir())


@pytest.mark.parametrize("machine", MACHINES)
def test_explain_read_bandwidth_names_events_source_and_caveat(memscope, machine):
    out = explain(memscope, machine, "mem.read_bw")
    assert "formula: mem.read_bytes / seconds" in out
    if "NOT AVAILABLE" in out.split("mem.read_bytes (counter")[1]:
        # one line saying why, then every reason
        assert re.search(r"NOT AVAILABLE on this host: \S.*\n  every reason: ", out), out
        return
    part = out.split("mem.read_bytes (counter")[1]
    assert re.search(r"computed by family \S+ \(", part), out
    assert re.search(r"\n  source: \S", part), out
    fidelity = re.search(r"\n  fidelity: (\w+)(?: - (.*))?\n", part)
    assert fidelity, out
    if fidelity.group(1) != "exact":
        assert fidelity.group(2), "an %s mapping without a caveat on %s" % (fidelity.group(1), machine)
    # each raw event with its encoding on at least one instance
    assert re.search(r"\n    \w+\.\w+ = ", part) and re.search(r"type=\d+ config=0x[0-9a-f]+", part), out


# ---- HiSilicon hip09 and later -------------------------------------------------

def test_hip09_pa_v3_and_h60pa_events_are_their_own(memscope):
    # PA v3 (HISI0275) carries data flits: bytes come from tx_dat 0x1 on hisi_sicl*_pa*, never from H60PA,
    # whose only events are rx_flit 0x50 and tx_flit 0x65.
    out = explain(memscope, "hip09-v3-2s", "interconnect.tx_bytes")
    assert "formula: pa3.tx_dat * 64" in out
    assert re.search(r"hisi_sicl0_pa0/event=0x1/\s+type=\d+ config=0x1\s+on cpu 0 \(node 0, socket 0\)", out), out
    assert "h60pa0/" not in out.split("raw events")[1].split("fallback")[0]
    # PA v2 (hip09-2s) gives no bytes: the one-line reason names the v3 event its PMU lacks
    line = row(metrics_list(memscope, "hip09-2s"), "interconnect.tx_bytes")
    assert "hisi-hip09: pa3.tx_dat: hisi_sicl0_pa0 publishes no event 'tx_dat'" in line, line


def test_an_alias_with_another_code_is_another_pmu_version(memscope, tmp_path):
    # A catalog whose PA role has PA v2's codes (rx_req 0x40, tx_req 0x5c): on PA v3, where the driver
    # gives the same names codes 0x7 and 0x0, the events are not that PMU's.
    cat = tmp_path / "catalog"
    (cat / "pmu").mkdir(parents=True)
    shutil.copy(FIXTURES.parents[2] / "catalog" / "metrics.yaml", cat / "metrics.yaml")
    (cat / "pmu" / "pa.yaml").write_text(
        "family: pa-v2\ndescription: PA v2 only\nsources: [\"Linux hisi_uncore_pa_pmu.c\"]\n"
        "pmus:\n  pa:\n    match: '^hisi_sicl([0-9]+)_pa([0-9]+)$'\n    scope: socket\n    events:\n"
        "      tx_req: { config: event=0x5c, alias: tx_req }\n"
        "metrics:\n  interconnect.tx_bytes:\n    - formula: pa.tx_req * 64\n      source: test\n")
    env = {"MEMSCOPE_CATALOG_DIR": str(cat)}
    line = row(run([memscope, "list", "--metrics"], env=fixture_env("hip09-v3-2s", **env)).stdout,
               "interconnect.tx_bytes")
    assert ("no   pa-v2: tx_req: hisi_sicl0_pa0 publishes 'tx_req' as config=0x00, not event=0x5c: another "
            "version of this PMU") in line, line
    line = row(run([memscope, "list", "--metrics"], env=fixture_env("hip09-2s", **env)).stdout,
               "interconnect.tx_bytes")
    assert "yes  pa-v2: pa.tx_req * 64 (2 instances)" in line, line


def test_hip09_cross_socket_ddr_sets_datasrc_skt(memscope):
    out = explain(memscope, "hip09-2s", "mem.remote_accesses")
    # datasrc_cfg 0x10 << 11 | tt_req 0x4 << 8 | datasrc_skt 1 << 16 (config1)
    assert re.search(r"hisi_sccl1_l3c10/event=0xb9,tt_req=0x4,datasrc_cfg=0x10,datasrc_skt=1/\s+type=\d+ "
                     r"config=0xb9 config1=0x18400", out), out


def test_hip09_snoops_are_not_the_hha_v1_event(memscope):
    out = explain(memscope, "hip09-2s", "coherence.snoops_sent")
    assert "NOT AVAILABLE" in out and "event=0x33" not in out
    assert "pa3.tx_snp: hisi_sicl0_pa0 publishes no event 'tx_snp'" in out
    out = explain(memscope, "hip09-v3-2s", "coherence.snoops_sent")
    assert "formula: pa3.tx_snp" in out and "HHA v2 has no snoop count" in out


def test_hip09_hha_l3c_sllc_widths_and_counters(memscope):
    # hisi_uncore_hha_pmu.c v2: HHA_V2_NR_COUNTERS 8, counter_bits 64; L3C v2 and SLLC 64-bit
    out = explain(memscope, "hip09-2s", "llc.accesses")
    assert "PMU role l3c: PMUs matching '^hisi_sccl([0-9]+)_l3c([0-9]+)(_[0-9]+)?$', scope ccx, 8 counters of 64 bits" \
        in out, out
    r = run([memscope, "list", "--explain", "uncore.clockticks"], env=fixture_env("hip09-2s"))
    assert "fallback" not in r.stdout
    import yaml
    fam = yaml.safe_load(open(FIXTURES.parents[2] / "catalog" / "pmu" / "hisi-hip09.yaml"))
    assert (fam["pmus"]["hha"]["counters"], fam["pmus"]["hha"]["width"]) == (8, 64)
    assert fam["pmus"]["sllc"]["width"] == 64 and fam["pmus"]["l3c"]["width"] == 64


def test_hip09_l3c_v3_gives_llc_accesses(memscope, tmp_path):
    out = explain(memscope, "hip09-v3-2s", "llc.accesses")
    assert "formula: l3c3.l3c_ref" in out
    assert re.search(r"hisi_sccl1_l3c10/event=0xbc/\s+type=\d+ config=0xbc\s+on cpu 0 \(node 0, socket 0\)", out)
    rows = replay(memscope, tmp_path, "hip09-v3-2s",
                  [(1.0, {f"hisi_sccl{s}_l3c10/l3c_ref/": 1000 * (i + 1) for i, s in enumerate((1, 3, 5, 7))})],
                  "llc.accesses", "--per-node")
    t = totals(rows)
    assert [t[(f"node{n}", "llc.accesses")] for n in range(4)] == [1000, 2000, 3000, 4000]


def test_hip09_cpa_coherent_io_bandwidth_per_socket(memscope, tmp_path):
    values = {}
    for sicl, scale in ((0, 1), (2, 10)):
        values.update({f"hisi_sicl{sicl}_cpa0/p0_wr_dat/": 100 * scale, f"hisi_sicl{sicl}_cpa0/p0_rd_dat_64b/": 50 * scale,
                       f"hisi_sicl{sicl}_cpa0/p0_rd_dat_32b/": 20 * scale, f"hisi_sicl{sicl}_cpa0/p1_wr_dat/": 10 * scale,
                       f"hisi_sicl{sicl}_cpa0/p1_rd_dat_64b/": 5 * scale, f"hisi_sicl{sicl}_cpa0/p1_rd_dat_32b/": 2 * scale})
    rows = replay(memscope, tmp_path, "hip09-v3-2s", [(2.0, values)], "io.coherent_bw", "--per-socket")
    t = totals(rows)
    # (100 + 50 + 10 + 5) x 64 + (20 + 2) x 32 = 11264 B over 2 s
    assert t[("socket0", "io.coherent_bw")] == 11264 / 2
    assert t[("socket1", "io.coherent_bw")] == 112640 / 2


# ---- ThunderX2 ----------------------------------------------------------------

def test_thunderx2_dmc_cycles_undo_the_drivers_x8(memscope, tmp_path):
    rows = replay(memscope, tmp_path, "thunderx2-2s",
                  [(1.0, {"uncore_dmc_0/cnt_cycles/": 8000, "uncore_dmc_1/cnt_cycles/": 16000})],
                  "uncore.clockticks", "--per-socket")
    t = totals(rows)
    assert t[("socket0", "uncore.clockticks")] == 1000 and t[("socket1", "uncore.clockticks")] == 2000


# ---- AMD ------------------------------------------------------------------------

def test_zen4_umc_saturation_and_df_locality_caveats(memscope, tmp_path):
    out = explain(memscope, "epyc-zen4-2s", "mem.read_bytes")
    assert "2492e5aba2be" in out and "saturates" in out
    # without UMC PMUs (kernels before 6.9), the DF fallback says it sees this socket's readers only
    root = tmp_path / "zen4"
    shutil.copytree(FIXTURES / "epyc-zen4-2s", root)
    for pmu in (root / "sys" / "bus" / "event_source" / "devices").glob("amd_umc_*"):
        shutil.rmtree(pmu)
    r = run([memscope, "list", "--explain", "mem.read_bytes"],
            env=fixture_env("epyc-zen4-2s", MEMSCOPE_SYSFS_ROOT=str(root / "sys"),
                            MEMSCOPE_PROCFS_ROOT=str(root / "proc")))
    assert "df.read_beats_cs0" in r.stdout and "processors of this socket only (local_processor)" in r.stdout


def test_zen2_fill_caveats_say_demand_fills_and_die(memscope):
    out = explain(memscope, "epyc-zen2-2s", "mem.remote_ratio")
    assert "demand data cache fills from DRAM or I/O of a different die" in out
    assert "demand and prefetch" not in out


def test_zen5_bandwidth_per_socket_and_channel(memscope, tmp_path):
    # amd_umc_0..5 on socket 0 (cpu 0), 6..11 on socket 1 (cpu 8): numbers run across the machine
    values = {f"amd_umc_{i}/cas_rd/": (1000 * (i + 1) if i < 6 else 500) for i in range(12)}
    rows = replay(memscope, tmp_path, "epyc-zen5-2s", [(1.0, values)], "mem.read_bw", "--per-socket")
    t = totals(rows)
    assert t[("socket0", "mem.read_bw")] == 21000 * 64      # (1 + ... + 6) x 1000 CAS x 64 B
    assert t[("socket1", "mem.read_bw")] == 3000 * 64
    rows = replay(memscope, tmp_path, "epyc-zen5-2s", [(1.0, values)], "mem.read_bw", "--per-node")
    assert totals(rows)[("node1", "mem.read_bw")] == 3000 * 64
    rows = replay(memscope, tmp_path, "epyc-zen5-2s", [(1.0, values)], "mem.read_bw", "--per-channel")
    t = totals(rows)
    assert t[("amd_umc_3", "mem.read_bw")] == 4000 * 64 and t[("amd_umc_11", "mem.read_bw")] == 500 * 64
    # the DF fallback uses Zen 5's DRAM-channel events, local or remote socket (umask 0xffe)
    import yaml
    fam = yaml.safe_load(open(FIXTURES.parents[2] / "catalog" / "pmu" / "amd-zen5.yaml"))
    assert fam["pmus"]["df"]["events"]["read_beats_dram0"]["config"] == "event=0x1f,umask=0xffe"


# ---- Intel --------------------------------------------------------------------------

@pytest.mark.parametrize("machine,family", [("icelake-sp-2s", "intel-icelake-sp"),
                                            ("sapphire-rapids-2s", "intel-sapphire-rapids")])
def test_icx_spr_use_the_cha_and_8_core_counters(memscope, machine, family):
    out = metrics_list(memscope, machine)
    assert re.search(rf"^mem\.local_accesses\s+accesses\s+counter\s+yes\s+{family}: cha\.reads_local \+ "
                     r"cha\.writes_local \(4 instances\) \[approximate\]$", out, re.M), out
    assert re.search(rf"^coherence\.snoops_sent\s+snoops\s+counter\s+yes\s+{family}: cha\.snoops_sent", out, re.M)
    ex = explain(memscope, machine, "coherence.snoops_sent")
    assert re.search(r"uncore_cha_0/event=0x51,umask=0x01/\s+type=\d+ config=0x151\s", ex), ex
    ex = explain(memscope, machine, "llc.accesses")
    assert "PMU role core: PMUs matching '^cpu$', scope cpu, 8 counters of 48 bits" in ex


def test_spr_clockticks_are_dclk_and_cas_caveat_names_32_byte_mode(memscope):
    out = explain(memscope, "sapphire-rapids-2s", "uncore.clockticks")
    assert re.search(r"uncore_imc_0/event=0x01,umask=0x01/\s+type=\d+ config=0x101\s", out), out
    assert "UNC_M_HCLOCKTICKS" in out
    out = explain(memscope, "sapphire-rapids-2s", "mem.read_bytes")
    assert "fidelity: approximate - each CAS is counted as 64 B; in interleaved mode" in out
    assert "RD_32B 0x06/0xc8" in out


def test_granite_rapids_bandwidth_is_the_sum_of_both_subchannels(memscope, tmp_path):
    values = {}
    for i in (0, 1, 4, 5):
        values[f"uncore_imc_{i}/cas_rd_sch0/@cpu0"] = 100
        values[f"uncore_imc_{i}/event=0x06,umask=0xcf/@cpu0"] = 300
        values[f"uncore_imc_{i}/cas_rd_sch0/@cpu4"] = 0
        values[f"uncore_imc_{i}/event=0x06,umask=0xcf/@cpu4"] = 1000
    frames = [(2.0, values)]
    t = totals(replay(memscope, tmp_path, "granite-rapids-2s", frames, "mem.read_bw", "--per-socket"))
    assert t[("socket0", "mem.read_bw")] == 4 * 400 * 64 / 2     # 51200
    assert t[("socket1", "mem.read_bw")] == 4 * 1000 * 64 / 2    # 128000
    t = totals(replay(memscope, tmp_path, "granite-rapids-2s", frames, "mem.read_bw", "--per-node"))
    assert t[("node0", "mem.read_bw")] == 51200
    rows = replay(memscope, tmp_path, "granite-rapids-2s", frames, "mem.read_bw", "--per-channel")
    t = totals(rows)
    assert list(dict.fromkeys(r["scope"] for r in rows)) == [f"uncore_imc_{i}@cpu{c}" for c in (0, 4)
                                                             for i in (0, 1, 4, 5)]
    assert t[("uncore_imc_4@cpu0", "mem.read_bw")] == 400 * 64 / 2 and t[("uncore_imc_5@cpu4", "mem.read_bw")] == 32000
    out = explain(memscope, "granite-rapids-2s", "mem.read_bw")
    assert "formula: (imc.cas_rd_sch0 + imc.cas_rd_sch1) * 64" in out
    assert re.search(r"uncore_imc_0/event=0x06,umask=0xcf/\s+type=\d+ config=0xcf06", out)


def test_granite_rapids_on_a_kernel_before_its_uncore_support(memscope):
    line = row(metrics_list(memscope, "granite-rapids-2s-linux6.6"), "mem.read_bytes")
    assert ("this kernel predates its uncore support for this CPU (Linux 6.8, commit 632c4bf6d007 "
            "perf/x86/intel/uncore: Support Granite Rapids) and shows only the discovery table's generic PMUs "
            "(uncore_type_0_0...): update the kernel") in line, line


# ---- Arm ----------------------------------------------------------------------------

def test_cmn_memory_traffic_comes_from_hnf_not_sbsx(memscope):
    out = metrics_list(memscope, "neoverse-n1-cmn")
    assert re.search(r"^mem\.total_bytes\s+B\s+counter\s+yes\s+arm-neoverse-cmn: cmn\.hnf_mc_reqs \* 64 "
                     r"\(1 instance\) \[approximate\]$", out, re.M), out
    assert re.search(r"^mem\.read_bytes\s+.*cmn\.sbsx_rd_req \* 64 \(1 instance\) \[proxy\]$", out, re.M), out
    ex = explain(memscope, "neoverse-n1-cmn", "mem.read_bytes")
    assert "DRAM is behind SN-F nodes and SBSX reads stay near 0" in ex


def test_ll_cache_events_say_extllc_and_the_mesh_is_preferred(memscope):
    ex = explain(memscope, "neoverse-n1-cmn", "llc.accesses")
    assert "formula: cmn.hnf_slc_sf_cache_access" in ex and "fallback 3 (not used): core.ll_cache_rd" in ex
    ex = explain(memscope, "neoverse-n1-cmn", "mem.local_accesses")
    assert "CPUECTLR.EXTLLC" in ex


def test_two_cmn_meshes_on_one_socket_count_on_their_own_die(memscope, tmp_path):
    # arm_cmn_0 serves die 1 (cpumask 8), arm_cmn_1 die 0 (cpumask 0): probe order is not die order
    frames = [(1.0, {"arm_cmn_0/hnf_mc_reqs/": 1000, "arm_cmn_1/hnf_mc_reqs/": 3000})]
    t = totals(replay(memscope, tmp_path, "neoverse-n2-2cmn", frames, "mem.total_bw", "--per-node"))
    assert t[("node0", "mem.total_bw")] == 3000 * 64 and t[("node1", "mem.total_bw")] == 1000 * 64
    t = totals(replay(memscope, tmp_path, "neoverse-n2-2cmn", frames, "mem.total_bw", "--per-socket"))
    assert t[("socket0", "mem.total_bw")] == 4000 * 64
    ex = explain(memscope, "neoverse-n2-2cmn", "mem.total_bytes")
    assert "scope die" in ex and re.search(r"arm_cmn_0/type=0x5,eventid=0xd/\s+type=\d+ config=0xd0005\s+on cpu 8 "
                                           r"\(node 1, socket 0\)", ex), ex


def test_cmn_s3_uses_hn_s_nodes(memscope, tmp_path):
    out = metrics_list(memscope, "neoverse-v3-cmns3")
    assert re.search(r"^llc\.accesses\s+accesses\s+counter\s+yes\s+arm-neoverse-cmn: cmn\.hns_slc_sf_cache_access",
                     out, re.M), out
    assert re.search(r"^coherence\.snoops_sent\s+.*cmn\.hns_snp_sent", out, re.M)
    ex = explain(memscope, "neoverse-v3-cmns3", "llc.misses")
    assert re.search(r"arm_cmn_0/type=0x200,eventid=0x1,occupid=0x0/\s+type=\d+ config=0x10200", ex), ex
    frames = [(1.0, {"arm_cmn_0/hns_slc_sf_cache_access/": 5000, "arm_cmn_0/hns_cache_miss/": 500,
                     "arm_cmn_0/hns_mc_reqs_local/": 400})]
    t = totals(replay(memscope, tmp_path, "neoverse-v3-cmns3", frames, "llc.miss_rate,mem.total_bw", "--per-socket"))
    assert t[("socket0", "llc.miss_rate")] == 0.1 and t[("socket0", "mem.total_bw")] == 400 * 64


def test_ampere_altra_dmc620_bandwidth_per_socket_and_channel(memscope, tmp_path):
    devices = FIXTURES / "ampere-altra-2s" / "sys" / "bus" / "event_source" / "devices"
    dmcs = sorted(p.name for p in devices.glob("arm_dmc620_*"))
    socket = {n: (0 if (devices / n / "cpumask").read_text().strip() == "0" else 1) for n in dmcs}
    values = {f"{n}/rdwr/": 1000 if socket[n] == 0 else 2000 for n in dmcs}
    t = totals(replay(memscope, tmp_path, "ampere-altra-2s", [(1.0, values)], "mem.total_bw", "--per-socket"))
    assert t[("socket0", "mem.total_bw")] == 4 * 1000 * 64 and t[("socket1", "mem.total_bw")] == 4 * 2000 * 64
    t = totals(replay(memscope, tmp_path, "ampere-altra-2s", [(1.0, values)], "mem.total_bw", "--per-channel"))
    assert {scope for scope, _ in t} == set(dmcs)
    assert all(t[(n, "mem.total_bw")] == (64000 if socket[n] == 0 else 128000) for n in dmcs)
    ex = explain(memscope, "ampere-altra-2s", "mem.total_bytes")
    assert "computed by family arm-dmc620" in ex and "64 B per DRAM command is an assumption" in ex
    assert re.search(r"arm_dmc620_\w+/event=0x12,clkdiv2=0x1/\s+type=\d+ config=0x0 config2=0x290", ex), ex


def test_grace_scf_memory_and_remote_reads_per_socket(memscope, tmp_path):
    frames = [(2.0, {"nvidia_scf_pmu_0/cmem_rd_data/": 1000, "nvidia_scf_pmu_1/cmem_rd_data/": 3000,
                     "nvidia_scf_pmu_0/cmem_wr_total_bytes/": 6400, "nvidia_scf_pmu_1/cmem_wr_total_bytes/": 0,
                     "nvidia_scf_pmu_0/remote_socket_rd_data/": 10, "nvidia_scf_pmu_1/remote_socket_rd_data/": 20})]
    t = totals(replay(memscope, tmp_path, "grace-2s", frames, "mem.read_bw,mem.write_bw,interconnect.rx_bw",
                      "--per-socket"))
    assert t[("socket0", "mem.read_bw")] == 1000 * 32 / 2 and t[("socket1", "mem.read_bw")] == 3000 * 32 / 2
    assert t[("socket0", "mem.write_bw")] == 6400 / 2
    assert t[("socket1", "interconnect.rx_bw")] == 20 * 32 / 2
    t = totals(replay(memscope, tmp_path, "grace-2s", frames, "mem.read_bw,mem.write_bw,interconnect.rx_bw",
                      "--per-node"))
    assert t[("node1", "mem.read_bw")] == 48000
    ex = explain(memscope, "grace-2s", "mem.read_bw")
    assert "computed by family nvidia-grace" in ex and "NVIDIA's tuning guide" in ex


# ---- discovery on real machines ------------------------------------------------------

def test_uncore_pmu_without_cpumask_opens_on_one_cpu_and_says_so(memscope, tmp_path):
    root = tmp_path / "grace"
    shutil.copytree(FIXTURES / "grace-2s", root)
    (root / "sys" / "bus" / "event_source" / "devices" / "nvidia_scf_pmu_1" / "cpumask").unlink()
    env = fixture_env("grace-2s", MEMSCOPE_SYSFS_ROOT=str(root / "sys"), MEMSCOPE_PROCFS_ROOT=str(root / "proc"))
    r = run([memscope, "list", "--explain", "mem.write_bytes"], env=env)
    assert re.search(r"nvidia_scf_pmu_1/event=0x1db/\s+type=\d+ config=0x1db\s+on cpu 0 \(node 0, socket 0\): "
                     r"nvidia_scf_pmu_1 has no cpumask file, so it is opened system-wide on one CPU", r.stdout), r.stdout
    # counted once, not once per CPU
    frames = [(1.0, {"nvidia_scf_pmu_0/cmem_wr_total_bytes/": 100, "nvidia_scf_pmu_1/cmem_wr_total_bytes/": 50})]
    t = totals(replay(memscope, tmp_path, "grace-2s", frames, "mem.write_bytes", env=env))
    assert t[("total", "mem.write_bytes")] == 150


def test_memory_only_numa_nodes_are_not_counted_never_zero(memscope, tmp_path):
    # Xeon CPU Max in flat mode: HBM nodes 2 and 3 have memory and no CPU; the DDR IMCs count on
    # cpu 0 and cpu 4, so their traffic is nodes 0 and 1's, and the HBM nodes have no counter here.
    values = {}
    for i in (0, 2, 3, 10):
        values[f"uncore_imc_{i}/event=0x05,umask=0xcf/@cpu0"] = 100
        values[f"uncore_imc_{i}/event=0x05,umask=0xcf/@cpu4"] = 200
    rows = replay(memscope, tmp_path, "xeon-max-hbm-2s", [(1.0, values)], "mem.read_bw", "--per-node")
    by_node = {r["scope"]: r for r in rows if r["time"] == "total"}
    assert sorted(by_node) == ["node0", "node1", "node2", "node3"]
    assert by_node["node0"]["value"] == 400 * 64 and by_node["node1"]["value"] == 800 * 64
    assert not by_node["node2"]["counted"] and not by_node["node3"]["counted"]


def test_amd_df_counter_count_comes_from_cpuid(memscope, tmp_path):
    # EPYC 9654: CPUID 0x80000022 EBX[15:10] = 16 data fabric counters (the fixture's `cpuid -r` lines);
    # without UMC PMUs the 12 DF read events then fit one group instead of three time slices.
    root = tmp_path / "zen4"
    shutil.copytree(FIXTURES / "epyc-zen4-2s", root)
    for pmu in (root / "sys" / "bus" / "event_source" / "devices").glob("amd_umc_*"):
        shutil.rmtree(pmu)
    env = fixture_env("epyc-zen4-2s", MEMSCOPE_SYSFS_ROOT=str(root / "sys"), MEMSCOPE_PROCFS_ROOT=str(root / "proc"))
    out = run([memscope, "list", "--explain", "mem.read_bytes"], env=env).stdout
    assert "PMU role df: PMUs matching '^amd_df$', scope socket, 16 counters (CPUID 0x80000022 ebx 10-15) of 48 bits" \
        in out, out
    (root / "cpuid").unlink()
    out = run([memscope, "list", "--explain", "mem.read_bytes"], env=env).stdout
    assert "PMU role df: PMUs matching '^amd_df$', scope socket, 4 counters of 48 bits" in out, out
