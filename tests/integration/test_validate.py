"""memscope validate: workloads of known traffic under memscope, a verdict per metric.

Here (no hardware PMU, one node) the kernel and eBPF metrics are checked for real and the
uncore ones say why they cannot be; on a fixture replay whose counts were computed by hand
(tests/fixtures/validate/), a metric whose multiplier is off by 2x is flagged."""
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, fixture_env, run
from other_user import NOBODY, as_nobody, places, write_as_nobody

FIX = ROOT / "tests" / "fixtures" / "validate"


def replay(memscope, counts, expect, *extra):
    env = fixture_env("kunpeng920-2s")
    return run([memscope, "validate", "--replay", str(FIX / counts), "--expect", str(FIX / expect), *extra], env=env)


def verdicts(stdout):
    rows = {}
    for line in stdout.splitlines():
        m = re.match(r"^(\S+)\s+(system|node\d+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if m and m.group(1) != "metric":
            rows.setdefault((m.group(1), m.group(2)), []).append(m.group(5))
    return rows


def test_replay_flags_a_multiplier_off_by_two(memscope, tmp_path):
    """The fixture's flux_rd counts are twice what a 32-byte unit gives for the triad's reads
    (as if the hardware counted 16-byte units); its flux_wr counts are right."""
    store = tmp_path / "validation.json"
    res = replay(memscope, "kunpeng920-triad-counts.jsonl", "kunpeng920-triad-expect.json", f"--write={store}")
    assert res.returncode == 3, res.stderr          # a disagreement was found
    v = verdicts(res.stdout)
    # Bytes in full, as counted: no 4.42919e+09 to read back by hand.
    rows = [re.match(r"^\S+\s+(?:system|node\d+)\s+(\S+)\s+(\S+)\s", line) for line in res.stdout.splitlines()]
    numbers = [n for m in rows if m for n in m.groups()]
    assert numbers and all(re.fullmatch(r"-?\d+(\.\d+)?|-", n) for n in numbers), res.stdout
    # The expectation file's 2214592512 bytes, and twice that measured (the fixture's 2x).
    assert re.search(r"^mem\.read_bytes\s+node0\s+2214592512\s+4429185024\s", res.stdout, re.M), res.stdout
    assert v[("mem.read_bytes", "node0")] == ["disagrees by a factor 2.00 (measured / expected; 15% allowed)"]
    assert v[("mem.read_bw", "node0")][0].startswith("disagrees by a factor 2.00")
    assert v[("mem.write_bytes", "node0")] == ["agrees within 15% (ratio 1.000)"]
    assert v[("mem.write_bw", "node0")] == ["agrees within 15% (ratio 1.000)"]
    assert "2 agree, 2 disagree, 0 cannot be checked here." in res.stdout
    saved = json.loads(store.read_text())
    assert saved["format"] == "memscope-validation"
    assert {(x["metric"], x["verdict"], round(x.get("ratio", 0), 3)) for x in saved["verdicts"]} == {
        ("mem.read_bytes", "disagrees", 2.0), ("mem.write_bytes", "agrees", 1.0),
        ("mem.read_bw", "disagrees", 2.0), ("mem.write_bw", "agrees", 1.0)}
    # list --explain shows the verdict for the machine it was made on (the fixture).
    env = fixture_env("kunpeng920-2s", MEMSCOPE_VALIDATION=str(store))
    res = run([memscope, "list", "--explain", "mem.read_bytes"], env=env)
    assert res.returncode == 0, res.stderr
    assert re.search(r"FAILED validation on this machine \(\d{4}-\d\d-\d\d \d\d:\d\d, node 0, by triad.*\): "
                     r"disagrees by a factor 2.00", res.stdout), res.stdout
    res = run([memscope, "list", "--explain", "mem.write_bytes"], env=env)
    assert "validated on this machine" in res.stdout and "agrees within 15% (ratio 1.000)" in res.stdout, res.stdout


def test_validate_here_checks_kernel_and_ebpf_metrics_and_says_why_not_the_rest(memscope, tmp_path):
    store = tmp_path / "v.json"
    env = {**os.environ, "MEMSCOPE_VALIDATION": str(store)}
    res = run([memscope, "validate", "--write"], env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    v = verdicts(res.stdout)
    # 16384 pages touched: one fault and one page each (plus the program's start-up, < 5%).
    for metric in ("page-faults", "proc.faults", "kernel.faults"):
        assert v[(metric, "system")][0].startswith("agrees within 5%"), (metric, res.stdout)
    placed = [k for k in v if k[0] == "proc.pages_alloc"]
    assert placed and all(v[k][0].startswith("agrees within 5%") for k in placed), res.stdout
    # No hardware PMU here: each uncore metric says which PMU is missing.
    for metric in ("mem.read_bytes", "mem.write_bytes", "mem.read_bw", "mem.remote_ratio", "llc.miss_rate"):
        texts = [t for k, ts in v.items() if k[0] == metric for t in ts]
        assert texts and all(t.startswith("cannot be checked: ") for t in texts), (metric, res.stdout)
        assert any("PMU" in t or "one NUMA node" in t for t in texts), texts
    assert re.search(r"Trusted on this machine: .*page-faults", res.stdout), res.stdout
    # Remote reads are announced only where there is another node to read from.
    nodes = [d for d in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", d)]
    announced = "remote reads: CPU" in res.stderr
    assert announced == (len(nodes) > 1), (nodes, res.stderr)
    if len(nodes) == 1:
        assert v[("mem.remote_ratio", "system")][-1] == "cannot be checked: this machine has one NUMA node: nothing is remote"
    # The expected bytes of the triad are a count in full, never 4.42919e+09.
    assert "e+" not in res.stdout, res.stdout
    res = run([memscope, "list", "--explain", "kernel.faults"], env=env)
    assert re.search(r"validated on this machine \(.*first touch of 16384 pages\): agrees within 5% \(ratio 1\.0",
                     res.stdout), res.stdout


def test_bad_expectations_are_named(memscope, tmp_path):
    bad = tmp_path / "expect.json"
    bad.write_text('{"format": "memscope-validate-expect", "version": 1, "expect": [{"metric": "mem.read_bytes"}]}')
    res = replay(memscope, "kunpeng920-triad-counts.jsonl", bad)
    assert res.returncode == 2 and f"{bad}: expect[0]: needs \"metric\"" in res.stderr, res.stderr
    res = run([memscope, "validate", "--replay", str(FIX / "kunpeng920-triad-counts.jsonl")])
    assert res.returncode == 2 and "--replay and --expect go together" in res.stderr, res.stderr


PLANTED = {"format": "memscope-validation", "version": 1, "machine": "any", "date": "2020-01-01 00:00",
           "verdicts": [{"metric": "mem.read_bytes", "node": None, "verdict": "agrees", "text": "planted verdict",
                         "workload": "nothing"}]}


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is on a root-run memscope")
def test_root_keeps_no_verdicts_in_another_users_home(memscope):
    """sudo kept HOME, which is nobody's: root's validate --write does not follow their link to a
    directory of root's, and root's list --explain does not believe verdicts they wrote. nobody's
    own validate --write and list --explain use their file."""
    with places() as top:
        home, target = top / "theirs", top / "root"
        subprocess.run(as_nobody(["mkdir", "-p", str(home / ".local" / "state")]), check=True)
        subprocess.run(as_nobody(["ln", "-s", str(target), str(home / ".local" / "state" / "memscope")]), check=True)
        env = fixture_env("kunpeng920-2s", HOME=str(home))
        for name in ("XDG_STATE_HOME", "MEMSCOPE_VALIDATION"):
            env.pop(name, None)
        args = ["validate", "--replay", str(FIX / "kunpeng920-triad-counts.jsonl"), "--expect",
                str(FIX / "kunpeng920-triad-expect.json"), "--write"]
        res = run([memscope, *args], env=env)
        assert list(target.iterdir()) == [], "root wrote through the other user's link"
        assert res.returncode == 1, res
        assert (f"memscope validate: the verdicts file's directory {home}/.local/state/memscope is not written as "
                f"root: the directory {home} can be changed by its owner (uid {NOBODY}, mode 0755)") in res.stderr
        assert "(or set MEMSCOPE_VALIDATION to a file of root's)" in res.stderr
        # Verdicts they wrote are not believed by root.
        os.unlink(home / ".local" / "state" / "memscope")
        subprocess.run(as_nobody(["mkdir", str(home / ".local" / "state" / "memscope")]), check=True)
        store = home / ".local" / "state" / "memscope" / "validation.json"
        write_as_nobody(store, json.dumps(PLANTED))
        res = run([memscope, "list", "--explain", "mem.read_bytes"], env=env)
        assert res.returncode == 0, res.stderr
        assert "planted verdict" not in res.stdout
        assert (f"validation: not used: verdicts file {store} is not used as root: the directory {home} can be "
                f"changed by its owner (uid {NOBODY}, mode 0755), who could make root believe what they put "
                f"there") in res.stdout, res.stdout
        # nobody's own: written by their validate, shown by their list --explain.
        os.unlink(store)
        res = run(as_nobody([memscope, *args]), env=env)
        assert res.returncode == 3, res.stderr                  # the fixture's known disagreement
        assert json.loads(store.read_text())["format"] == "memscope-validation"
        assert store.stat().st_uid == NOBODY
        res = run(as_nobody([memscope, "list", "--explain", "mem.read_bytes"]), env=env)
        assert "FAILED validation on this machine" in res.stdout, res.stdout + res.stderr
