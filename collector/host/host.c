#include "host/host.h"

#include <string.h>

int host_load(struct host *host, struct ms_error *err)
{
	memset(host, 0, sizeof(*host));
	sysfs_roots_from_env(&host->roots);
	if (topology_load(&host->topo, host->roots.sys, err) < 0)
		return -1;
	if (pmu_set_load(&host->pmus, host->roots.sys, err) < 0) {
		topology_free(&host->topo);
		return -1;
	}
	cpu_identity_read(&host->roots, &host->cpu);
	if (cpu_identity_check_pmus(&host->cpu, &host->pmus, &host->roots, err) < 0) {
		host_free(host);
		return -1;
	}
	return 0;
}

void host_free(struct host *host)
{
	pmu_set_free(&host->pmus);
	topology_free(&host->topo);
}
