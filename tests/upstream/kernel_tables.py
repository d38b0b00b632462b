"""The kernel's own descriptions of PMUs, read from a linux source tree, and the catalog's families.

perf's event tables (tools/perf/pmu-events/arch/**.json): which tables a catalog family's CPUs use (from
perf's mapfile.csv and the family's detect.cpu), each event's encoding and PMU, and perf's metrics.
The drivers (drivers/perf, arch/x86/events): the format fields and event aliases they create in sysfs.
"""
import glob
import json
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOG = os.path.join(ROOT, "catalog")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "sysfs")


def kernel_source():
    src = os.environ.get("MEMSCOPE_KERNEL_SOURCE")
    if not src:
        deps = os.environ.get("MEMSCOPE_DEPS") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memscope")
        src = os.path.join(deps, "linux-source-6.12")
    return src


# ---- the catalog ------------------------------------------------------------

def load_families():
    families = []
    for path in sorted(glob.glob(os.path.join(CATALOG, "pmu", "*.yaml"))):
        with open(path) as f:
            fam = yaml.safe_load(f)
        fam["_file"] = os.path.relpath(path, ROOT)
        families.append(fam)
    return families


def parse_terms(text):
    """'event=0x04,umask=0x0f' -> {'event': 4, 'umask': 15}; a bare flag is 1."""
    terms = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            k, v = part.split("=", 1)
            terms[k.strip()] = int(v.strip(), 0) if not v.strip().startswith("?") else None
        else:
            terms[part] = 1
    return terms


def family_events(fam):
    """(role name, role, event name, event dict) for every config event of the family."""
    for rname, role in (fam.get("pmus") or {}).items():
        for ename, ev in (role.get("events") or {}).items():
            if not isinstance(ev, dict):
                ev = {"config": ev}
            if "config" in ev:
                yield rname, role, ename, ev


def ranges(value):
    """detect values: 6, "0x10-0x1f", [..] -> [(lo, hi)]."""
    if value is None:
        return None
    out = []
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, int):
            out.append((v, v))
        else:
            lo, _, hi = str(v).partition("-")
            out.append((int(lo, 0), int(hi or lo, 0)))
    return out


def in_ranges(v, rs):
    return rs is None or any(lo <= v <= hi for lo, hi in rs)


def cpu_entries(fam):
    cpu = (fam.get("detect") or {}).get("cpu")
    if cpu is None:
        return []
    return cpu if isinstance(cpu, list) else [cpu]


# ---- perf's tables ------------------------------------------------------------

def arch_dir(src):
    return os.path.join(src, "tools", "perf", "pmu-events", "arch")


def mapfile(src, arch):
    rows = []
    with open(os.path.join(arch_dir(src), arch, "mapfile.csv")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("Family-model"):
                continue
            cpuid, _version, path, kind = line.split(",")[:4]
            if kind == "core":
                rows.append((cpuid, path))
    return rows


def tables_for_family(src, fam):
    """perf table directories (relative to arch/) for the CPUs the family is written for."""
    dirs = []
    for entry in cpu_entries(fam):
        if entry.get("vendor"):
            fams = ranges(entry.get("family"))
            models = ranges(entry.get("model"))
            rows = [(cpuid.replace("[[:xdigit:]]", "[0-9A-Fa-f]"), path) for cpuid, path in mapfile(src, "x86")]
            for family in range(0, 0x20):
                if not in_ranges(family, fams):
                    continue
                for model in range(0, 0x100):
                    if not in_ranges(model, models):
                        continue
                    for stepping in range(16):
                        # perf takes the first row of mapfile.csv that matches the CPU
                        ident = "%s-%d-%X-%X" % (entry["vendor"], family, model, stepping)
                        for pattern, path in rows:
                            if re.fullmatch(pattern, ident) or re.fullmatch(pattern, ident.rsplit("-", 1)[0]):
                                if "x86/" + path not in dirs:
                                    dirs.append("x86/" + path)
                                break
        else:
            impl = ranges(entry.get("implementer"))
            parts = ranges(entry.get("part"))
            for cpuid, path in mapfile(src, "arm64"):
                midr = int(cpuid, 16)
                if in_ranges((midr >> 24) & 0xff, impl) and in_ranges((midr >> 4) & 0xfff, parts):
                    d = "arm64/" + path
                    if d not in dirs:
                        dirs.append(d)
    return dirs


def sys_tables(src):
    """System (uncore) tables matched by PMU, not CPU: arm64/*/*/sys."""
    return sorted(os.path.relpath(d, arch_dir(src))
                  for d in glob.glob(os.path.join(arch_dir(src), "arm64", "*", "*", "sys")))


def load_table(src, rel):
    """Events and metrics of one table directory (not its subdirectories)."""
    events, metrics = [], []
    for path in sorted(glob.glob(os.path.join(arch_dir(src), rel, "*.json"))):
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, list):
            continue
        for e in data:
            e = dict(e, _file=os.path.relpath(path, arch_dir(src)))
            (metrics if "MetricName" in e else events).append(e)
    return events, metrics


def arm_standard_events(src):
    """ArchStdEvent names -> EventCode, from arm64's common tables."""
    std = {}
    for name in ("common-and-microarch.json", "recommended.json"):
        path = os.path.join(arch_dir(src), "arm64", name)
        if os.path.exists(path):
            for e in json.load(open(path)):
                if "EventCode" in e:
                    std[e["EventName"].upper()] = e
    return std


# perf's jevents.py: a table's Unit names the kernel PMU.
UNIT_EXAMPLES = {
    "DFPMC": ["amd_df"], "L3PMC": ["amd_l3"], "UMCPMC": ["amd_umc_0"],
    "iMC": ["uncore_imc_0"], "IMC": ["uncore_imc_0"], "CHA": ["uncore_cha_0"], "UPI LL": ["uncore_upi_0"],
    "UPI": ["uncore_upi_0"], "arm_cmn": ["arm_cmn_0", "arm_cmn"],
}


def unit_examples(unit):
    """Sysfs PMU names a table's Unit stands for (core events: the core PMUs)."""
    if unit in (None, "core", "cpu"):
        return ["cpu", "armv8_pmuv3_0"]
    if unit in UNIT_EXAMPLES:
        return UNIT_EXAMPLES[unit]
    m = re.fullmatch(r"hisi_(sccl|sicl),(\w+)", unit)
    if m:
        return ["hisi_%s1_%s%s" % (m.group(1), m.group(2), n) for n in ("0", "0_0", "10")]
    return ["uncore_%s_0" % unit.lower(), unit.lower()]


def event_encoding(e, std):
    """A perf table event as format-field values, or None for events that are not raw encodings."""
    if "ArchStdEvent" in e:
        base = std.get(e["ArchStdEvent"].upper())
        if not base:
            return None
        e = dict(base, **{k: v for k, v in e.items() if k != "ArchStdEvent"})
        e["EventName"] = e.get("EventName") or base["EventName"]
    enc = {}
    fields = {"EventCode": "event", "UMask": "umask", "RdWrMask": "rdwrmask", "NodeType": "type",
              "EventidCode": "eventid", "ConfigCode": "event", "ThreadMask": "threadmask", "SliceId": "sliceid",
              "EnAllCores": "enallcores", "EnAllSlices": "enallslices", "EdgeDetect": "edge", "Invert": "inv",
              "CounterMask": "cmask", "AnyThread": "any"}
    for key, field in fields.items():
        if key in e and str(e[key]).strip() != "":
            try:
                enc[field] = int(str(e[key]), 0)
            except ValueError:      # "0xB7, 0xBB": one name for two encodings
                return None
    if "event" not in enc and "eventid" not in enc:
        return None
    return enc


# The same format field under other names in some drivers.
FIELD_SYNONYMS = {"thresh": "cmask", "config": "event"}
# Catalog-only filter fields (data source, request type...): perf's tables do not encode them.
EXTRA_FIELDS = {"tt_req", "datasrc_cfg", "datasrc_skt", "tt_core", "ext", "nodeid", "bynodeid", "occupid"}


def catalog_encoding(terms):
    enc = {}
    for k, v in terms.items():
        enc[FIELD_SYNONYMS.get(k, k)] = v
    return enc


def same_encoding(cat, perf):
    """Every field either side sets agrees (unset = 0); catalog-only filter fields must be absent."""
    keys = (set(cat) | set(perf)) - EXTRA_FIELDS
    return all((cat.get(k) or 0) == (perf.get(k) or 0) for k in keys), \
        sorted(k for k in set(cat) & EXTRA_FIELDS if cat[k])


# ---- perf metric expressions -------------------------------------------------

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.@\\]*")
TOKEN = re.compile(r"(?P<num>\d+\.?\d*(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.@\\]*)")
UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "MiB": 2 ** 20, "GiB": 2 ** 30}


def metric_events(expr):
    """Event names a perf MetricExpr refers to, or None when it uses syntax evaluated here is not for."""
    names = []
    for tok in (m.group("name") for m in TOKEN.finditer(expr) if m.group("name")):
        if tok in ("duration_time",):
            continue
        if tok in ("if", "else", "min", "max", "d_ratio", "source_count", "has_event", "strcmp_cpuid_str") \
                or "@" in tok or "\\" in tok:
            return None
        if re.fullmatch(r"\d+e\d+", tok):
            continue
        names.append(tok)
    return names


def scale_unit(metric):
    """Bytes per unit of a perf metric's value: ScaleUnit '1MB/s' -> 1e6; without a ScaleUnit, the unit its
    description names ('[GB / sec]'); None when it is not a byte quantity."""
    if "ScaleUnit" in metric:
        m = re.fullmatch(r"([0-9.e+-]+)\s*([KMGT]?i?B)(/s)?", metric["ScaleUnit"])
        return float(m.group(1)) * UNITS[m.group(2)] if m and m.group(2) in UNITS else None
    m = re.search(r"\[\s*([KMGT]?i?B)\s*/\s*sec\s*\]", metric.get("BriefDescription", ""))
    return UNITS[m.group(1)] if m and m.group(1) in UNITS else None


def metric_units():
    """Unit of every metric of catalog/metrics.yaml."""
    with open(os.path.join(CATALOG, "metrics.yaml")) as f:
        return {m["name"]: m.get("unit", "") for m in yaml.safe_load(f)["metrics"]}


def eval_expr(expr, values):
    """Evaluate a formula over names in values (a perf MetricExpr or a catalog formula)."""
    def sub(m):
        if m.group("num"):
            return m.group("num")
        tok = m.group("name")
        if tok in values:
            return repr(float(values[tok]))
        raise KeyError(tok)
    py = TOKEN.sub(sub, expr)
    return eval(py, {"__builtins__": {}}, {})


# ---- the drivers --------------------------------------------------------------

ALL_DRIVERS = ["drivers/perf/**/*.c", "drivers/perf/**/*.h", "arch/x86/events/**/*.c", "arch/x86/events/**/*.h",
               "include/linux/perf/*.h"]


def driver_globs(pmu, arm):
    """The driver sources that create a PMU of this name (x86 or Arm machine)."""
    m = re.match(r"hisi_s[cl]cl\d+_(h60)?([a-z]+?)\d+(_\d+)?$", pmu)
    if m:
        return ["drivers/perf/hisilicon/hisi_uncore_%s_pmu.c" % m.group(2), "drivers/perf/hisilicon/hisi_uncore_pmu.*"]
    table = [
        (r"arm_cmn", ["drivers/perf/arm-cmn.c"]),
        (r"armv8_", ["drivers/perf/arm_pmuv3.c", "include/linux/perf/arm_pmuv3.h"]),
        (r"arm_dmc620", ["drivers/perf/arm_dmc620_pmu.c"]),
        (r"nvidia_", ["drivers/perf/arm_cspmu/*"]),
        (r"amd_", ["arch/x86/events/amd/*"]),
        (r"cxl_pmu_mem", ["drivers/perf/cxl_pmu.c"]),
        (r"msr$", ["arch/x86/events/msr.c"]),
        (r"power$", ["arch/x86/events/rapl.c"]),
        (r"cpu$", ["arch/x86/events/core.c", "arch/x86/events/intel/core.c", "arch/x86/events/amd/core.c",
                   "arch/x86/events/perf_event.h"]),
    ]
    for pattern, globs_ in table:
        if re.match(pattern, pmu):
            return globs_
    if pmu.startswith("uncore"):
        return ["drivers/perf/thunderx2_pmu.c"] if arm else ["arch/x86/events/intel/uncore*"]
    return ALL_DRIVERS


def driver_files(src, globs_=None):
    files = []
    for p in globs_ or ALL_DRIVERS:
        files += glob.glob(os.path.join(src, p), recursive=True)
    return tuple(sorted(set(files)))


def _mask_text(word, hi, lo):
    return "%s:%d" % (word, lo) if hi == lo else "%s:%d-%d" % (word, lo, hi)


_cache = {}


def pci_vendor_id(src, name):
    """A PCI vendor id of include/linux/pci_ids.h (PCI_VENDOR_ID_CXL 0x1e98)."""
    text = open(os.path.join(src, "include/linux/pci_ids.h"), errors="replace").read()
    return int(re.search(r"#define\s+%s\s+(0x[0-9A-Fa-f]+)" % name, text).group(1), 16)


def driver_formats(src, globs_=None):
    """(field name, format text) pairs the drivers create, e.g. ('umask', 'config:8-15,32-55')."""
    files = driver_files(src, globs_)
    if ("formats", files) in _cache:
        return _cache[("formats", files)]
    pairs = _cache[("formats", files)] = {}
    for path in files:
        text = open(path, errors="replace").read()
        rel = os.path.relpath(path, src)
        # FOO_FORMAT_ATTR(var, name, "config:0-7") / PMU_FORMAT_ATTR(name, "config:0-7")
        for m in re.finditer(r"\w*FORMAT_ATTR\w*\s*\(([^;]*?)\"(config[123]?:[0-9,\-]+)\"\s*\)", text):
            idents = re.findall(r"[A-Za-z_]\w*", m.group(1))
            if idents:
                pairs.setdefault((idents[-1], m.group(2)), rel)
        # PMU_EVENT_ATTR_STRING(name, var, "config:16"): a format file some drivers (AMD IBS's
        # l3missonly) make with the event attribute macro and list in a "format" group
        for m in re.finditer(r"PMU_EVENT_ATTR_STRING\s*\(\s*(\w+)\s*,\s*\w+\s*,\s*\"(config[123]?:[0-9,\-]+)\"\s*\)", text):
            pairs.setdefault((m.group(1), m.group(2)), rel)
        # GEN_PMU_FORMAT_ATTR(name) with ATTR_CFG_FLD_name_CFG/_LO/_HI (arm_pmuv3, arm_dmc620...)
        defs = dict(re.findall(r"#define\s+(ATTR_CFG_FLD_\w+)\s+(\w+)", text))
        for name in re.findall(r"GEN_PMU_FORMAT_ATTR\s*\(\s*(\w+)\s*\)", text):
            cfg, lo, hi = (defs.get("ATTR_CFG_FLD_%s_%s" % (name, k)) for k in ("CFG", "LO", "HI"))
            if cfg and lo and hi:
                pairs.setdefault((name, _mask_text(cfg, int(hi, 0), int(lo, 0))), rel)
        # CMN_FORMAT_ATTR(name, CMN_CONFIG[12]_X) with GENMASK_ULL(hi, lo) / BIT_ULL(n)
        masks = {}
        for name, hi, lo in re.findall(r"#define\s+(\w+)\s+GENMASK_ULL\(\s*(\d+)\s*,\s*(\d+)\s*\)", text):
            masks[name] = (int(hi), int(lo))
        for name, bit in re.findall(r"#define\s+(\w+)\s+BIT_ULL\(\s*(\d+)\s*\)", text):
            masks[name] = (int(bit), int(bit))
        for m in re.finditer(r"_?CMN_FORMAT_ATTR\s*\(\s*(\w+)\s*,\s*(?:(\d)\s*,\s*)?(\w+)\s*\)", text):
            fld = m.group(3)
            if fld in masks:
                word = re.match(r"CMN_CONFIG(\d?)_", fld)
                cfg = "config" + (word.group(1) if word and word.group(1) else "")
                pairs.setdefault((m.group(1), _mask_text(cfg, *masks[fld])), rel)
    for fact in after_612().get("formats", []):
        if any(re.search(fact["driver"] + "$", f) for f in files):
            pairs.setdefault((fact["field"], fact["text"]), fact["source"])
    return pairs


def driver_aliases(src, globs_=None):
    """Event alias name -> [(value: terms text, code or None, driver file)] as the drivers define them."""
    files = driver_files(src, globs_)
    if ("aliases", files) in _cache:
        return _cache[("aliases", files)]
    aliases = _cache[("aliases", files)] = {}
    consts = {}
    for path in files:
        text = open(path, errors="replace").read()
        for name, code in re.findall(r"#define\s+(\w+)\s+(0x[0-9A-Fa-f]+|\d+)\b", text):
            consts[name] = int(code, 0)

    def add(name, value, rel):
        aliases.setdefault(name, []).append((value, rel))

    for path in files:
        text = open(path, errors="replace").read()
        rel = os.path.relpath(path, src)
        # NAME(name, "terms") : Intel uncore, msr, rapl...
        for m in re.finditer(r"(\w*EVENT\w*)\s*\(\s*([\w-]+)\s*,\s*(?:\w+\s*,\s*)?\"([^\"]*)\"\s*\)", text):
            add(m.group(2), m.group(3), rel)
        # NAME(name, 0x84) or NAME(name, CONSTANT): HiSilicon, ThunderX2, Arm PMUv3, DMC-620...
        for m in re.finditer(r"(\w*EVENT\w*ATTR\w*)\s*\(\s*([\w-]+)\s*,\s*(0x[0-9A-Fa-f]+|\d+|[A-Z]\w*)\s*\)", text):
            v = m.group(3)
            add(m.group(2), int(v, 0) if v[0].isdigit() else consts.get(v), rel)
        # CXL_PMU_EVENT_CXL_ATTR(name, CXL_PMU_GID_X, BIT(n)): config = PCI_VENDOR_ID_CXL << 48 | gid << 32 | mask
        for name, gid, bit in re.findall(r"CXL_PMU_EVENT_CXL_ATTR\s*\(\s*(\w+)\s*,\s*(\w+)\s*,\s*BIT\((\d+)\)\s*\)",
                                         text):
            vid = pci_vendor_id(src, "PCI_VENDOR_ID_CXL")
            add(name, vid << 48 | consts[gid] << 32 | 1 << int(bit), rel)
        # DMC620_PMU_EVENT_ATTR(name, eventid, clkdiv2)
        for name, code in re.findall(r"\w*EVENT_ATTR\s*\(\s*(\w+)\s*,\s*(0x[0-9A-Fa-f]+)\s*,\s*\d+\s*\)", text):
            add(name, None, rel)
        # CMN_EVENT_<TYPE>(model, name, code): alias <type>_<name>; CMN_EVENT_DTC(name): dtc_<name>
        for kind, name, code in re.findall(
                r"CMN_EVENT_([A-Z0-9]+)\s*\(\s*(?:[A-Z_0-9]+\s*,\s*)?(\w+)\s*,\s*(0x[0-9a-fA-F]+)\s*\)", text):
            add("%s_%s" % (kind.lower(), name), int(code, 16), rel)
        for name in re.findall(r"CMN_EVENT_DTC\s*\(\s*(\w+)\s*\)", text):
            add("dtc_" + name, None, rel)
        # CMN_EVENT_HNF_OCC(model, name, code) and the like: one alias per filter value
        suffixes = {"OCC": ["_all", "_read", "_write", "_atomic", "_stash"],
                    "HBT": ["_all", "_hbt", "_lbt"], "SNH": ["_all", "_sn", "_home"],
                    "CLS": ["_class0", "_class1", "_class2", "_class3"],
                    "SNT": ["_all", "_group0_read", "_group0_write", "_group1_read", "_group1_write", "_read",
                            "_write"]}
        for kind, group, name, code in re.findall(
                r"CMN_EVENT_([A-Z]+)_(OCC|CLS|SNT|HBT|SNH)\s*\(\s*(?:[A-Z_0-9]+\s*,\s*)?(\w+)\s*,\s*(0x[0-9a-fA-F]+)\s*\)",
                text):
            for suffix in suffixes[group]:
                add("%s_%s%s" % (kind.lower(), name, suffix), int(code, 16), rel)
        for name in re.findall(r"\bCMN_EVENT_ATTR\s*\(\s*\w+\s*,\s*(\w+)\s*,", text):
            add(name, None, rel)
    for fact in after_612().get("aliases", []):
        if any(re.search(fact["driver"] + "$", f) for f in files):
            add(fact["name"], fact.get("code"), fact["source"])
    return aliases


def after_612():
    """Facts from kernels newer than linux-source-6.12 (tests/upstream/after-6.12.yaml), each with its source."""
    if "after" not in _cache:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "after-6.12.yaml")) as f:
            _cache["after"] = yaml.safe_load(f) or {}
    return _cache["after"]


def fixture_is_arm(machine):
    return os.path.exists(os.path.join(FIXTURES, machine, "sys", "devices", "system", "cpu", "cpu0", "regs"))


def fixture_pmus():
    """(machine, pmu name, {format: text}, {alias: text}) for every fixture PMU."""
    out = []
    for machine in sorted(os.listdir(FIXTURES)):
        devices = os.path.join(FIXTURES, machine, "sys", "bus", "event_source", "devices")
        if not os.path.isdir(devices):
            continue
        for pmu in sorted(os.listdir(devices)):
            d = os.path.join(devices, pmu)
            fmts, events = {}, {}
            for name in sorted(os.listdir(os.path.join(d, "format"))) if os.path.isdir(os.path.join(d, "format")) else []:
                fmts[name] = open(os.path.join(d, "format", name)).read().strip()
            for name in sorted(os.listdir(os.path.join(d, "events"))) if os.path.isdir(os.path.join(d, "events")) else []:
                if "." not in name:
                    events[name] = open(os.path.join(d, "events", name)).read().strip()
            out.append((machine, pmu, fmts, events))
    return out
