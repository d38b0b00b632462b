"""The catalog against the kernel's own tables: perf's pmu-events JSON (event encodings, counter counts,
the scale of bandwidth metrics) and the drivers' source (format fields and alias names in sysfs).

A catalog event that perf's tables also define (by event name, or by event code on the same PMU) must have
the same encoding; a catalog mapping whose events form one of perf's byte metrics must have the same scale.
Where the catalog knowingly differs, the entry says why in `upstream_differs:`.
"""
import re

import pytest

import kernel_tables as kt
from conftest import COUNTS

FAMILIES = kt.load_families()


def role_matches(role, names):
    return any(re.search(role["match"], n) for n in names) if role.get("match") else False


class Comparison:
    """One family against the perf tables of its CPUs (and the system tables of its PMUs)."""

    def __init__(self, src, fam):
        self.fam = fam
        self.std = kt.arm_standard_events(src)
        tables = kt.tables_for_family(src, fam)
        roles = fam.get("pmus") or {}
        self.events, self.metrics, self.counters = [], [], {}
        self.tables = []
        for rel in tables + kt.sys_tables(src):
            events, metrics = kt.load_table(src, rel)
            mine = [e for e in events if any(role_matches(r, kt.unit_examples(e.get("Unit"))) for r in roles.values())]
            if rel not in tables and not mine:
                continue
            for e in mine:
                if "CountersNumGeneric" in e:
                    self.counters[e.get("Unit")] = int(e["CountersNumGeneric"])
                    continue
                enc = kt.event_encoding(e, self.std)
                if enc is not None:
                    name = e.get("EventName") or e.get("ArchStdEvent")
                    self.events.append((e, name, enc))
            if mine:
                self.tables.append(rel)
                self.metrics += metrics

    def candidates(self, role):
        return [(e, n, enc) for e, n, enc in self.events if role_matches(role, kt.unit_examples(e.get("Unit")))]

    @staticmethod
    def names_of(ename, ev):
        names = {ename.lower()}
        if ev.get("alias"):
            names.add(ev["alias"].lower())
        if ev.get("pfm"):
            names.add(ev["pfm"].split("::")[-1].replace(":", ".").lower())
        desc = ev.get("description") or ""
        m = re.match(r"[A-Za-z0-9_.]+", desc)
        if m and ("." in m.group(0) or "_" in m.group(0)):
            names.add(m.group(0).lower())
        return names

    def compare(self):
        """Per catalog event: (role, event, ev, verdict, perf event name or None, message)."""
        out = []
        for rname, role, ename, ev in kt.family_events(self.fam):
            cands = self.candidates(role)
            cat = kt.catalog_encoding(kt.parse_terms(ev["config"]))
            names = self.names_of(ename, ev)
            by_name = [c for c in cands if c[1].lower() in names]
            key = "eventid" if "eventid" in cat else "event"
            by_code = [c for c in cands if key in cat and c[2].get(key) == cat[key] and
                       c[2].get("type", cat.get("type")) == cat.get("type")]
            pool = by_name or by_code
            if not pool:
                out.append((rname, ename, ev, "absent", None, ""))
                continue
            agreeing = [c for c in pool if kt.same_encoding(cat, c[2])[0]]
            if agreeing:
                out.append((rname, ename, ev, "agree", agreeing[0][1], ""))
            else:
                perf = "; ".join("%s %s (%s)" % (n, enc, e["_file"]) for e, n, enc in pool[:4])
                out.append((rname, ename, ev, "differ", pool[0][1],
                            "%s: %s.%s %s: perf's table has %s" % (self.fam["_file"], rname, ename, ev["config"],
                                                                   perf)))
        return out


@pytest.fixture(scope="module")
def comparisons(src):
    return {fam["family"]: Comparison(src, fam) for fam in FAMILIES}


def test_catalog_event_encodings_agree_with_perf_tables(comparisons):
    problems = []
    for family, cmp in comparisons.items():
        results = cmp.compare()
        counts = COUNTS.setdefault(family, {})
        counts["tables"] = cmp.tables
        counts["events"] = sum(1 for r in results if r[3] != "absent")
        counts["differs"] = sum(1 for r in results if r[3] == "differ")
        for rname, ename, ev, verdict, perf, msg in results:
            if verdict == "differ" and not ev.get("upstream_differs"):
                problems.append(msg + "; fix the encoding or say why in upstream_differs:")
            if verdict == "agree" and ev.get("upstream_differs"):
                problems.append("%s: %s.%s says upstream_differs but agrees with perf's %s" % (
                    cmp.fam["_file"], rname, ename, perf))
    assert not problems, "\n".join(problems)


def test_every_family_with_a_perf_table_is_compared(comparisons):
    empty = []
    for family, cmp in comparisons.items():
        if cmp.events and not any(r[3] != "absent" for r in cmp.compare()):
            empty.append("%s: perf has %d events for its PMUs (%s) but none was compared" % (
                family, len(cmp.events), ", ".join(cmp.tables)))
    assert not empty, "\n".join(empty)


def test_counter_counts_agree_with_perf(comparisons):
    problems = []
    for family, cmp in comparisons.items():
        for unit, n in cmp.counters.items():
            for rname, role in (cmp.fam.get("pmus") or {}).items():
                if role_matches(role, kt.unit_examples(unit)) and role.get("counters") and role["counters"] != n:
                    problems.append("%s: role %s has counters: %d, perf's counter.json (%s) says %d generic" % (
                        cmp.fam["_file"], rname, role["counters"], unit or "core", n))
    assert not problems, "\n".join(problems)


def test_byte_metric_scales_agree_with_perf(comparisons):
    problems = []
    for family, cmp in comparisons.items():
        matched = {}
        for rname, ename, ev, verdict, perf, _ in cmp.compare():
            if verdict == "agree":
                matched["%s.%s" % (rname, ename)] = perf
        compared = 0
        units = kt.metric_units()
        for metric, mappings in (cmp.fam.get("metrics") or {}).items():
            if units.get(metric) != "B":
                continue
            for mapping in mappings:
                refs = [m.group("name") for m in kt.TOKEN.finditer(mapping["formula"]) if m.group("name") and m.group("name") != "seconds"]
                if not refs or any(r not in matched for r in refs):
                    continue
                perf_names = {matched[r].lower() for r in refs}
                values = {r: 1000 + 37 * i for i, r in enumerate(sorted(set(refs)))}
                for pm in cmp.metrics:
                    scale = kt.scale_unit(pm)
                    used = kt.metric_events(pm.get("MetricExpr", ""))
                    if scale is None or not used or {u.lower() for u in used} != perf_names:
                        continue
                    pvalues = {u: values[[r for r in refs if matched[r].lower() == u.lower()][0]] for u in used}
                    pvalues["duration_time"] = 1.0
                    ours = kt.eval_expr(mapping["formula"], dict(values, seconds=1.0))
                    theirs = kt.eval_expr(pm["MetricExpr"], pvalues) * scale
                    compared += 1
                    # perf writes some scales rounded ("6.1e-5MiB" for 64 B): agree within 1%
                    same = abs(ours - theirs) <= 0.01 * max(abs(ours), abs(theirs), 1)
                    if not same and not mapping.get("upstream_differs"):
                        problems.append("%s: %s = %s gives %g B for the same counts where perf's %s (%s, %s) "
                                        "gives %g B" % (cmp.fam["_file"], metric, mapping["formula"], ours,
                                                        pm["MetricName"], pm["MetricExpr"], pm["_file"], theirs))
        COUNTS.setdefault(family, {})["metrics"] = compared
    assert not problems, "\n".join(problems)


# ---- the drivers' source -------------------------------------------------------

def test_fixture_format_fields_are_the_drivers(src):
    missing = []
    for machine, pmu, fmts, _ in kt.fixture_pmus():
        globs_ = kt.driver_globs(pmu, kt.fixture_is_arm(machine))
        formats = kt.driver_formats(src, globs_)
        for name, text in fmts.items():
            if (name, text) not in formats:
                known = sorted(t for n, t in formats if n == name)
                missing.append("%s %s/format/%s = %s: %s define %s as: %s" % (
                    machine, pmu, name, text, ", ".join(globs_), name, ", ".join(known[:6]) or "nothing"))
    assert not missing, "\n".join(missing)


def role_drivers(role):
    """Driver globs for a catalog role, from the fixture PMUs it matches."""
    for machine, pmu, _, _ in kt.fixture_pmus():
        if role.get("match") and re.search(role["match"], pmu):
            return kt.driver_globs(pmu, kt.fixture_is_arm(machine))
    return kt.ALL_DRIVERS


def test_catalog_format_fields_exist_in_drivers(src):
    missing = []
    for fam in FAMILIES:
        for rname, role in (fam.get("pmus") or {}).items():
            if role.get("source") in ("procfs", "bpf"):
                continue
            names = {n for n, _ in kt.driver_formats(src, role_drivers(role))}
            fields = (role.get("requires_formats") or []) + (role.get("rejects_formats") or [])
            for ename, ev in (role.get("events") or {}).items():
                ev = ev if isinstance(ev, dict) else {"config": ev}
                fields += list(kt.parse_terms(ev.get("config", "")))
            for field in fields:
                if field not in names and field not in ("config", "config1", "config2"):
                    missing.append("%s: role %s uses format field '%s', which %s do not define" % (
                        fam["_file"], rname, field, ", ".join(role_drivers(role))))
    assert not missing, "\n".join(sorted(set(missing)))


def alias_code(text):
    """The code an alias file gives: 'config=0x84' / 'event=0x0d' -> 0x84 / 0x0d; None for several terms."""
    terms = kt.parse_terms(text)
    return terms.get("config", terms.get("event")) if len(terms) == 1 else None


def alias_agrees(defs, text):
    for value, _ in defs:
        if value is None:
            return True
        if isinstance(value, str) and (kt.parse_terms(value) == kt.parse_terms(text) or
                                       alias_code(value) == alias_code(text) is not None):
            return True
        if isinstance(value, int) and (alias_code(text) is None or alias_code(text) == value):
            return True
    return False


def test_alias_names_and_codes_are_the_drivers(src):
    problems = []
    for machine, pmu, _, events in kt.fixture_pmus():
        if pmu in ("software", "tracepoint", "breakpoint"):
            continue
        globs_ = kt.driver_globs(pmu, kt.fixture_is_arm(machine))
        aliases = kt.driver_aliases(src, globs_)
        for name, text in events.items():
            if name not in aliases:
                problems.append("%s %s/events/%s: %s define no such alias" % (machine, pmu, name, ", ".join(globs_)))
            elif not alias_agrees(aliases[name], text):
                problems.append("%s %s/events/%s = %s but the driver defines %s" % (
                    machine, pmu, name, text, aliases[name]))
    for fam in FAMILIES:
        for rname, role, ename, ev in kt.family_events(fam):
            alias = ev.get("alias")
            if not alias:
                continue
            aliases = kt.driver_aliases(src, role_drivers(role))
            if alias not in aliases:
                problems.append("%s: %s.%s names alias '%s', which %s do not define" % (
                    fam["_file"], rname, ename, alias, ", ".join(role_drivers(role))))
            elif len(kt.parse_terms(ev["config"])) == 1 and not alias_agrees(aliases[alias], ev["config"]):
                problems.append("%s: %s.%s is %s but the driver defines alias %s as %s" % (
                    fam["_file"], rname, ename, ev["config"], alias, aliases[alias]))
    assert not problems, "\n".join(problems)
