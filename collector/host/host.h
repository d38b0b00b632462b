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
};

/* Refuses a procfs tree whose CPU contradicts the sysfs tree's PMUs. */
int host_load(struct host *host, struct ms_error *err);
void host_free(struct host *host);

#endif
