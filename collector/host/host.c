#include "host/host.h"

#include <stdlib.h>

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
	/* Only a tree can pair one machine's procfs with another's sysfs: this
	 * machine's own need not load the catalog's makers (a catalog load per start). */
	if (host->roots.is_fixture &&
	    cpu_identity_check_pmus(&host->cpu, &host->pmus, pmu_vendors_load(), &host->roots, err) < 0) {
		host_free(host);
		return -1;
	}
	return 0;
}

int host_restrict_cpus(struct host *host, const char *option, const char *list, struct ms_error *err)
{
	struct topology *topo = &host->topo;
	struct cpulist want;
	char online[256];
	int kept = 0;
	struct cpulist all = { NULL, 0 };

	if (!(all.cpus = malloc(sizeof(int) * (size_t)(topo->nr_cpus + 1)))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < topo->nr_cpus; i++)
		all.cpus[all.nr++] = topo->cpus[i].cpu;
	cpulist_format(&all, online, sizeof(online));
	cpulist_free(&all);
	if (cpulist_parse(list, &want) < 0 || want.nr == 0) {
		if (want.cpus)
			cpulist_free(&want);
		ms_error_set(err, "%s '%s': not a CPU list such as 0-3,8 (ascending ranges); this machine's "
			     "online CPUs are %s", option, list, online);
		return -1;
	}
	for (int i = 0; i < want.nr; i++)
		if (!topology_cpu(topo, want.cpus[i])) {
			ms_error_set(err, "%s '%s': CPU %d is not online; this machine's online CPUs are %s", option, list,
				     want.cpus[i], online);
			cpulist_free(&want);
			return -1;
		}
	/* Both lists ascend: keep the places of the CPUs asked for. */
	for (int i = 0, w = 0; i < topo->nr_cpus; i++) {
		while (w < want.nr && want.cpus[w] < topo->cpus[i].cpu)
			w++;
		if (w < want.nr && want.cpus[w] == topo->cpus[i].cpu)
			topo->cpus[kept++] = topo->cpus[i];
	}
	topo->nr_cpus = kept;
	host->cpus_restricted = true;
	for (int p = 0; p < host->pmus.nr; p++) {
		struct pmu *pmu = &host->pmus.pmus[p];
		int n = 0;

		if (!pmu->has_cpumask || pmu->cpumask.nr == 0)
			continue;
		for (int i = 0; i < pmu->cpumask.nr; i++)
			if (topology_cpu(topo, pmu->cpumask.cpus[i]))
				n++;
		if (n == 0) {
			pmu->outside_cpu_list = true;
			continue;
		}
		n = 0;
		for (int i = 0; i < pmu->cpumask.nr; i++)
			if (topology_cpu(topo, pmu->cpumask.cpus[i]))
				pmu->cpumask.cpus[n++] = pmu->cpumask.cpus[i];
		pmu->cpumask.nr = n;
	}
	cpulist_free(&want);
	return 0;
}

void host_free(struct host *host)
{
	pmu_set_free(&host->pmus);
	topology_free(&host->topo);
}
