"""Bad input a user (or a fuzzer) can hand memscope: each is refused with FILE:LINE and the cause,
or gives no number with the reason, never a crash, a wrong number or a silent drop."""
import json
import shutil

from conftest import ROOT, fixture_env, run
from stat_output import counter_output, parse_json_lines


def write_replay(path, frames):
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines += [json.dumps({"t": t, "values": values}) for t, values in frames]
    path.write_text("\n".join(lines) + "\n")


def kunpeng_ddrc(first):
    """Every DDRC flux_rd of the 2-socket Kunpeng 920 fixture, the first one at `first`."""
    values = {f"hisi_sccl{s}_ddrc{c}/flux_rd/": 0 for s in (1, 3, 5, 7) for c in range(4)}
    values["hisi_sccl1_ddrc0/flux_rd/"] = first
    return values


def replay_stat(memscope, replay, *args, env=None):
    return run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bytes", *args],
               env=env or fixture_env("kunpeng920-2s"))


def test_replay_times_beyond_nanoseconds_in_64_bits(memscope, tmp_path):
    """1.8e10 s overflowed the conversion to nanoseconds (undefined; it showed as a zero-length
    interval)."""
    counts = kunpeng_ddrc(100)
    for bad, shown in ((1.8e10, "1.8e+10"), (1e300, "1e+300"), (9.3e9, "9.3e+09")):
        replay = tmp_path / "far.jsonl"
        write_replay(replay, [(1.0, counts), (bad, counts)])
        res = replay_stat(memscope, replay)
        assert res.returncode == 1, res
        assert f"{replay}:3: t = {shown} s is out of range: times are seconds since the start, below " \
               "9200000000 s (about 292 years)" in res.stderr, res.stderr
    # Two frames less than a nanosecond apart would be an interval of zero.
    write_replay(replay, [(1.0, counts), (1.0000000001, counts)])
    res = replay_stat(memscope, replay)
    assert res.returncode == 1
    assert f"{replay}:3: t = 1.0000000001 s is less than a nanosecond after the previous frame's 1 s" in res.stderr
    # The largest time that fits still replays, with its interval.
    write_replay(replay, [(1.0, counts), (9.1e9, counts)])
    res = replay_stat(memscope, replay, "--json", "--self-describing")
    assert res.returncode == 0, res.stderr
    total = parse_json_lines(counter_output(res.stderr))[-1]
    assert total["rows"][0]["metrics"]["mem.read_bytes"]["value"] == 200 * 32, counter_output(res.stderr)


def catalog_copy(tmp_path, extra_metric):
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", cat, ignore=shutil.ignore_patterns("meson.build"))
    with open(cat / "metrics.yaml", "a") as f:
        f.write(extra_metric)
    return cat


def test_catalog_yaml_nested_past_the_limit_is_refused_at_its_place(memscope, tmp_path):
    """Flow lists 400,000 levels deep took libyaml minutes (its work per token grows with the
    nesting): refused at the first level past 200, with file:line:column; 200 levels still load
    as far as the catalog's own checks."""
    cat = catalog_copy(tmp_path, "")
    family = cat / "pmu" / "hisi-hip08.yaml"
    original = family.read_text()
    env = dict(fixture_env("kunpeng920-2s"), MEMSCOPE_CATALOG_DIR=str(cat))
    family.write_text(original + "deep: " + "[" * 400_000 + "]" * 400_000 + "\n")
    line = original.count("\n") + 1
    res = run([memscope, "list", "--metrics"], env=env, timeout=60)
    assert res.returncode != 0
    # deep: is a mapping value of the root (level 1); its lists are levels 2.., the 200th list opens level 201.
    assert f"{family}:{line}:{7 + 199}: lists and mappings nested deeper than 200 levels" in res.stderr, res.stderr
    family.write_text(original + "deep: " + "[" * 199 + "]" * 199 + "\n")
    res = run([memscope, "list", "--metrics"], env=env, timeout=60)
    assert "nested deeper" not in res.stderr, res.stderr


def test_a_formula_that_overflows_has_no_value_and_says_why(memscope, tmp_path):
    """1e308 * 1e308 printed inf and vanished from JSON: now no value, the reason beside it."""
    cat = catalog_copy(tmp_path, "  - name: test.huge\n    unit: B\n    kind: counter\n"
                                 "    description: overflows a double\n    formula: mem.read_bytes * 1e308\n")
    replay = tmp_path / "r.jsonl"
    write_replay(replay, [(1.0, kunpeng_ddrc(1000))])
    env = fixture_env("kunpeng920-2s", MEMSCOPE_CATALOG_DIR=str(cat))
    res = run([memscope, "stat", "--replay", str(replay), "-m", "test.huge,mem.read_bytes", "--json", "--self-describing"], env=env)
    assert res.returncode == 0, res.stderr
    docs = parse_json_lines(counter_output(res.stderr))
    assert docs, counter_output(res.stderr)
    for doc in docs:
        for row in doc["rows"]:
            huge = row["metrics"]["test.huge"]
            assert huge["value"] is None and huge["status"] == "not counted", huge
            assert huge["why"] == "the result is out of range (beyond 1.8e308, a double's largest value)", huge
    assert docs[-1]["rows"][0]["metrics"]["mem.read_bytes"]["value"] == 32000
    res = run([memscope, "stat", "--replay", str(replay), "-m", "test.huge"], env=env)
    assert res.returncode == 0, res.stderr
    assert "inf" not in counter_output(res.stderr)
    assert "out of range" in counter_output(res.stderr) + res.stderr


def test_catalog_values_out_of_range_and_second_documents(memscope, tmp_path):
    cat = catalog_copy(tmp_path, "")
    family = cat / "pmu" / "hisi-hip08.yaml"
    original = family.read_text()
    env = dict(fixture_env("kunpeng920-2s"), MEMSCOPE_CATALOG_DIR=str(cat))
    family.write_text(original.replace("priority: 10", "priority: 9223372036854775807"))
    res = run([memscope, "list", "--metrics"], env=env)
    assert res.returncode != 0
    assert f"{family}:6:11: hisi-hip08: priority 9223372036854775807 is out of range: give 0 (first) to " \
           "1000 (last)" in res.stderr, res.stderr
    family.write_text(original + "---\nfamily: [broken\n")
    res = run([memscope, "list", "--metrics"], env=env)
    assert res.returncode != 0
    assert f"{family}:" in res.stderr and "YAML syntax error" in res.stderr, res.stderr
    family.write_text(original + "---\nfamily: another\n")
    res = run([memscope, "list", "--metrics"], env=env)
    assert res.returncode != 0
    assert "a second YAML document: a catalog file holds one document" in res.stderr, res.stderr
