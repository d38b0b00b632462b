/* What memscope knows about the machine it measures: where sysfs is, the
 * topology and the PMUs. Loaded once per command and passed down; nothing
 * below reads these from globals. */
#ifndef MEMSCOPE_HOST_H
#define MEMSCOPE_HOST_H

#include "util/error.h"
#include "host/cpu_identity.h"
#include "host/pmu.h"
#include "host/sysfs.h"
#include "host/topology.h"

struct host {
	struct sysfs_roots roots;
	struct topology topo;
	struct pmu_set pmus;
	struct cpu_identity cpu;
	bool cpus_restricted;    /* host_restrict_cpus: stat -C left some CPUs out */
};

/* Refuses a procfs tree whose CPU contradicts the sysfs tree's PMUs. */
int host_load(struct host *host, struct ms_error *err);
void host_free(struct host *host);

/* stat -C LIST: count only on these CPUs. The topology keeps only them, and
 * each uncore PMU's cpumask only those of them it names (perf's rule: an
 * uncore event is opened on its cpumask CPUs); a PMU left without any is
 * marked outside_cpu_list. -1 with err (naming option, list and the online
 * CPUs) when list is malformed, empty or names a CPU that is not online. */
int host_restrict_cpus(struct host *host, const char *option, const char *list, struct ms_error *err);

#endif
