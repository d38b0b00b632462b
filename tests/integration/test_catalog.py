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
