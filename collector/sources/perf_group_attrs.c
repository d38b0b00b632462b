/* What a counting group opens (perf_group_attrs.h). */
#include "sources/perf_group_attrs.h"

#include <string.h>

#define TD_EVENT_MASK 0xffffull     /* the kernel's INTEL_ARCH_EVENT_MASK: umask and event select */
#define TD_SLOTS 0x0400ull
#define TD_METRIC_FIRST 0x8000ull   /* topdown-retiring */
#define TD_METRIC_LAST 0x8700ull    /* topdown-mem-bound: the kernel's INTEL_TD_METRIC_MAX */

/* The core PMU: "cpu", or "cpu_core" on a hybrid part. */
static bool core_pmu(const struct event *ev)
{
	return ev->pmu_name && (!strcmp(ev->pmu_name, "cpu") || !strcmp(ev->pmu_name, "cpu_core"));
}

bool perf_event_is_topdown_slots(const struct event *ev)
{
	return core_pmu(ev) && (ev->attr.config & TD_EVENT_MASK) == TD_SLOTS;
}

bool perf_event_is_topdown_metric(const struct event *ev)
{
	unsigned long long code = ev->attr.config & TD_EVENT_MASK;

	return core_pmu(ev) && (ev->attr.config & 0xff) == 0 && code >= TD_METRIC_FIRST && code <= TD_METRIC_LAST;
}

static int rank(const struct event *ev)
{
	return perf_event_is_topdown_slots(ev) ? 0 : perf_event_is_topdown_metric(ev) ? 1 : 2;
}

void perf_group_order(const struct event *events, int *members, int nr)
{
	bool has_slots = false;

	for (int i = 0; i < nr; i++)
		has_slots |= perf_event_is_topdown_slots(&events[members[i]]);
	if (!has_slots)
		return;
	/* Insertion sort by rank: stable, so each rank keeps its order. */
	for (int i = 1; i < nr; i++)
		for (int j = i; j > 0 && rank(&events[members[j - 1]]) > rank(&events[members[j]]); j--) {
			int t = members[j];

			members[j] = members[j - 1];
			members[j - 1] = t;
		}
}

void perf_member_attr(const struct event *ev, bool leader, const struct perf_open_mode *mode,
		      struct perf_event_attr *attr)
{
	*attr = ev->attr;
	attr->size = sizeof(*attr);
	attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = leader;
	if (mode->user_only && !mode->system_wide)
		attr->exclude_kernel = attr->exclude_hv = 1;
	if (!mode->system_wide) {
		/* Threads and children the target creates later are counted too. */
		attr->inherit = 1;
		attr->enable_on_exec = leader && mode->enable_on_exec;
	}
}
