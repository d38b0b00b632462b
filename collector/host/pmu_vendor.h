/* What is known about a PMU by its name and vendor: which CPU maker's kernels
 * create it, and the name libpfm4 gives it. The facts are the catalog's (the
 * per-role keys maker: and libpfm4: of catalog/pmu/FAMILY.yaml, docs/catalog.md);
 * host/ and events/ come before the catalog in the pipeline, so the catalog
 * fills this table and the command layer hands its loader to host_load. */
#ifndef MEMSCOPE_PMU_VENDOR_H
#define MEMSCOPE_PMU_VENDOR_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* PMUs named like match are created by the kernels of these CPU makers
 * (cpuinfo vendor_id, or "Arm" for any Arm CPU). */
struct pmu_vendor_maker {
	const regex_t *match;
	char *const *makers;
	int nr_makers;
};

/* libpfm4 calls a kernel PMU by another name: a libpfm4 PMU name matching pfm
 * is the kernel's kernel, with \1..\9 replaced by pfm's groups. */
struct pmu_vendor_pfm_name {
	const regex_t *pfm;
	const char *kernel;
};

/* The rows point into the loaded catalog, which outlives every host. */
struct pmu_vendors {
	struct pmu_vendor_maker *makers;
	int nr_makers;
	struct pmu_vendor_pfm_name *pfm_names;   /* first match wins */
	int nr_pfm_names;
};

/* The makers whose kernels create PMU name, NULL when no catalog role says. */
const struct pmu_vendor_maker *pmu_vendor_maker_of(const struct pmu_vendors *v, const char *name);
bool pmu_vendor_made_by(const struct pmu_vendor_maker *m, const char *maker);
/* The kernel's name of libpfm4's PMU pfm_name into buf; false if no rule names it. */
bool pmu_vendor_kernel_name(const struct pmu_vendors *v, const char *pfm_name, char *buf, size_t size);
/* "\1"-style template substitution of a regexec match: false if buf is too small. */
bool pmu_vendor_substitute(const char *tmpl, const char *subject, const regmatch_t *groups, size_t nr_groups,
			   char *buf, size_t size);
void pmu_vendors_free(struct pmu_vendors *v);

/* The table, loaded on first use by the loader the command layer set (once,
 * before host_load): NULL when none is set or the catalog cannot say (no
 * vendor facts then; the command that reads the catalog reports why). */
typedef const struct pmu_vendors *(*pmu_vendors_loader)(struct ms_error *err);
void pmu_vendors_set_loader(pmu_vendors_loader load);
const struct pmu_vendors *pmu_vendors_load(void);

#endif
