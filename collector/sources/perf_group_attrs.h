/* What a counting group opens: its members' order.
 *
 * Intel's PERF_METRICS (Ice Lake and later): the kernel accepts a topdown
 * metric event (event 0x00, umask 0x80-0x87: topdown-retiring ... topdown-
 * mem-bound) only in a group led by the slots event (event 0x00, umask
 * 0x04) of the core PMU (arch/x86/events/intel/core.c, intel_pmu_hw_config).
 * A group holding slots therefore opens slots first, then the metric
 * events, then the rest in their order: perf's arch_evlist__cmp
 * (tools/perf/arch/x86/util/evlist.c). Any other group keeps its order. */
#ifndef MEMSCOPE_PERF_GROUP_ATTRS_H
#define MEMSCOPE_PERF_GROUP_ATTRS_H

#include <stdbool.h>

#include "events/event.h"

/* Is ev the core PMU's slots event / one of its PERF_METRICS events? */
bool perf_event_is_topdown_slots(const struct event *ev);
bool perf_event_is_topdown_metric(const struct event *ev);

/* Reorder members (indices into events) in place, as above. */
void perf_group_order(const struct event *events, int *members, int nr);

#endif
