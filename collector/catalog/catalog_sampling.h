/* The `sampling:` section of a PMU family: which perf events sample memory
 * accesses with their data addresses on that hardware (Intel PEBS load
 * latency and precise stores, AMD IBS op, Arm SPE, and the kernel's page
 * faults everywhere), how their samples are decoded, and where those facts
 * come from. `record --sample mem` takes the first entry this host can open,
 * in family priority order; `list --explain sample.mem` says which and why.
 *
 *   sampling:
 *     mem:                                    # the name after "sample."
 *       - events: [ "cpu/mem-loads,ldlat=30/P", "cpu/mem-stores/P" ]
 *         pmu: '^cpu$'                        # a PMU that must exist (regex); {pmu} in events is its name
 *         requires_events: [mem-loads, mem-stores]   # sysfs aliases it must have
 *         requires_formats: [ldlat]           # format fields it must have
 *         decode: data-src                    # data-src | amd-ibs-op | arm-spe | page-fault
 *         description: ...
 *         source: "..."                       # required: kernel or perf source of the facts
 *         caveat: ...                         # what the samples do not say
 *         collector: unsupported              # memscope cannot read these samples yet (says why in caveat)
 */
#ifndef MEMSCOPE_CATALOG_SAMPLING_H
#define MEMSCOPE_CATALOG_SAMPLING_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

#include "catalog/catalog.h"
#include "catalog/catalog_yaml.h"
#include "catalog/resolver.h"

struct catalog_sampling {
	char *name;               /* "mem" */
	char **events;            /* perf event strings; "{pmu}" stands for the matched PMU's name */
	int nr_events;
	char *pmu;                /* regex over sysfs PMU names */
	regex_t pmu_re;
	bool pmu_compiled;
	char **requires_events;
	int nr_requires_events;
	char **requires_formats;
	int nr_requires_formats;
	char *decode;
	char *description;
	char *source;
	char *caveat;
	bool unsupported;         /* collector: unsupported */
	struct catalog_pos pos;
};

/* Parse a family's `sampling:` value into f (catalog.c calls this). */
int catalog_sampling_parse(struct yaml_file *yf, yaml_node_t *v, struct catalog_family *f);
void catalog_sampling_free(struct catalog_family *f);

#define SAMPLING_EVENTS_MAX 4

/* What `--sample NAME` opens on this host. */
struct sampling_choice {
	const struct catalog_family *family;
	const struct catalog_sampling *entry;
	char events[SAMPLING_EVENTS_MAX][256];   /* with {pmu} filled in */
	int nr_events;
	bool named;               /* some catalog family names it (set when none can be used, too) */
};

/* Choose for name ("mem") on the resolved host. -1 with err when no family
 * names it or none can be used here (err says why for each). */
int sampling_choose(const struct resolution *res, const char *name, struct sampling_choice *out, struct ms_error *err);
/* `memscope list --explain sample.NAME`: the choice and every candidate with
 * why it was or was not taken, each fact with its source. */
int sampling_explain(const struct resolution *res, const char *name, FILE *out, struct ms_error *err);

#endif
