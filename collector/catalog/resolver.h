/* Which catalog metrics this host can measure, through which raw events on
 * which PMU instances, and - for the others - why not.
 *
 * A family is active when the CPU is one it is for (or the family names no
 * CPU) and at least one of its PMU roles has instances in sysfs. Instances are
 * found by each role's regex over the PMU names, never from lists. For each
 * base metric the active families are tried by priority and each family's
 * mappings in order: the first whose every event can be encoded on every
 * instance wins. Derived metrics are available when their inputs are. */
#ifndef MEMSCOPE_RESOLVER_H
#define MEMSCOPE_RESOLVER_H

#include <stdbool.h>

#include "catalog/catalog.h"
#include "host/cpu_identity.h"
#include "host/cpulist.h"
#include "util/error.h"
#include "host/host.h"

bool catalog_cpu_matches(const struct catalog_family *family, const struct cpu_identity *id);

struct resolved_instance {
	const struct pmu *pmu;     /* NULL for procfs, bpf and plugin roles */
	char name[64];             /* PMU name, "vmstat" / "numastat" for procfs, "bpf" for the eBPF probes, the plugin's name */
	struct cpulist cpus;       /* CPUs counted on (cpumask; every online CPU for core PMUs) */
	bool no_cpumask;           /* an uncore PMU whose sysfs directory has no cpumask: one CPU */
	int memory_node;           /* role with memory_node: the node its counts belong to, -2 none; else -1 */
	char memory_node_why[256]; /* why a role with memory_node found none (its counts are on no node) */
};

struct resolved_role {
	struct resolved_instance *inst;
	int nr_inst;
	int counters;              /* counters per instance: from CPUID where the role says so, else the catalog's */
	bool counters_from_cpuid;
	char why[256];             /* when nr_inst == 0 */
};

struct resolved_family {
	const struct catalog_family *family;
	bool cpu_match;            /* the family is for this CPU (or for any) */
	bool active;
	struct resolved_role *roles;   /* family->nr_roles entries */
};

struct resolved_metric {
	int metric;                /* index in catalog->metrics */
	bool available;
	int family;                /* index in resolution->families, -1 for derived or none */
	int mapping;               /* chosen mapping in that family's metric entry */
	const struct catalog_family_metric *fm;
	/* A mapping marked adds of another family, added to the chosen one where it
	 * has counters (CXL devices' bytes on their nodes); add_family -1: none. */
	int add_family, add_mapping;
	const struct catalog_family_metric *add_fm;
	char why[512];             /* unavailable: one line, the family for this CPU and what it lacks */
	/* Unavailable only for want of a catalog family for this CPU that maps it
	 * (or, for a derived metric, its first missing input). */
	bool no_family;
	char detail[2048];         /* unavailable: every family's reason; available: skipped fallbacks */
};

struct resolution {
	const struct catalog *cat;
	const struct host *host;
	struct cpu_identity cpu;
	struct resolved_family *families;   /* catalog order */
	int nr_families;
	struct resolved_metric *metrics;    /* catalog metric order */
	int nr_metrics;
};

int resolve(const struct host *host, const struct catalog *cat, struct resolution **out, struct ms_error *err);
void resolution_free(struct resolution *res);

/* Event string for an event of a role on an instance ("pmu/terms/", a perf
 * name, "vmstat/KEY" / "numastat/KEY", or an eBPF series "proc.NAME"). */
void resolved_event_text(const struct catalog_role *role, const struct catalog_event *ev,
			 const struct resolved_instance *inst, char *buf, size_t size);

#endif
