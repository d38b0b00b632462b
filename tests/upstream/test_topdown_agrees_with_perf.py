"""The catalog's top-down metrics against perf's own: for every family that maps them, perf's MetricExpr
(evaluated here, tools/perf/util/expr.y's grammar, perf_metric_expr.py) and memscope's value (`memscope stat
--replay` on the family's fixture tree) over the same counts must agree to 1e-9 relative: many random sets,
no cycles at all, every counter multiplexed at 50%, and counters multiplexed unevenly.

Each perf event a metric names is found among the catalog's events by its encoding (event, umask, cmask,
edge, inv, any; perf's fixed counters by what they count, the kernel's topdown-* aliases from
arch/x86/events/intel/core.c, TSC as the msr PMU's tsc), so a catalog formula over other events than perf's
fails here. Where the catalog knowingly differs, the mapping's upstream_differs says why, and the test
checks that very difference: perf's d_ratio gives 0 where memscope gives no value (nothing counted),
perf's #has_pmem branch (persistent memory) differs from memscope's, and perf's TSC is every CPU's added
up where memscope counts one CPU's (memscope's value is perf's divided by the number of CPUs).
"""
import json
import math
import os
import random
import re
import subprocess

import pytest

import kernel_tables as kt
import perf_metric_expr as pe

BUILD = os.environ.get("MEMSCOPE_BUILD") or os.path.join(kt.ROOT, "build")
MEMSCOPE = os.path.join(BUILD, "memscope")
TOPDOWN = ["topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound",
           "topdown.l3_bound", "topdown.dram_bound", "topdown.dram_bandwidth", "topdown.dram_latency",
           "topdown.store_bound", "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache"]
INTEL = {"topdown.backend_bound": "tma_backend_bound", "topdown.memory_bound": "tma_memory_bound",
         "topdown.l1_bound": "tma_l1_bound", "topdown.l2_bound": "tma_l2_bound", "topdown.l3_bound": "tma_l3_bound",
         "topdown.dram_bound": "tma_dram_bound", "topdown.dram_bandwidth": "tma_mem_bandwidth",
         "topdown.dram_latency": "tma_mem_latency", "topdown.store_bound": "tma_store_bound",
         "topdown.local_dram": "tma_local_mem", "topdown.remote_dram": "tma_remote_mem",
         "topdown.remote_cache": "tma_remote_cache"}
# family: (fixture tree, perf tables, {catalog metric: perf metric})
CASES = {
    "intel-skylake-sp": ("skylake-sp-2s", ["x86/skylakex", "x86/cascadelakex"], INTEL),
    "intel-icelake-sp": ("icelake-sp-2s", ["x86/icelakex"], INTEL),
    "intel-sapphire-rapids": ("sapphire-rapids-2s", ["x86/sapphirerapids", "x86/emeraldrapids"], INTEL),
    "amd-zen4": ("epyc-zen4-2s", ["x86/amdzen4"],
                 {"topdown.backend_bound": "backend_bound", "topdown.memory_bound": "backend_bound_memory"}),
    "amd-zen5": ("epyc-zen5-2s", ["x86/amdzen5"],
                 {"topdown.backend_bound": "backend_bound", "topdown.memory_bound": "backend_bound_by_memory"}),
    "arm-neoverse-cmn": ("neoverse-n1-cmn", ["arm64/arm/neoverse-n1", "arm64/arm/neoverse-v1",
                                             "arm64/arm/neoverse-n2-v2"],
                         {"topdown.backend_bound": "backend_stalled_cycles"}),
    "hisi-hip08": ("kunpeng920-2s", ["arm64/hisilicon/hip08"],
                   {m: m.split(".")[1] for m in ("topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound",
                                                 "topdown.l2_bound", "topdown.store_bound")}),
}
FIELDS = ("event", "umask", "cmask", "edge", "inv", "any")
RANDOM_SETS = 40
FAMILIES = {f["family"]: f for f in kt.load_families()}


def key(pmu, fields):
    """What an event counts: its PMU kind and its non-zero encoding fields."""
    return pmu, tuple(sorted((k, v) for k, v in fields.items() if k in FIELDS and v))


def kernel_aliases(src):
    """The kernel's sysfs aliases of the Intel big-core PMU: topdown-be-bound -> event=0x00,umask=0x83 (the
    first definition: the later ones are the Atom cores' own, event=0x74)."""
    with open(os.path.join(src, "arch", "x86", "events", "intel", "core.c")) as f:
        text = f.read()
    out = {}
    for m in re.finditer(r'EVENT_ATTR_STR\(\s*([a-z0-9-]+),\s*\w+,\s*"([^"]*)"\)', text):
        out.setdefault(m.group(1), kt.parse_terms(m.group(2)))
    return out


class PerfTable:
    """One perf table directory: its events by name and its metrics, with the literals of the fixture."""

    def __init__(self, src, rel, literals):
        self.rel = rel
        self.std = kt.arm_standard_events(src)
        events, metrics = kt.load_table(src, rel)
        self.events = {(e.get("EventName") or e.get("ArchStdEvent")): e for e in events}
        self.metrics = {m["MetricName"]: m for m in metrics}
        for e in events:      # arm64: a metric of the common tables, named by ArchStdEvent
            if "ArchStdEvent" in e and "MetricExpr" in e:
                self.metrics[e["ArchStdEvent"].lower()] = e
        self.aliases = kernel_aliases(src) if rel.startswith("x86/") else {}
        self.literals = literals

    def event_key(self, name):
        """The key of an event a perf expression names, or None when this table does not define it."""
        if name == "TSC":
            return key("msr", {})
        pmu, base, fields = pe.event_term(name)
        enc = {}
        if base is not None:
            if base in self.aliases:
                enc = dict(self.aliases[base])
            elif base in self.events:
                e = self.events[base]
                enc = kt.event_encoding(e, self.std)
                if enc is None and "UMask" in e and "EventCode" not in e:
                    # x86 fixed counters: THREAD(_ANY) counts what 0x3c counts; REF_TSC, SLOTS by umask
                    umask = int(e["UMask"], 0)
                    enc = {"event": 0x3c} if umask == 2 else {"umask": umask}
                    if e.get("AnyThread") == "1":
                        enc["any"] = 1
                if enc is None:
                    return None
            elif base.upper() in self.std:
                enc = kt.event_encoding(self.std[base.upper()], self.std)
            else:
                return None
        enc.update(fields)
        return key("core", enc)

    def metric_tree(self, name):
        return pe.parse(self.metrics[name]["MetricExpr"])

    def scale(self, name):
        """perf's value per memscope fraction: 100 for a percentage ('1percent of cycles'), else 1."""
        unit = self.metrics[name].get("ScaleUnit", "")
        return 100.0 if unit.startswith("1percent") else 1.0

    def value(self, name, counts, seconds, literals=None):
        """perf's value of metric name over counts ({key: count}); NaN where perf's has none."""
        lits = dict(self.literals, **(literals or {}))

        def lookup(n):
            if n == "duration_time":
                return seconds
            if n in self.metrics:
                return pe.evaluate(self.metric_tree(n), lookup, lits)
            k = self.event_key(n)
            if k is None or k not in counts:
                raise LookupError("%s: perf's %s names %s, which no catalog event counts (encoding %s)"
                                  % (self.rel, name, n, k))
            return counts[k]
        return pe.evaluate(self.metric_tree(name), lookup, lits)


def fixture_cpus(machine):
    base = os.path.join(kt.FIXTURES, machine, "sys", "devices", "system", "cpu")
    cpus, cores = [], set()
    for d in sorted(os.listdir(base)):
        if re.fullmatch(r"cpu\d+", d) and os.path.isdir(os.path.join(base, d, "topology")):
            def read(f):
                with open(os.path.join(base, d, "topology", f)) as fh:
                    return fh.read().strip()
            cpus.append(int(d[3:]))
            cores.add((read("physical_package_id"), read("die_id") if os.path.exists(
                os.path.join(base, d, "topology", "die_id")) else "0", read("core_id")))
    return sorted(cpus), len(cores) < len(cpus)


def fixture_pmu(machine, role):
    devices = os.listdir(os.path.join(kt.FIXTURES, machine, "sys", "bus", "event_source", "devices"))
    found = sorted(d for d in devices if re.search(role["match"], d))
    assert found, "%s: no PMU of the fixture matches %s" % (machine, role["match"])
    return found[0]


def catalog_events(fam, metrics):
    """(role, event) -> (fixture-independent key) for every event the mappings of metrics refer to."""
    out = {}
    for metric in metrics:
        mapping = fam["metrics"][metric][0]
        for name in pe.names(pe.parse(mapping["formula"])):
            if name in ("seconds", "smt_on", "core_wide"):
                continue
            rname, ename = name.split(".")
            role = fam["pmus"][rname]
            ev = role["events"][ename]
            terms = kt.parse_terms(ev["config"] if isinstance(ev, dict) else ev)
            out[(rname, ename)] = key("msr" if "msr" in role["match"] else "core", terms)
    return out


def frames(events, cpus, rng):
    """Frames of counts: each {(role, event): [(cpu, value, enabled, running)]}, with its interval. The TSC
    (the msr PMU) reads the same on every CPU and is never multiplexed (it is free-running)."""
    def frame(count, coverage):
        out = {}
        for ev, k in events.items():
            if k[0] == "msr":
                t = count(ev, cpus[0])
                out[ev] = [(c, t, 1000000000, 1000000000) for c in cpus]
            else:
                out[ev] = [(c, count(ev, c), *coverage(ev, c)) for c in cpus]
        return out
    whole = lambda ev, c: (1000000000, 1000000000)      # noqa: E731
    out = []
    for _ in range(RANDOM_SETS):
        out.append((rng.choice([1.0, 0.5, 2.0]), frame(lambda ev, c: rng.randint(0, 2000000), whole)))
    out.append((1.0, frame(lambda ev, c: 0, whole)))                                    # nothing counted
    out.append((1.0, frame(lambda ev, c: rng.randint(1, 2000000), lambda ev, c: (1000000000, 500000000))))
    out.append((1.0, frame(lambda ev, c: rng.randint(1, 2000000),                       # uneven multiplexing
                           lambda ev, c: (1000000000, rng.choice([1000000000, 500000000, 250000000])))))
    return out


def run_memscope(machine, fam, metrics, events, frame_list, tmp_path):
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    t = 0.0
    for seconds, counts in frame_list:
        t += seconds
        values = {}
        for (rname, ename), per_cpu in counts.items():
            pmu = fixture_pmu(machine, fam["pmus"][rname])
            if fam["pmus"][rname].get("scope") == "system":   # one CPU counts it: one series
                values["%s/%s/" % (pmu, ename)] = per_cpu[0][1]
                continue
            for cpu, value, enabled, running in per_cpu:
                name = "%s/%s/@cpu%d" % (pmu, ename, cpu)
                values[name] = value if running == enabled else \
                    {"value": value, "enabled_ns": enabled, "running_ns": running}
        lines.append(json.dumps({"t": t, "values": values}))
    path = tmp_path / ("%s.jsonl" % machine)
    path.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, MEMSCOPE_SYSFS_ROOT=os.path.join(kt.FIXTURES, machine, "sys"),
               MEMSCOPE_PROCFS_ROOT=os.path.join(kt.FIXTURES, machine, "proc"))
    if not os.path.exists(MEMSCOPE):
        pytest.fail("%s is missing: build first, or point MEMSCOPE_BUILD at a build directory" % MEMSCOPE)
    r = subprocess.run([MEMSCOPE, "stat", "--replay", str(path), "-m", ",".join(metrics),
                        "-I", "1000", "-x,", "--self-describing"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {}
    # stat's counts are on standard error, as perf's, beside memscope's own notes.
    counts = [line for line in r.stderr.splitlines() if not line.startswith(("memscope ", "memscope:"))]
    for line in counts[1:]:
        time_, scope, metric, value, _unit, coverage = line.split(",")[:6]   # then memscope's note
        if scope != "total" or time_ == "total":
            continue
        rows.setdefault(metric, []).append((None if value.startswith("<") else float(value),
                                            float(coverage) if coverage else None))
    return rows


def scaled(counts):
    return {ev: sum(v * e / r if r else 0 for _c, v, e, r in per_cpu) for ev, per_cpu in counts.items()}


def agree(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


@pytest.mark.parametrize("family", sorted(CASES))
def test_topdown_agrees_with_perf(src, family, tmp_path):
    machine, tables, names = CASES[family]
    fam = FAMILIES[family]
    mapped = [m for m in TOPDOWN if m in (fam.get("metrics") or {})]
    assert mapped, "%s maps no top-down metric" % family
    assert sorted(mapped) == sorted(names), "%s maps %s; this test compares %s" % (family, mapped, sorted(names))
    cpus, smt = fixture_cpus(machine)
    literals = {"#SMT_on": int(smt), "#core_wide": 1, "#has_pmem": 0, "#num_cores": len(cpus)}
    events = catalog_events(fam, mapped)
    by_key = {}
    for ev, k in events.items():
        assert k not in by_key, "%s: %s and %s count the same thing" % (family, ev, by_key[k])
        by_key[k] = ev
    rng = random.Random(family)
    frame_list = frames(events, cpus, rng)
    rows = run_memscope(machine, fam, mapped, events, frame_list, tmp_path)
    compared = 0
    for rel in tables:
        table = PerfTable(src, rel, literals)
        for metric in mapped:
            perf_name = names[metric]
            assert perf_name in table.metrics, "%s has no metric %s" % (rel, perf_name)
            differs = fam["metrics"][metric][0].get("upstream_differs", "")
            tsc_differs = "adds them up" in differs
            # A table without the persistent-memory branch (Emerald Rapids) is simply the same.
            pmem_branch = "has_pmem" in differs and "#has_pmem" in table.metrics[perf_name]["MetricExpr"]
            assert not differs or "d_ratio" in differs or "has_pmem" in differs or tsc_differs, \
                "%s %s: upstream_differs this test does not know how to check: %s" % (family, metric, differs)
            seen_difference = False
            for i, (seconds, counts) in enumerate(frame_list):
                sums = {events[ev]: v for ev, v in scaled(counts).items()}
                perf = table.value(perf_name, sums, seconds) / table.scale(perf_name)
                mine, coverage = rows[metric][i]
                where = "%s %s vs perf %s %s, frame %d" % (family, metric, rel, perf_name, i)
                if math.isnan(perf) or mine is None:
                    if mine is None and perf == 0 and "d_ratio" in differs:
                        continue      # perf's d_ratio: 0 where nothing was counted
                    assert mine is None and math.isnan(perf), "%s: memscope %s, perf %s" % (where, mine, perf)
                    continue
                if tsc_differs:       # perf's TSC is every CPU's added up; memscope's one CPU's
                    seen_difference |= not agree(mine, perf)
                    perf /= len(cpus)
                assert agree(mine, perf), "%s: memscope %.15g, perf %.15g" % (where, mine, perf)
                compared += 1
                if i == RANDOM_SETS + 1:
                    assert coverage == 0.5, "%s: coverage %s with every counter running half the time" % (
                        where, coverage)
                if pmem_branch:
                    try:
                        extra = {k: 1000 for k in _pmem_keys(table, perf_name) if k not in sums}
                        other = table.value(perf_name, dict(sums) | extra, seconds, {"#has_pmem": 1})
                    except LookupError:
                        other = math.nan
                    seen_difference |= not agree(other / table.scale(perf_name), mine)
            if tsc_differs:
                assert seen_difference, "%s %s says perf adds every CPU's TSC up, but it agrees" % (family, metric)
            if pmem_branch:
                assert seen_difference, "%s %s says perf's #has_pmem branch differs, but it agrees" % (family, metric)
            if "d_ratio" in differs:
                zero = frame_list[RANDOM_SETS][1]
                sums = {events[ev]: v for ev, v in scaled(zero).items()}
                assert table.value(perf_name, sums, 1.0) == 0 and rows[metric][RANDOM_SETS][0] is None, \
                    "%s %s says perf's d_ratio gives 0 where memscope gives no value, but it does not" % (
                        family, metric)
    assert compared >= len(mapped) * RANDOM_SETS * len(tables)
    print("%s: %d values compared with perf's (%s)" % (family, compared, ", ".join(tables)))


def _pmem_keys(table, name):
    """Keys of the events perf's metric reads only with persistent memory (they are not in the catalog)."""
    out = []

    def walk(tree):
        for n in pe.names(tree):
            if n in table.metrics:
                walk(table.metric_tree(n))
            elif n != "duration_time":
                k = table.event_key(n)
                if k is not None:
                    out.append(k)
    walk(table.metric_tree(name))
    return out
