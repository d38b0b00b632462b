"""The resctrl plugin through memscope as a user runs it: on a fixture machine (a 2-socket
Skylake-SP with one L3 per socket and resctrl mounted) for list, and live with root= pointing
at a resctrl tree whose counters the workload itself advances, with values computed by hand."""
import os
import shutil

import pytest

from conftest import FIXTURES, run
from stat_output import counter_output, intervals, parse_csv, totals

GROUPS = {"": "/", "p1/": "p1", "p1/mon_groups/m1/": "p1/m1"}


def write_group(resctrl, group, domain, total, local, occupancy):
    d = resctrl / f"{group}mon_data" / f"mon_L3_{domain:02d}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "mbm_total_bytes").write_text(f"{total}\n")
    (d / "mbm_local_bytes").write_text(f"{local}\n")
    (d / "llc_occupancy").write_text(f"{occupancy}\n")


@pytest.fixture
def machine(tmp_path):
    """skylake-sp-2s (with its L3 cache ids, one per socket) and a resctrl mount."""
    root = tmp_path / "skylake"
    shutil.copytree(FIXTURES / "skylake-sp-2s", root)
    cpus = root / "sys" / "devices" / "system" / "cpu"
    for cpu in cpus.glob("cpu[0-9]*"):
        socket = (cpu / "topology" / "physical_package_id").read_text().strip()
        assert (cpu / "cache" / "index3" / "level").read_text() == "3\n"
        assert (cpu / "cache" / "index3" / "id").read_text() == f"{socket}\n"
    resctrl = root / "sys" / "fs" / "resctrl"
    (resctrl / "info" / "L3_MON").mkdir(parents=True)
    (resctrl / "info" / "L3_MON" / "mon_features").write_text("llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n")
    for group in GROUPS:
        for domain in (0, 1):
            write_group(resctrl, group, domain, 1000, 100, 4096)
    return root


def fixture_env(root, tmp_path):
    env = dict(os.environ)
    env["MEMSCOPE_SYSFS_ROOT"] = str(root / "sys")
    env["MEMSCOPE_PROCFS_ROOT"] = str(root / "proc")
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    return env


def test_list_on_a_resctrl_machine(memscope, build_dir, machine, tmp_path):
    plugin = str(build_dir / "contrib" / "plugins" / "resctrl.so")
    env = fixture_env(machine, tmp_path)
    res = run([memscope, "--plugin", plugin, "list", "--plugins"], env=env)
    assert "loaded: plugin resctrl 1.0" in res.stdout
    assert "available here: yes" in res.stdout
    res = run([memscope, "--plugin", plugin, "list", "--explain", "mem.total_bytes"], env=env)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "computed by family resctrl" in out
    assert f"mbm.total = plugin series resctrl.mbm_total_bytes (plugin resctrl, {plugin})" in out
    assert "fidelity: approximate" in out
    assert "PMU role mbm: scope instance" in out
    res = run([memscope, "--plugin", plugin, "list", "--metrics"], env=env)
    line = next(l for l in res.stdout.splitlines() if l.split() and l.split()[0] == "mem.local_bytes")
    assert "resctrl" in line, line
    # Without the plugin the family is not even read.
    res = run([memscope, "list", "--explain", "mem.local_bytes"], env=env)
    assert "NOT AVAILABLE on this host" in res.stdout and "no PMU family in" in res.stdout
    assert "family resctrl" not in res.stdout


def test_live_bandwidth_per_group_and_domain(memscope, build_dir, machine, tmp_path):
    """The workload advances the counters twice; memscope's totals are the differences,
    per group and L3 domain, and the system's is their sum over the default groups (the
    root and p1: m1 is counted within p1)."""
    resctrl = machine / "sys" / "fs" / "resctrl"
    steps = []
    # (group, domain): (total, local, occupancy) after step 1 and after step 2.
    after = {
        ("", 0): [(1000 + 2_000_000, 100 + 500_000, 65536), (1000 + 3_000_000, 100 + 800_000, 131072)],
        ("", 1): [(1000 + 10_000, 100 + 0, 8192), (1000 + 10_000, 100 + 0, 8192)],
        ("p1/", 0): [(1000 + 64, 100 + 64, 4096), (1000 + 4096, 100 + 1024, 4096)],
        ("p1/", 1): [(1000 + 1_048_576, 100 + 1_048_576, 1_048_576), (1000 + 3_145_728, 100 + 2_097_152, 2_097_152)],
        ("p1/mon_groups/m1/", 1): [(1000 + 7, 100 + 7, 4096), (1000 + 9, 100 + 9, 4096)],
    }
    for step in (0, 1):
        cmds = []
        for (group, domain), values in after.items():
            total, local, occupancy = values[step]
            d = resctrl / f"{group}mon_data" / f"mon_L3_{domain:02d}"
            # Rewritten in place, never truncated, so a read in between sees one value or the
            # other (the values only grow in length), as the kernel's files behave.
            cmds += [f"echo {total} 1<> {d}/mbm_total_bytes", f"echo {local} 1<> {d}/mbm_local_bytes",
                     f"echo {occupancy} 1<> {d}/llc_occupancy"]
        steps.append(" && ".join(cmds))
    workload = f"{steps[0]} && sleep 0.4 && {steps[1]} && sleep 0.4"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    res = run([memscope, "--plugin", f"{build_dir}/contrib/plugins/resctrl.so:root={resctrl}", "stat", "-x,", "--self-describing",
               "-I", "150", "-m", "mem.total_bytes,mem.local_bytes,llc.occupancy_bytes", "--per-instance",
               "--", "sh", "-c", workload], env=env)
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    t = totals(rows)
    for (group, domain), values in after.items():
        if group == "p1/mon_groups/m1/":
            assert (f"p1/m1@L3_{domain:02d}", "mem.total_bytes") not in t
            continue
        name = f"{GROUPS[group]}@L3_{domain:02d}"
        total, local, occupancy = values[1]
        assert t[(name, "mem.total_bytes")] == total - 1000, name
        assert t[(name, "mem.local_bytes")] == local - 100, name
        assert t[(name, "llc.occupancy_bytes")] == occupancy, name
    # Every frame's differences add up to the run's.
    per_frame = sum(r["value"] for r in intervals(rows) if r["scope"] == "p1@L3_01" and r["event"] == "mem.total_bytes")
    assert per_frame == 3_145_728
    assert max(r["value"] for r in intervals(rows) if r["scope"] == "p1@L3_01" and r["event"] == "mem.total_bytes") \
        in (1_048_576, 2_097_152, 3_145_728)
    # The whole: the root and p1 over both domains.
    res = run([memscope, "--plugin", f"{build_dir}/contrib/plugins/resctrl.so:root={resctrl}", "stat", "-x,", "--self-describing",
               "-m", "mem.total_bytes", "--", "sh", "-c",
               f"echo 16000 1<> {resctrl}/mon_data/mon_L3_01/mbm_total_bytes && "
               f"echo 3145828 1<> {resctrl}/p1/mon_data/mon_L3_00/mbm_total_bytes"], env=env)
    assert res.returncode == 0, res.stderr
    assert totals(parse_csv(counter_output(res.stderr)))[("total", "mem.total_bytes")] == (16000 - 11000) + (3145828 - 5096)


def test_not_mounted_here_says_why(memscope, build_dir, tmp_path):
    if os.path.exists("/sys/fs/resctrl/info/L3_MON"):
        pytest.skip("resctrl is mounted here")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    res = run([memscope, "--plugin", f"{build_dir}/contrib/plugins/resctrl.so", "stat", "-m", "mem.local_bw",
               "-a", "--", "true"], env=env)
    assert res.returncode != 0
    assert "resctrl is not mounted at /sys/fs/resctrl" in res.stderr, res.stderr
