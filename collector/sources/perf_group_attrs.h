/* What a counting group opens: its members' order and each one's
 * perf_event_attr.
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

#include <linux/perf_event.h>
#include <stdbool.h>

#include "events/event.h"

/* How the group is counted. */
struct perf_open_mode {
	bool system_wide;        /* on its CPUs, every task (pid -1) */
	bool user_only;          /* user space only (an unprivileged task count) */
	bool enable_on_exec;     /* a command started by memscope begins counting at its exec */
};

/* The attr of a group member (the leader first), as perf stat makes it
 * (tools/perf/util/stat.c, create_perf_stat_counter): counting, never
 * sampling (sample_period 0); the leader disabled until the group is
 * enabled (or at the command's exec); read_format time enabled and running
 * (the multiplexing scale), with ID and GROUP so one read gives the whole
 * group. Two differences: GROUP and ID also for a group of one, and
 * inherit only for a task's counters (a CPU-wide counter has no child tasks
 * to inherit it; perf sets it on every counter). */
void perf_member_attr(const struct event *ev, bool leader, const struct perf_open_mode *mode,
		      struct perf_event_attr *attr);

/* Is ev the core PMU's slots event / one of its PERF_METRICS events? */
bool perf_event_is_topdown_slots(const struct event *ev);
bool perf_event_is_topdown_metric(const struct event *ev);

/* Reorder members (indices into events) in place, as above. */
void perf_group_order(const struct event *events, int *members, int nr);

#endif
