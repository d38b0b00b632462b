"""The catalog as a user meets it: list --metrics / --explain on fixture machines, stat --replay, doctor."""
import re

from conftest import fixture_env, run


def test_list_metrics_on_kunpeng(memscope):
    r = run([memscope, "list", "--metrics"], env=fixture_env("kunpeng920-2s"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "CPU: Arm implementer 0x48 part 0xd01" in out
    assert re.search(r"hisi-hip08 \(33 instances\)", out)
    assert re.search(r"^mem\.read_bytes\s+B\s+counter\s+yes\s+hisi-hip08: ddrc\.flux_rd \* 32 \(16 instances\) "
                     r"\[approximate\]", out, re.M)
    assert re.search(r"^uncore\.clockticks\s+cycles\s+counter\s+no\s+hisi-hip08: hip08 DDRC/HHA/L3C v1 have no "
                     r"cycle event", out, re.M)
    assert re.search(r"^\d+ of \d+ metrics available", out, re.M)


def test_explain_remote_ratio_names_every_raw_event(memscope):
    r = run([memscope, "list", "--explain", "mem.remote_ratio"], env=fixture_env("kunpeng920-2s"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "formula: mem.remote_accesses / (mem.local_accesses + mem.remote_accesses)" in out
    assert "formula: hha.rx_outer + hha.rx_sccl" in out
    assert "fidelity: approximate - home-agent view" in out
    # each HHA instance, its encoding and where it counts
    assert re.search(r"hisi_sccl5_hha3/event=0x01/\s+type=\d+ config=0x1\s+on cpu 16 \(node 2, socket 1\)", out)
    assert "fallback 2 (not used): core.remote_access_rd" in out


def test_explain_unknown_metric_is_an_error(memscope):
    r = run([memscope, "list", "--explain", "mem.nope"], env=fixture_env("kunpeng920-2s"))
    assert r.returncode != 0
    assert "unknown metric 'mem.nope'" in r.stderr


def test_doctor_on_this_vm_reports_the_missing_pmu_with_a_fix(memscope):
    r = run([memscope, "doctor"])
    assert "Performance monitoring units" in r.stdout
    assert "fix:" in r.stdout
    assert re.search(r"\d+ problems?, \d+ warnings?", r.stdout)


def test_sapphire_rapids_metrics_local_remote_from_the_cha_then_the_core(memscope):
    r = run([memscope, "list", "--metrics"], env=fixture_env("sapphire-rapids-2s"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "CPU: GenuineIntel family 0x6 model 0x8f" in out
    # 4 IMCs (box IDs 0, 2, 3, 10), 4 CHAs (0, 1, 2, 4), 4 UPI links, the core PMU, the msr PMU (TSC, for the top-down latency metrics)
    assert re.search(r"intel-sapphire-rapids \(14 instances\)", out)
    assert re.search(r"^mem\.read_bytes\s+B\s+counter\s+yes\s+intel-sapphire-rapids: imc\.cas_count_read \* 64 "
                     r"\(4 instances\) \[approximate\]$", out, re.M)
    assert re.search(r"^mem\.read_bw\s+B/s\s+gauge\s+yes\s+= mem\.read_bytes / seconds$", out, re.M)
    # the home-agent view, as on Skylake-SP (Intel's tables need no extended umask or filter for it)
    assert re.search(r"^mem\.local_accesses\s+accesses\s+counter\s+yes\s+intel-sapphire-rapids: "
                     r"cha\.reads_local \+ cha\.writes_local \(4 instances\) \[approximate\]$", out, re.M)
    assert re.search(r"^mem\.remote_ratio\s+-\s+ratio\s+yes\s+= mem\.remote_accesses / "
                     r"\(mem\.local_accesses \+ mem\.remote_accesses\)$", out, re.M)

    r = run([memscope, "list", "--explain", "mem.remote_ratio"], env=fixture_env("sapphire-rapids-2s"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "formula: cha.reads_remote + cha.writes_remote" in out
    assert re.search(r"uncore_cha_4/event=0x50,umask=0x08/\s+type=\d+ config=0x850\s+on cpu 0 \(node 0, socket 0\)",
                     out), out
    # the core's retired loads remain the fallback
    assert "fallback 2 (not used): core.l3_miss_remote_dram + core.l3_miss_remote_hitm + core.l3_miss_remote_fwd" in out


def test_icelake_encodes_cas_count_from_the_format_fields_not_the_stale_alias(memscope, fixtures_dir):
    # The fixture models a kernel from before the late-2021 fix: its aliases carry the Skylake-SP umasks.
    events = fixtures_dir / "icelake-sp-2s" / "sys" / "bus" / "event_source" / "devices" / "uncore_imc_2" / "events"
    assert (events / "cas_count_read").read_text().strip() == "event=0x04,umask=0x03"
    r = run([memscope, "list", "--explain", "mem.total_bytes"], env=fixture_env("icelake-sp-2s"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "computed by family intel-icelake-sp" in out
    assert re.search(r"^\s+imc\.cas_count_read = event=0x04,umask=0x0f$", out, re.M), out
    assert re.search(r"^\s+imc\.cas_count_write = event=0x04,umask=0x30$", out, re.M), out
    assert re.search(r"uncore_imc_2/event=0x04,umask=0x0f/\s+type=\d+ config=0xf04\s+"
                     r"on cpu 0 \(node 0, socket 0\), cpu 4 \(node 1, socket 1\)", out)
    assert re.search(r"uncore_imc_2/event=0x04,umask=0x30/\s+type=\d+ config=0x3004\s", out)
    assert "umask=0x03" not in out and "sysfs alias" not in out
