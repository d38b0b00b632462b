/* The event catalog: the portable metric vocabulary (catalog/metrics.yaml)
 * and one file per PMU family (catalog/pmu/FAMILY.yaml) saying how to detect the
 * family, find its PMU instances, which events they have and how each
 * portable metric is computed from them. The format is documented in
 * docs/catalog.md. Loading validates everything: a bad file is an error naming
 * file:line:column and what was expected, never a crash or a dropped metric. */
#ifndef MEMSCOPE_CATALOG_H
#define MEMSCOPE_CATALOG_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "catalog/catalog_expr.h"
#include "util/error.h"

/* Where something was written: file is owned by the catalog. line/column are 1-based. */
struct catalog_pos {
	const char *file;
	int line;
	int column;
};

enum metric_kind { METRIC_COUNTER, METRIC_GAUGE, METRIC_RATIO };

struct catalog_sampling;

struct catalog_vendor_note {
	char *vendor;   /* "hisilicon", "amd", "intel", "arm", "thunderx2", "linux" */
	char *text;
};

/* One portable metric. Base metrics are mapped by PMU families; derived
 * metrics (formula set) are computed from other metrics, identically everywhere. */
struct catalog_metric {
	char *name;               /* "mem.read_bytes" */
	char *formerly;           /* its old name, still accepted (catalog_metric_index), or NULL */
	char *plugin;             /* the plugin whose family maps it ("resctrl"), or NULL */
	char *unit;               /* "B", "B/s", "requests", "" for ratios */
	double perf_scale;        /* scale_unit: "100%" -> 100 (perf's ScaleUnit); 0 when none */
	char *perf_unit;          /* ... and "%": how stat's perf shapes print it; NULL when none */
	enum metric_kind kind;
	char *description;
	char *formula_text;       /* derived metrics only */
	struct expr *formula;     /* refs bound to metric indices (slot), or -1 for `seconds` */
	struct catalog_vendor_note *vendors;
	int nr_vendors;
	char **groups;            /* metric groups (groups: [TopdownL1, memory]) */
	int nr_groups;
	struct catalog_pos pos;
};

enum catalog_event_how {
	EVENT_HOW_CONFIG,   /* PMU format terms, opened on every instance: "<pmu>/<terms>/" */
	EVENT_HOW_PERF,     /* a complete perf event string (generic software name) */
	EVENT_HOW_PROCFS,   /* a kernel statistic: "vmstat/<key>" or "numastat/<key>" */
	EVENT_HOW_BPF,      /* a series of memscope's eBPF probes: "proc.<name>" (sources/bpf_source.h) */
	EVENT_HOW_PLUGIN,   /* a series a loaded plugin serves: "resctrl.mbm_total_bytes" (docs/plugins.md) */
	EVENT_HOW_DAMON,    /* a series of the damon source: "damon.<name>" (docs/damon.md) */
};

struct catalog_event {
	char *name;               /* "flux_rd" */
	enum catalog_event_how how;
	char *text;               /* terms, perf string, procfs key, eBPF or plugin series name */
	char *alias;              /* sysfs alias of the same event, optional */
	char *pfm;                /* libpfm4 name of the same event, optional */
	char *description;
	char *upstream_differs;   /* why the encoding differs from perf's tables, optional (tests/upstream) */
	bool fixed;               /* counted on a fixed counter: takes none of the role's `counters` */
	struct catalog_pos pos;
};

/* libpfm4's name for a kernel PMU (`libpfm4:` of a role or a family): a
 * libpfm4 PMU name matching pfm is the kernel's `kernel`, \1..\9 standing for
 * pfm's groups ("^skx_unc_imc([0-9]+)$" -> "uncore_imc_\1"). */
struct catalog_pfm_name {
	char *pfm;
	regex_t pfm_re;
	bool compiled;
	char *kernel;
	struct catalog_pos pos;
};

enum catalog_role_source { ROLE_PERF, ROLE_PROCFS, ROLE_BPF, ROLE_PLUGIN, ROLE_DAMON };

/* One kind of PMU within a family, e.g. HiSilicon DDRC v1. */
struct catalog_role {
	char *name;               /* "ddrc": formulas name events as ddrc.flux_rd */
	enum catalog_role_source source;
	char *match;              /* POSIX extended regex over sysfs PMU names */
	regex_t match_re;
	bool match_compiled;
	char **requires_formats;  /* format fields an instance must have */
	int nr_requires_formats;
	char **rejects_formats;   /* format fields an instance must not have */
	int nr_rejects_formats;
	char *scope;              /* cpu, ccx, channel, die, sccl, node, socket, system; instance (plugins) */
	int counters;             /* programmable counters per instance (0 = unknown) */
	int width;                /* counter width in bits (0 = unknown) */
	/* Counters per instance as CPUID tells them ("0x80000022 ebx 10-15"), when only
	 * CPUID knows (AMD's data fabric: 4 or 16 by part); counters is the fallback. */
	char *counters_cpuid;
	/* "cxl_memdev": an instance's counts belong to the NUMA node of the memory
	 * its CXL memory device backs, not to the node of the CPU it is read on
	 * (host/cxl_node.h); NULL: the CPU's node. */
	char *memory_node;
	unsigned cpuid_leaf;
	int cpuid_reg;            /* 0 eax, 1 ebx, 2 ecx, 3 edx */
	int cpuid_lo, cpuid_hi;
	char *description;
	/* Vendor facts (catalog_vendor.c): the kernel module that creates these
	 * PMUs, the CPU makers whose kernels do (cpuinfo vendor_id, "Arm" for any
	 * Arm CPU), libpfm4's names for them. All optional. */
	char *driver;
	char **makers;
	int nr_makers;
	struct catalog_pfm_name *pfm_names;
	int nr_pfm_names;
	struct catalog_event *events;
	int nr_events;
	struct catalog_pos pos;
};

enum mapping_fidelity { FIDELITY_EXACT, FIDELITY_APPROXIMATE, FIDELITY_PROXY };

/* One way to compute a metric from a family's events. Formula refs are
 * role.event, bound to (role index << 16 | event index) in slot, or -1 for `seconds`. */
struct catalog_mapping {
	char *formula_text;
	struct expr *formula;
	char *source;             /* where the mapping comes from (required) */
	char *caveat;
	char *upstream_differs;   /* why the scale differs from perf's metric, optional (tests/upstream) */
	enum mapping_fidelity fidelity;
	bool adds;                /* added to another family's mapping of the metric, never chosen alone */
	struct catalog_pos pos;
};

/* A metric's mappings in one family, in order of preference (fallbacks). */
struct catalog_family_metric {
	int metric;               /* index in catalog->metrics */
	struct catalog_mapping *mappings;
	int nr_mappings;
	struct catalog_pos pos;
};

/* One kind of CPU a family is for: every field given must match. */
struct catalog_cpu_match {
	char *vendor;             /* cpuinfo vendor_id ("GenuineIntel", "AuthenticAMD"), or NULL */
	int (*families)[2];       /* x86 "cpu family" ranges [lo, hi]; empty = any */
	int nr_families;
	int (*models)[2];         /* x86 model ranges; empty = any */
	int nr_models;
	int (*implementers)[2];   /* Arm MIDR implementer ranges; empty = any */
	int nr_implementers;
	int (*parts)[2];          /* Arm MIDR part number ranges; empty = any */
	int nr_parts;
	struct catalog_pos pos;
};

/* A metric this family cannot provide, and why (shown by list --explain). */
struct catalog_unavailable {
	int metric;
	char *reason;
};

/* A family's priority: 0 is tried first; the default is 50. */
#define CATALOG_PRIORITY_MIN 0
#define CATALOG_PRIORITY_MAX 1000

struct catalog_family {
	char *name;               /* "hisi-hip08" */
	char *description;
	char *uncore_since;       /* the kernel that adds this CPU's uncore support, optional */
	char *file;               /* the file it came from */
	char *plugin;             /* the plugin that shipped the file (its series only), else NULL */
	int priority;             /* lower wins when two families map a metric (CATALOG_PRIORITY_MIN..MAX) */
	char **sources;
	int nr_sources;
	struct catalog_cpu_match *cpus;    /* the family is for any of these CPUs; none = any CPU */
	int nr_cpus;
	struct catalog_role *roles;
	int nr_roles;
	struct catalog_family_metric *metrics;
	int nr_metrics;
	struct catalog_unavailable *unavailable;
	int nr_unavailable;
	struct catalog_sampling *sampling;   /* `sampling:` entries (catalog_sampling.h), in file order */
	int nr_sampling;
	/* libpfm4 names of this CPU's PMUs that no role matches (`libpfm4:` at the top). */
	struct catalog_pfm_name *pfm_names;
	int nr_pfm_names;
};

struct catalog {
	char *dir;
	struct catalog_metric *metrics;
	int nr_metrics;
	struct catalog_family *families;   /* sorted by priority, then name */
	int nr_families;
	char **files;                      /* every file read, owned (catalog_pos.file points here) */
	int nr_files;
};

/* Load <dir>/metrics.yaml and every <dir>/pmu/FAMILY.yaml file. */
int catalog_load(struct catalog **out, const char *dir, struct ms_error *err);
/* $MEMSCOPE_CATALOG_DIR, else memscope's data directory's catalog/ (util/data_dir.h);
 * then the family file of each loaded plugin (events/plugin_series.h). */
int catalog_load_default(struct catalog **out, struct ms_error *err);
/* Add the family file a plugin ships to a loaded catalog: its `plugin:`
 * events may name only that plugin's series. -1 with err (file:line:col) when
 * the file is wrong; the catalog is then as it was. */
int catalog_add_plugin_family(struct catalog *cat, const char *path, const char *plugin, struct ms_error *err);
void catalog_free(struct catalog *cat);

int catalog_metric_index(const struct catalog *cat, const char *name);
const char *metric_kind_name(enum metric_kind kind);
const char *mapping_fidelity_name(enum mapping_fidelity f);

/* Slot encoding for family formula references. */
#define CATALOG_SLOT_SECONDS (-2)
/* perf's #SMT_on (more than one online CPU in a core) and #core_wide (the
 * counts cover whole cores: every CPU of each core is counted). */
#define CATALOG_SLOT_SMT_ON (-3)
#define CATALOG_SLOT_CORE_WIDE (-4)
/* A built-in name: no counter behind it. */
static inline bool catalog_slot_builtin(int slot) { return slot <= CATALOG_SLOT_SECONDS && slot >= CATALOG_SLOT_CORE_WIDE; }
/* The built-in a name is, or 0. */
static inline int catalog_builtin_slot(const char *name)
{
	return strcmp(name, "seconds") == 0 ? CATALOG_SLOT_SECONDS : strcmp(name, "smt_on") == 0 ? CATALOG_SLOT_SMT_ON
	       : strcmp(name, "core_wide") == 0 ? CATALOG_SLOT_CORE_WIDE : 0;
}
static inline int catalog_slot(int role, int event) { return role << 16 | event; }
static inline int catalog_slot_role(int slot) { return slot >> 16; }
static inline int catalog_slot_event(int slot) { return slot & 0xffff; }

#endif
