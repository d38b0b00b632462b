"""memscope list --topology: nodes, CPUs, memory, distances, sockets, caches and PMUs per
node, checked against a fixture machine's tree (values written by make_fixtures.py from
the part's specification) and against numactl -H and lscpu on this machine."""
import pathlib
import re
import shutil

import pytest

from conftest import fixture_env, run


def section(text, title):
    m = re.search(rf"^{re.escape(title)}.*\n((?:  .*\n?)+)", text, re.M)
    assert m, f"no {title} section in:\n{text}"
    return [line.split() for line in m.group(1).splitlines()]


def test_fixture_machine(memscope):
    res = run([memscope, "list", "--topology"], env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("CPU: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz (GenuineIntel family 0x6 model 0x55)\n")
    assert "(not this machine)" in out
    assert "2 sockets, 2 dies, 8 cores, 16 CPUs, 2 NUMA nodes" in out
    assert section(out, "NUMA nodes")[1:] == [["0", "0-3,8-11", "96", "GiB", "0"], ["1", "4-7,12-15", "48", "GiB", "1"]]
    rows = [line.split() for line in out.split("node distances:")[1].splitlines() if re.match(r"\s*\d+:", line)]
    assert rows == [["0:", "10", "21"], ["1:", "21", "10"]]
    assert section(out, "Sockets")[1:] == [["0", "1", "4", "0-3,8-11"], ["1", "1", "4", "4-7,12-15"]]
    caches = {row[0]: row for row in section(out, "Caches")[1:]}
    smt_pairs = ["0,8", "1,9", "2,10", "3,11", "4,12", "5,13", "6,14", "7,15"]
    assert caches["L1d"] == ["L1d", "Data", "32", "KiB", "64", "8", "8"] + smt_pairs
    assert caches["L1i"][:7] == ["L1i", "Instruction", "32", "KiB", "64", "8", "8"]
    assert caches["L2"] == ["L2", "Unified", "1", "MiB", "64", "16", "8"] + smt_pairs
    assert caches["L3"] == ["L3", "Unified", "27.5", "MiB", "64", "11", "2", "0-3,8-11", "4-7,12-15"]
    pmus = dict((row[1].rstrip(":"), row[2:]) for row in section(out, "PMUs per node") if row[0] == "node")
    # The uncore boxes of each socket are read through its first CPU (cpumask 0,4).
    assert pmus["0"] == ["power", "uncore_cha_0..3", "uncore_imc_0..5", "uncore_upi_0..2"]
    assert pmus["1"] == pmus["0"]
    assert re.search(r"every CPU \(core and software PMUs\): breakpoint cpu msr software tracepoint$", out, re.M)


def test_fixture_without_caches_or_memory_says_so(memscope):
    res = run([memscope, "list", "--topology"], env=fixture_env("kunpeng920-2s"))
    assert res.returncode == 0, res.stderr
    assert "  not described by " in res.stdout and "cpu*/cache" in res.stdout
    assert all(row[2] == "-" for row in section(res.stdout, "NUMA nodes")[1:])
    pmus = dict((row[1].rstrip(":"), row[2:]) for row in section(res.stdout, "PMUs per node") if row[0] == "node")
    assert pmus["2"] == ["hisi_sccl5_ddrc0..3", "hisi_sccl5_hha2..3", "hisi_sccl5_l3c10..11"]


@pytest.mark.skipif(not shutil.which("numactl") or not shutil.which("lscpu"), reason="numactl and lscpu compare")
def test_this_machine_agrees_with_numactl_and_lscpu(memscope):
    res = run([memscope, "list", "--topology"])
    assert res.returncode == 0, res.stderr
    numactl = run(["numactl", "-H"]).stdout
    nodes = section(res.stdout, "NUMA nodes")[1:]
    for row in nodes:
        cpus = re.search(rf"^node {row[0]} cpus: (.*)$", numactl, re.M).group(1).split()
        expanded = []
        for part in row[1].split(","):
            a, _, b = part.partition("-")
            expanded += [str(c) for c in range(int(a), int(b or a) + 1)]
        assert expanded == cpus, (row, cpus)
    ours = [line.split()[1:] for line in res.stdout.split("node distances:")[1].splitlines() if re.match(r"\s*\d+:", line)]
    theirs = [line.split()[1:] for line in numactl.split("node distances:")[1].splitlines() if re.match(r"\s*\d+:", line)]
    assert ours == theirs
    # lscpu -C: one line per cache, with one instance's size, the ways and all instances' size.
    lscpu = run(["lscpu", "-C=NAME,ONE-SIZE,ALL-SIZE,WAYS,LEVEL", "-B"]).stdout.splitlines()[1:]
    caches = {row[0]: row for row in section(res.stdout, "Caches")[1:]}
    assert len(caches) == len(lscpu)
    units = {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}
    for line in lscpu:
        name, one, total, ways, level = line.split()
        row = caches[name]
        assert int(float(row[2]) * units[row[3]]) == int(one), (row, line)
        assert int(row[6]) * int(one) == int(total), (row, line)
        assert row[5] == ways, (row, line)


# ---- Memory tiers: tier per node, kind, HMAT, balancing and demotion ----

def tier_rows(out):
    rows = section(out, "Memory tiers")
    return [row for row in rows if row[0].isdigit()]


def hmat_rows(out):
    return section(out, "HMAT access")[1:]


def test_tiers_of_a_cxl_machine(memscope):
    """Two sockets of DDR in tier 4, two CPU-less CXL nodes (dax/kmem under CXL regions) in
    tier 40: the values make_fixtures.py wrote, and each DDR node demotes to its nearer
    CXL node (distance 14, not 24)."""
    res = run([memscope, "list", "--topology"], env=fixture_env("sapphire-rapids-cxl-2s"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert tier_rows(out) == [
        ["0", "4", "yes", "-", "2"],
        ["1", "4", "yes", "-", "3"],
        ["2", "40", "no", "CXL", "(dax/kmem)", "-"],
        ["3", "40", "no", "CXL", "(dax/kmem)", "-"],
    ]
    assert "  NUMA balancing: 2 (memory tiering: hot pages of slower tiers are promoted)\n" in out
    assert "  demotion in reclaim: enabled\n" in out
    ddr = ["120000", "120000", "110", "110"]
    cxl = ["30000", "30000", "250", "250"]
    assert hmat_rows(out) == [[str(n), f"access{c}"] + (ddr if n < 2 else cxl) for n in range(4) for c in (0, 1)]


def test_tiers_of_an_hbm_machine(memscope):
    """Xeon Max in flat mode: HBM nodes 2 and 3 have no CPU, are not dax (the kernel names
    no kind) and sit in the faster tier 1, so they demote to the DDR node of their socket."""
    res = run([memscope, "list", "--topology"], env=fixture_env("xeon-max-hbm-2s"))
    assert res.returncode == 0, res.stderr
    assert tier_rows(res.stdout) == [
        ["0", "4", "yes", "-", "-"],
        ["1", "4", "yes", "-", "-"],
        ["2", "1", "no", "-", "0"],
        ["3", "1", "no", "-", "1"],
    ]
    assert "  NUMA balancing: 1 (normal: pages move towards the node of the CPUs that use them)\n" in res.stdout
    assert "  demotion in reclaim: disabled (kernel/mm/numa/demotion_enabled = false)\n" in res.stdout
    assert hmat_rows(res.stdout)[4] == ["2", "access0", "400000", "400000", "130", "130"]


def test_tiers_of_a_machine_without_tiers_or_hmat(memscope):
    res = run([memscope, "list", "--topology"], env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    assert "the kernel lists no tiers" in res.stdout
    assert tier_rows(res.stdout) == [["0", "-", "yes", "-", "-"], ["1", "-", "yes", "-", "-"]]
    assert "  HMAT: no access attributes" in res.stdout


def test_this_machines_tiers_are_the_kernels(memscope):
    res = run([memscope, "list", "--topology"])
    assert res.returncode == 0, res.stderr
    tiers = {}
    for path in pathlib.Path("/sys/devices/virtual/memory_tiering").glob("memory_tier*/nodelist"):
        for node in path.read_text().strip().split(","):
            if node:
                lo, _, hi = node.partition("-")
                for n in range(int(lo), int(hi or lo) + 1):
                    tiers[n] = path.parent.name[len("memory_tier"):]
    rows = tier_rows(res.stdout)
    assert rows and all(row[1] == tiers.get(int(row[0]), "-") for row in rows)
    mode = open("/proc/sys/kernel/numa_balancing").read().strip()
    assert f"  NUMA balancing: {mode} (" in res.stdout
    enabled = pathlib.Path("/sys/kernel/mm/numa/demotion_enabled")
    if enabled.exists():
        assert ("  demotion in reclaim: enabled" if enabled.read_text().strip() == "true"
                else "  demotion in reclaim: disabled") in res.stdout


@pytest.mark.parametrize("rel,text,says", [
    ("sys/devices/virtual/memory_tiering/memory_tier40/nodelist", "2-x", "memory_tier40/nodelist: not a memory tier's node list"),
    ("sys/devices/system/node/node2/access0/initiators/read_latency", "fast", "read_latency: not a number of nanoseconds"),
    ("proc/sys/kernel/numa_balancing", "on", "numa_balancing: 'on' is neither a number nor true/false"),
])
def test_malformed_tier_files_are_named(memscope, tmp_path, rel, text, says):
    tree = tmp_path / "tree"
    shutil.copytree(pathlib.Path(__file__).parents[1] / "fixtures/sysfs/sapphire-rapids-cxl-2s", tree, symlinks=True)
    (tree / rel).write_text(text + "\n")
    env = fixture_env("sapphire-rapids-cxl-2s", MEMSCOPE_SYSFS_ROOT=str(tree / "sys"), MEMSCOPE_PROCFS_ROOT=str(tree / "proc"))
    res = run([memscope, "list", "--topology"], env=env)
    assert res.returncode == 1
    assert says in res.stderr and str(tree) in res.stderr
    assert "Traceback" not in res.stderr and "Sanitizer" not in res.stderr
