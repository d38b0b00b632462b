#include "events/event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/pmu.h"

void event_pmu_outside_why(const struct pmu *pmu, struct ms_error *err)
{
	char mask[256];

	cpulist_format(&pmu->cpumask, mask, sizeof(mask));
	ms_error_set(err, "%s counts through CPU %s (its cpumask: an uncore PMU counts its whole socket or die "
		     "there), which -C leaves out: add one of them to -C, or count without -C", pmu->name, mask);
}

int event_bind_pmu(struct event *ev, const struct pmu *pmu, struct ms_error *err)
{
	ev->system_wide_only = pmu->has_cpumask;
	cpulist_free(&ev->cpus);
	if (pmu->outside_cpu_list) {
		event_pmu_outside_why(pmu, err);
		return -1;
	}
	if (!pmu->has_cpumask || pmu->cpumask.nr == 0)
		return 0;
	ev->cpus.cpus = malloc(sizeof(int) * (size_t)pmu->cpumask.nr);
	if (!ev->cpus.cpus) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	memcpy(ev->cpus.cpus, pmu->cpumask.cpus, sizeof(int) * (size_t)pmu->cpumask.nr);
	ev->cpus.nr = pmu->cpumask.nr;
	return 0;
}

void event_free(struct event *ev)
{
	free(ev->name);
	free(ev->pmu_name);
	cpulist_free(&ev->cpus);
	ev->name = ev->pmu_name = NULL;
}

void event_list_free(struct event *events, int nr)
{
	for (int i = 0; i < nr; i++)
		event_free(&events[i]);
	free(events);
}
