"""`memscope list --explain sample.mem`: which memory sampling event a machine has, from the
catalog's sampling sections, on fixture machines of each vendor and on this host."""
import re
import shutil

from conftest import ROOT, fixture_env, run


def explain(memscope, machine=None):
    res = run([memscope, "list", "--explain", "sample.mem"], env=fixture_env(machine) if machine else None)
    assert res.returncode == 0, res.stderr
    return res.stdout


def uses(text):
    return re.search(r"this host uses: (.*)", text).group(1)


def test_intel_pebs(memscope):
    text = explain(memscope, "skylake-sp-2s")
    assert uses(text) == "cpu/mem-loads,ldlat=30/P, cpu/mem-stores/P"
    assert "family intel-skylake-sp (pmu/intel-skylake-sp.yaml), decoded as data-src" in text
    assert "arch/x86/events/intel/ds.c (pebs_data_source" in text
    # Westmere has no precise store sampling.
    assert uses(explain(memscope, "westmere-ep-2s")) == "cpu/mem-loads,ldlat=30/P"


def test_sapphire_rapids_says_why_not_loads(memscope):
    text = explain(memscope, "sapphire-rapids-2s")
    assert uses(text) == "cpu/mem-stores/P"
    assert re.search(r"not used: memscope cannot read these samples yet: the load latency event must be opened "
                     r"in a group led by mem-loads-aux", text), text


def test_amd_ibs(memscope):
    for machine in ("epyc-zen3-2s", "epyc-zen4-2s"):
        text = explain(memscope, machine)
        assert uses(text) == "ibs_op//", text
        assert "decoded as amd-ibs-op (sampling/amd-ibs-op.yaml)" in text


def test_arm_spe_is_named_but_the_fallback_is_used(memscope):
    text = explain(memscope, "neoverse-n1-cmn")
    assert uses(text) == "page-faults"
    assert "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1,min_latency=30/" not in uses(text)
    assert re.search(r"arm-neoverse-cmn: \{pmu\}/ts_enable=1.* \(decode arm-spe\)\n\s+not used: memscope cannot read "
                     r"these samples yet: SPE writes its records to an AUX trace buffer", text), text


def test_no_pmu_falls_back_to_page_faults(memscope):
    text = explain(memscope, "kunpeng920-2s")
    assert uses(text) == "page-faults"
    assert "move_pages(2)" in text


def test_this_host(memscope):
    text = explain(memscope)
    assert re.search(r"this host uses: \S", text)
    # numa_balancing is reported from the host's own sysctl.
    value = open("/proc/sys/kernel/numa_balancing").read().strip()
    if uses(text) == "page-faults":
        assert ("NUMA balancing is off" if value == "0" else f"NUMA balancing is on (numa_balancing = {value})") in text


def test_a_broken_sampling_entry_names_its_line(memscope, tmp_path):
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", cat)
    family = cat / "pmu" / "linux-kernel.yaml"
    family.write_text(family.read_text().replace("decode: page-fault", "decode: page-faults"))
    res = run([memscope, "list", "--explain", "sample.mem"], env=dict(fixture_env("kunpeng920-2s"),
                                                                      MEMSCOPE_CATALOG_DIR=str(cat)))
    assert res.returncode == 1
    assert re.search(r"pmu/linux-kernel\.yaml:\d+:\d+: unknown decode 'page-faults'; expected one of: data-src, "
                     r"amd-ibs-op, arm-spe, page-fault", res.stderr), res.stderr
