"""Hardware memory samples of machines this project does not have (written by
tests/fixtures/samples/make_samples.py), decoded through the same tables and
report as live samples. Each expected value below is worked out from the
kernel's and perf's definitions:

- Intel: arch/x86/events/intel/ds.c pebs_data_source[] gives the data source
  the kernel writes; tools/perf/util/mem-events.c reads it (a remote bit or a
  REM_* level is remote; SNOOP HITM is a hit on a modified line).
- AMD: arch/x86/events/amd/ibs.c perf_ibs_get_mem_lvl/perf_ibs_get_mem_snoop
  turn the IBS op registers into the data source (IbsOpData2 DataSrc 2 is a
  local cache, L3|REM_CCE1; 3 is DRAM, remote when RmtNode; Zen 4's extended
  DataSrc 5 is a far CCX's cache, REM_CCE2; CacheHitSt 0 on a cache source is
  HITM except on 19h models 0-0xf and 0x20-0x5f; IbsOpData2 reads 0 for
  software prefetches on 19h models 0-0xf, erratum 1293).
- Arm: tools/perf/util/arm-spe.c arm_spe__synth_data_source_common: Neoverse
  N1 data source 0xe is DRAM, 0x9 a peer core (L2 + SNOOPX PEER), 0xd the
  other socket (REM_CCE1, REMOTE, PEER), 0xb the system cache (L3, snoop
  hit); stores carry no level."""
import json
import re
import subprocess

from conftest import BUILD, ROOT, run

SAMPLES = ROOT / "tests" / "fixtures" / "samples"
HOTARRAY = BUILD / "contrib" / "bench" / "hotarray"
PIE_BASE = 0x555555554000


def listed(memscope, rec):
    res = run([memscope, "report", "--samples", "--format", "json", str(rec)])
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def decoded(samples):
    return [(s["op"], s["level"], s["remote"], s["hitm"], s["peer"], s["weight"]) for s in samples]


def test_intel_pebs(memscope, tmp_path):
    rec = render_pebs(tmp_path)
    got = decoded(listed(memscope, rec))
    assert got == [
        ("load", "L1", "local", False, False, 5),        # 0x01 L1 local
        ("load", "L3", "local", True, False, 90),        # 0x07 L3 hit, snoop HITM
        ("load", "L3", "remote", True, False, 300),      # 0x09 L3 miss, snoop HITM: REM_CCE1 | REM
        ("load", "RAM", "remote", False, False, 250),    # 0x0d L3 miss, exclusive: REM_RAM1 | REM
        ("load", "RAM", "local", False, False, 180),     # 0x0c L3 miss, exclusive: LOC_RAM
        ("store", "L1", "local", False, False, 0),       # precise store, L1 hit
        ("load", "L3", "local", True, False, 120),       # 0x07
    ]


def test_amd_ibs_zen2(memscope):
    got = decoded(listed(memscope, SAMPLES / "ibs-zen2.rec"))
    assert got == [
        ("load", "L3", "remote", True, False, 80),       # DataSrc 2, CacheHitSt 0: L3|REM_CCE1, HITM
        ("load", "L3", "remote", True, False, 85),
        ("load", "RAM", "remote", False, False, 300),    # DataSrc 3, RmtNode 1: REM_RAM1
        ("store", "L1", "local", False, False, 0),       # DcMiss 0: L1 hit
        ("-", "-", "?", False, False, 0),                # neither load nor store: no data source
    ]


def test_amd_ibs_zen3(memscope):
    got = decoded(listed(memscope, SAMPLES / "ibs-zen3.rec"))
    assert got == [
        ("load", "RAM", "remote", False, False, 300),
        ("load", "L3", "remote", False, False, 80),      # CacheHitSt not valid on 19h model 01h: no HITM
        ("load", "-", "?", False, False, 0),             # erratum 1293: IbsOpData2 is 0, L2 hit not trusted
    ]


def test_amd_ibs_zen4(memscope):
    got = decoded(listed(memscope, SAMPLES / "ibs-zen4.rec"))
    assert got == [
        ("load", "a cache", "remote", True, False, 200),  # extended DataSrc 5: far CCX, REM_CCE2, HITM
        ("load", "RAM", "remote", False, False, 350),
        ("load", "RAM", "local", False, False, 150),
        ("load", "CXL", "?", False, False, 500),          # extended DataSrc 8 on this node: LVLNUM CXL
    ]


def test_arm_spe_neoverse_n1(memscope):
    got = decoded(listed(memscope, SAMPLES / "spe-n1.rec"))
    assert got == [
        ("load", "RAM", "local", False, False, 250),      # 0xe DRAM
        ("load", "L2", "local", False, True, 60),         # 0x9 a peer core's cache
        ("load", "a cache", "remote", False, True, 400),  # 0xd the other socket
        ("store", "-", "?", False, False, 10),            # stores: no level
        ("load", "L3", "local", False, False, 80),        # 0xb system cache
    ]


def symbols(binary):
    out = subprocess.run(["nm", str(binary)], capture_output=True, text=True, check=True).stdout
    return {name: int(addr, 16) for addr, _, name in (line.split() for line in out.splitlines()
                                                        if len(line.split()) == 3)}


def render_pebs(tmp_path):
    """The PEBS fixture with its code in the built hotarray, mapped at a PIE's base."""
    syms = symbols(HOTARRAY)
    text = (SAMPLES / "pebs-skx.rec").read_text()
    text = text.replace("@HOTARRAY@", str(HOTARRAY)).replace("@SPAN@", "%x" % 0x10010000)
    text = re.sub(r"@(\w+)\+0x([0-9a-f]+)@", lambda m: "%x" % (PIE_BASE + syms[m.group(1)] + int(m.group(2), 16)),
                  text)
    rec = tmp_path / "pebs.rec"
    rec.write_text(text)
    return rec


def test_cache_line_view(memscope, tmp_path):
    """perf c2c's question: which line is contended, at which offsets, by which code."""
    rec = render_pebs(tmp_path)
    res = run([memscope, "report", "--c2c", "--format", "json", str(rec)])
    assert res.returncode == 0, res.stderr
    c2c = json.loads(res.stdout)
    assert (c2c["loads"], c2c["stores"], c2c["hitm"]) == (6, 1, 3)
    line = c2c["lines"][0]
    assert line["line"] == "0x40000040" and line["physical"] is True, line   # keyed by physical address
    assert (line["samples"], line["hitm"], line["remote_hitm"], line["loads"], line["stores"]) == (5, 3, 1, 4, 1)
    assert line["data_object"] == "[anon 0x7f0000000000 64 KiB rw-]"
    offsets = [(o["offset"], o["sym"], o["loads"], o["stores"], o["hitm"], o["cpu_nodes"]) for o in line["offsets"]]
    assert offsets == [
        (0x00, "fill_table", 1, 0, 0, "0"),
        (0x08, "fill_table", 1, 0, 1, "0"),
        (0x08, "other_work", 1, 0, 1, "1"),
        (0x10, "other_work", 1, 1, 1, "1"),
    ], offsets
    text = run([memscope, "report", "--c2c", str(rec)]).stdout
    assert "3 loads hit a modified line (HITM)" in text, text
    assert re.search(r"\+0x08 .* fill_table \(hotarray\.c:\d+\)", text), text


def test_remote_share_by_code_and_data(memscope, tmp_path):
    rec = render_pebs(tmp_path)
    res = run([memscope, "report", "--sort", "sym,level,remote", "--format", "json", str(rec)])
    rows = {(r["keys"]["sym"], r["keys"]["level"], r["keys"]["remote"]): r["samples"] for r in json.loads(res.stdout)["rows"]}
    assert rows == {("fill_table", "L1", "local"): 1, ("fill_table", "L3", "local"): 1,
                    ("fill_table", "RAM", "remote"): 1, ("fill_table", "RAM", "local"): 1,
                    ("other_work", "L3", "remote"): 1, ("other_work", "L1", "local"): 1,
                    ("other_work", "L3", "local"): 1}
    # The data's node comes from each sample's physical address here.
    nodes = run([memscope, "report", "--sort", "node,cpu_node", "--format", "json", str(rec)])
    got = {(r["keys"]["node"], r["keys"]["cpu_node"]): r["samples"] for r in json.loads(nodes.stdout)["rows"]}
    assert got == {(0, 0): 3, (1, 0): 1, (0, 1): 3}


def test_broken_sample_records_name_the_line(memscope, tmp_path):
    lines = (SAMPLES / "ibs-zen4.rec").read_text().splitlines()
    bad = [line for line in lines]
    bad[3] = bad[3].replace('"r":"', '"r":"zz')
    rec = tmp_path / "bad.rec"
    rec.write_text("\n".join(bad) + "\n")
    res = run([memscope, "report", "--sort", "sym", str(rec)])
    assert res.returncode == 1
    assert re.search(r"bad\.rec:4: sample raw data \"r\": expected", res.stderr), res.stderr


def test_lua_remote_hotspots(memscope, tmp_path):
    """The shipped script, on the samples (on_sample), in JSON."""
    rec = render_pebs(tmp_path)
    res = run([memscope, "report", "--lua", "remote_hotspots.lua", "--format", "json", str(rec)])
    assert res.returncode == 0, res.stderr
    tables = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    lines, objects = tables
    # fill_table: 4 samples, 1 remote (0x0d); other_work: 3 samples, 1 remote (0x09).
    got = [(r["line and function"].split()[1], r["remote samples"], round(r["remote %"], 1)) for r in lines["rows"]]
    assert got == [("fill_table", 1, 25.0), ("other_work", 1, 33.3)], lines
    assert re.fullmatch(r"hotarray\.c:\d+ fill_table", lines["rows"][0]["line and function"])
    assert objects["rows"] == [{"data object": "[anon 0x7f0000000000 64 KiB rw-]", "remote samples": 2,
                                "remote %": 200 / 7, "data nodes": "0:86% 1:14%"}], objects
