"""A new vendor is one catalog file and a machine tree, no C: a made-up maker's
memory controller family is detected (list), explained by doctor (its kernel
module), checked against the CPU maker, and counted through a replay."""
import json
import os
import shutil

from conftest import FIXTURES, ROOT, run
from stat_output import counter_output, parse_json_lines

FAMILY = """\
# A memory controller of a maker that does not exist: the whole of its support.
family: acme-mc
description: Acme memory controllers
priority: 10
sources:
  - "the test that writes this file (tests/integration/test_vendor_family.py)"
detect:
  cpu:
    vendor: AcmeSilicon
    family: 0x7
pmus:
  mc:
    match: '^acme_mc_([0-9]+)$'
    driver: acme_mc_pmu
    maker: AcmeSilicon
    scope: socket
    counters: 4
    width: 48
    description: the memory controller of one socket
    events:
      reads: { config: event=0x1 }
      writes: { config: event=0x2 }
metrics:
  mem.read_bytes:
    - formula: mc.reads * 64
      source: "one 64-byte line a read"
      fidelity: exact
  mem.write_bytes:
    - formula: mc.writes * 64
      source: "one 64-byte line a write"
      fidelity: exact
"""


def acme_machine(tmp_path, with_pmus=True):
    """Skylake-SP's 2-socket topology with the CPU renamed to AcmeSilicon family 7 and
    Intel's uncore PMUs replaced by acme_mc_0 (socket 0) and acme_mc_1 (socket 1)."""
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", cat, ignore=shutil.ignore_patterns("meson.build"))
    (cat / "pmu" / "acme-mc.yaml").write_text(FAMILY)
    tree = tmp_path / "acme-2s"
    shutil.copytree(FIXTURES / "skylake-sp-2s", tree, symlinks=True)
    cpuinfo = tree / "proc" / "cpuinfo"
    cpuinfo.write_text(cpuinfo.read_text().replace("GenuineIntel", "AcmeSilicon")
                       .replace("cpu family\t: 6", "cpu family\t: 7"))
    devices = tree / "sys" / "bus" / "event_source" / "devices"
    for pmu in devices.glob("uncore_*"):
        shutil.rmtree(pmu)
    if with_pmus:
        for n, cpumask in enumerate(("0", "4")):
            pmu = devices / f"acme_mc_{n}"
            (pmu / "format").mkdir(parents=True)
            (pmu / "format" / "event").write_text("config:0-7\n")
            (pmu / "type").write_text(f"{40 + n}\n")
            (pmu / "cpumask").write_text(cpumask + "\n")
    env = {"PATH": "/usr/bin:/bin", "MEMSCOPE_CATALOG_DIR": str(cat),
           "MEMSCOPE_SYSFS_ROOT": str(tree / "sys"), "MEMSCOPE_PROCFS_ROOT": str(tree / "proc")}
    env.update({k: v for k, v in os.environ.items() if k.endswith("SAN_OPTIONS")})
    return tree, env


def test_a_new_vendor_family_is_detected_and_explained(memscope, tmp_path):
    _, env = acme_machine(tmp_path)
    res = run([memscope, "list", "--metrics"], env=env)
    assert res.returncode == 0, res.stderr
    assert "CPU: AcmeSilicon family 0x7 model 0x55" in res.stdout, res.stdout
    read = [line for line in res.stdout.splitlines() if line.split()[:1] == ["mem.read_bytes"]]
    assert len(read) == 1 and "acme-mc" in read[0], res.stdout
    res = run([memscope, "doctor"], env=env)
    assert "  ok    acme-mc: 2 mc PMU instances" in res.stdout, res.stdout


def test_doctor_names_the_new_vendors_module_when_its_pmus_are_missing(memscope, tmp_path):
    _, env = acme_machine(tmp_path, with_pmus=False)
    res = run([memscope, "doctor"], env=env)
    assert "  warn  acme-mc: this CPU should have mc PMUs (the memory controller of one socket) but" \
        in res.stdout, res.stdout
    assert "fix: sudo modprobe acme_mc_pmu (or a kernel with that driver built in)" in res.stdout, res.stdout


def test_the_new_vendors_pmus_beside_another_makers_cpu_are_refused(memscope, tmp_path):
    tree, env = acme_machine(tmp_path)
    env["MEMSCOPE_PROCFS_ROOT"] = str(FIXTURES / "skylake-sp-2s" / "proc")
    res = run([memscope, "list", "--pmus"], env=env)
    assert res.returncode == 1
    assert "describes GenuineIntel family 0x6 model 0x55 but " in res.stderr, res.stderr
    assert "has AcmeSilicon's PMU acme_mc_0: the procfs and sysfs trees are of different machines" \
        in res.stderr, res.stderr


def test_the_new_vendors_counts_go_through_a_replay(memscope, tmp_path):
    _, env = acme_machine(tmp_path)
    replay = tmp_path / "acme.jsonl"
    frames = [{"acme_mc_0/event=0x1/": 100, "acme_mc_1/event=0x1/": 30},
              {"acme_mc_0/event=0x1/": 7, "acme_mc_1/event=0x1/": 0}]
    replay.write_text("\n".join([json.dumps({"format": "memscope-replay", "version": 1})] +
                                [json.dumps({"t": t + 1.0, "values": v}) for t, v in enumerate(frames)]) + "\n")
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bytes", "--per-socket", "--json",
               "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    total = parse_json_lines(counter_output(res.stderr))[-1]
    by_socket = {row["socket"]: row["metrics"]["mem.read_bytes"]["value"] for row in total["rows"]}
    assert by_socket == {0: (100 + 7) * 64, 1: 30 * 64}, total


def test_a_libpfm4_name_that_uses_a_group_its_pattern_lacks_is_refused_at_its_place(memscope, tmp_path):
    _, env = acme_machine(tmp_path)
    family = tmp_path / "catalog" / "pmu" / "acme-mc.yaml"
    family.write_text(FAMILY.replace("    maker: AcmeSilicon\n", "    maker: AcmeSilicon\n"
                                     "    libpfm4: { pmu: '^acme_mc([0-9]+)$', kernel: 'acme_mc_\\2' }\n"))
    res = run([memscope, "list", "--metrics"], env=env)
    assert res.returncode == 1
    assert f"{family}:16:50:" in res.stderr and "mc: libpfm4 'kernel' acme_mc_\\2: '\\2' names no group of " \
        "'^acme_mc([0-9]+)$' (it has 1; write \\1..\\1)" in res.stderr, res.stderr
