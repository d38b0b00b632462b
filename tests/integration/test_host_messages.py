"""What memscope says about the machine it is pointed at: one-line reasons for what it cannot measure,
doctor's findings for that machine's vendor only, and a procfs tree that belongs with the sysfs tree."""
import re
import shutil

import pytest

from conftest import FIXTURES, fixture_env, run


def copy_machine(tmp_path, machine, drop_pmus=(), hypervisor=False, cpuinfo_subst=()):
    """A copy of a fixture machine without some PMUs, optionally flagged as a virtual machine."""
    root = tmp_path / machine
    shutil.copytree(FIXTURES / machine, root)
    devices = root / "sys" / "bus" / "event_source" / "devices"
    for pmu in list(devices.iterdir()):
        if any(re.fullmatch(p, pmu.name) for p in drop_pmus):
            shutil.rmtree(pmu)
    cpuinfo = root / "proc" / "cpuinfo"
    text = cpuinfo.read_text()
    if hypervisor:
        text = re.sub(r"^(flags\t\t: .*)$", r"\1 hypervisor", text, flags=re.M)
    for old, new in cpuinfo_subst:
        text = text.replace(old, new)
    cpuinfo.write_text(text)
    return root


def tree_env(root, **extra):
    env = fixture_env("epyc-zen4-2s")
    env["MEMSCOPE_SYSFS_ROOT"] = str(root / "sys")
    env["MEMSCOPE_PROCFS_ROOT"] = str(root / "proc")
    env.update(extra)
    return env


def zen4_vm(tmp_path):
    # An EPYC 9654 guest: the kernel has no core PMU and no AMD uncore PMUs.
    return copy_machine(tmp_path, "epyc-zen4-2s", drop_pmus=[r"cpu", r"amd_.*"], hypervisor=True)


def test_unavailable_metric_reason_is_one_line_naming_the_family_and_what_it_lacks(memscope, tmp_path):
    env = tree_env(zen4_vm(tmp_path))
    r = run([memscope, "list", "--metrics"], env=env)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stdout.splitlines() if l.startswith("mem.read_bytes ")][0]
    assert line.endswith("no   amd-zen4 in a VM: no amd_umc_N/amd_df PMU (memscope doctor says more)"), line
    # no other family's reasons (HiSilicon, Intel, ThunderX2...) in any row
    assert not re.search(r"hisi|intel-|thunderx2|amd-zen1|amd-fam15h", r.stdout), r.stdout
    assert max(len(l) for l in r.stdout.splitlines() if l.startswith(("mem.", "llc.", "uncore."))) < 200
    bw = [l for l in r.stdout.splitlines() if l.startswith("mem.read_bw ")][0]
    assert bw.endswith("needs mem.read_bytes, not available: amd-zen4 in a VM: no amd_umc_N/amd_df PMU (memscope doctor says "
                       "more)"), bw

    # stat names the same one line
    r = run([memscope, "stat", "-m", "mem.read_bw", "-a", "--", "true"], env=env)
    assert r.returncode != 0
    assert "amd-zen4 in a VM: no amd_umc_N/amd_df PMU (memscope doctor says more)" in r.stderr, r.stderr
    assert "hisi" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr

    # --explain keeps every reason
    r = run([memscope, "list", "--explain", "mem.read_bytes"], env=env)
    assert "NOT AVAILABLE on this host: amd-zen4 in a VM: no amd_umc_N/amd_df PMU" in r.stdout
    assert "every reason: amd-zen4 mapping 1 (umc.cas_rd * 64): umc.cas_rd: no PMU in" in r.stdout


def test_list_metrics_on_a_cpu_without_a_family_is_one_line(memscope, tmp_path):
    # An Alder Lake desktop (family 6 model 0x97): no catalog family is written for it.
    root = copy_machine(tmp_path, "skylake-sp-2s", drop_pmus=[r"uncore_.*"],
                        cpuinfo_subst=[("model\t\t: 85", "model\t\t: 151"),
                                       ("Xeon(R) Gold 6148 CPU @ 2.40GHz", "Core(TM) i7-12700")])
    r = run([memscope, "list", "--metrics"], env=tree_env(root))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert ("No catalog family matches this CPU (GenuineIntel family 0x6 model 0x97, Intel(R) Core(TM) i7-12700): "
            "memory-controller, cache and interconnect metrics need one; the kernel and eBPF metrics below and raw "
            "events (memscope list --events) still work; docs/catalog.md says how to add a family.") in out
    # no row per hardware metric repeating it (a plugin's metric says which plugin), the kernel's
    # metrics still listed
    assert not re.search(r"^(mem|llc|interconnect|coherence|queue|uncore)\.(?!.*a metric of plugin \w+, which is not "
                         r"loaded)", out, re.M), out
    assert re.search(r"^kernel\.faults\s+faults\s+counter\s+yes", out, re.M)


def test_doctor_in_a_vm_blames_the_vm_not_a_driver(memscope, tmp_path):
    r = run([memscope, "doctor"], env=tree_env(zen4_vm(tmp_path)))
    out = r.stdout
    assert "a virtual machine without a virtualised PMU" in out
    assert "modprobe" not in out, out
    assert "amd-zen4: no umc PMU, as in any virtual machine" in out
    assert re.search(r"^1 problem, ", out, re.M), out


def test_doctor_suggests_only_this_vendors_driver(memscope, tmp_path):
    root = copy_machine(tmp_path, "skylake-sp-2s", drop_pmus=[r"uncore_.*"])
    r = run([memscope, "doctor"], env=tree_env(root))
    out = r.stdout
    fixes = re.findall(r"fix: (.*)", out)
    assert "sudo modprobe intel-uncore (or a kernel with that driver built in)" in fixes, out
    assert not re.search(r"amd-uncore|hisi_|arm-cmn|thunderx2", out), out


def test_doctor_on_a_tree_does_not_mix_in_this_hosts_checks(memscope):
    r = run([memscope, "doctor"], env=fixture_env("skylake-sp-2s"))
    out = r.stdout
    assert "memscope doctor (fixture machine)" in out
    assert "this process's capabilities and limits are not checked against it" in out
    # this process's capabilities, this host's paranoid setting, rlimit and watchdog are not that machine's
    assert not re.search(r"open-file limit|NMI watchdog|capabilities allow|perf_event_paranoid = ", out), out


def test_sysfs_root_alone_takes_the_trees_own_procfs(memscope):
    env = fixture_env("skylake-sp-2s")
    del env["MEMSCOPE_PROCFS_ROOT"]
    r = run([memscope, "list", "--metrics"], env=env)
    assert r.returncode == 0, r.stderr
    assert "CPU: GenuineIntel family 0x6 model 0x55" in r.stdout


def test_procfs_of_another_vendor_is_refused(memscope):
    env = fixture_env("skylake-sp-2s", MEMSCOPE_PROCFS_ROOT=str(FIXTURES / "epyc-zen4-2s" / "proc"))
    r = run([memscope, "list", "--metrics"], env=env)
    assert r.returncode == 1
    assert re.search(r"epyc-zen4-2s/proc/cpuinfo describes AuthenticAMD family 0x19 model 0x11 but "
                     r".*skylake-sp-2s/sys/bus/event_source/devices has GenuineIntel's PMU uncore_\w+: the procfs "
                     r"and sysfs trees are of different machines", r.stderr), r.stderr
    env = fixture_env("kunpeng920-2s", MEMSCOPE_PROCFS_ROOT=str(FIXTURES / "skylake-sp-2s" / "proc"))
    r = run([memscope, "list", "--pmus"], env=env)
    assert r.returncode == 1 and "has an Arm CPU's PMU armv8_pmuv3_0" in r.stderr, r.stderr
    # Intel's uncore beside an Arm CPU: which maker's kernels create uncore_imc_N is the catalog's
    # (maker: of the role), not a name prefix that ThunderX2's uncore_dmc_N shares.
    env = fixture_env("westmere-ep-2s", MEMSCOPE_PROCFS_ROOT=str(FIXTURES / "kunpeng920-2s" / "proc"))
    r = run([memscope, "list", "--pmus"], env=env)
    assert r.returncode == 1 and "has GenuineIntel's PMU uncore: the procfs and sysfs trees" in r.stderr, r.stderr


def test_top_batch_gives_the_same_one_line_reasons(memscope):
    r = run([memscope, "top", "-b", "-n", "1", "-I", "200"])
    assert r.returncode == 0, r.stderr
    na = [l for l in r.stdout.splitlines() if l.startswith("na: ")]
    if not na:
        pytest.skip("every top column is measured on this machine")
    families = ["hisi-hip08", "hisi-hip09", "thunderx2", "amd-fam15h-nb", "amd-zen1-2", "amd-zen3", "amd-zen4",
                "amd-zen5", "intel-nehalem-westmere", "intel-skylake-sp", "intel-icelake-sp", "intel-sapphire-rapids",
                "intel-granite-rapids", "arm-neoverse-cmn", "arm-dmc620", "nvidia-grace"]
    for line in na:
        assert len(line) < 250, line
        assert sum(f + ":" in line or f + " in a VM" in line for f in families) <= 1, line
