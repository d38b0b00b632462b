/* One event as the user named it, resolved to a perf_event_attr.
 *
 * Accepted everywhere an event is named:
 *   page-faults, minor-faults, ... perf's generic software names
 *   pmu/alias/                     sysfs alias, e.g. hisi_sccl1_ddrc0/flux_rd/
 *   pmu/field=val,.../             encoded through the PMU's format bits
 *   pmu/config=0x.../              raw words (config, config1, config2)
 *   subsys:name                    tracepoint (id from tracefs)
 *   pmu::EVENT:UMASK               libpfm4 name
 *   msr/tsc/                       any sysfs PMU alias, software or hardware
 */
#ifndef MEMSCOPE_EVENT_H
#define MEMSCOPE_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/cpulist.h"
#include "util/error.h"

struct host;

enum event_origin {
	EVENT_GENERIC,      /* perf generic name (software events) */
	EVENT_SYSFS,        /* pmu/.../ terms or alias */
	EVENT_TRACEPOINT,   /* subsys:name */
	EVENT_LIBPFM,       /* pmu::EVENT:UMASK */
};

struct event {
	char *name;                  /* as written by the user, the display name */
	char *pmu_name;              /* the sysfs PMU that will count it */
	enum event_origin origin;
	struct perf_event_attr attr;
	double scale;                /* multiply counts by this (sysfs .scale), 1.0 by default */
	char unit[32];               /* sysfs .unit, "" by default */
	bool system_wide_only;       /* uncore: opened with pid -1 on cpus below, no exclude bits */
	uint64_t pfm_code;           /* libpfm4's raw register code, when origin is EVENT_LIBPFM uncore */
	bool has_pfm_code;
	struct cpulist cpus;         /* the PMU's cpumask CPUs; empty = any CPU */
	int group_hint;              /* events with the same hint >= 0 share a perf group (a metric's events) */
	int memory_node;             /* the node its counts belong to when not its CPU's (plan_event), -1 the CPU's, -2 none */
};

/* Parse one event string. Unknown names give an error with the closest
 * known names suggested. */
int event_parse(const struct host *host, const char *text, struct event *ev, struct ms_error *err);

/* Parse a comma-separated list ("a,pmu/x=1,y=2/,b", util/name_list.h) into
 * events, each name once. On error *events is freed and NULL. */
int event_list_parse(const struct host *host, const char *text, struct event **events, int *nr,
		     struct ms_error *err);

/* Take the PMU's placement rules: uncore PMUs (with a cpumask) count
 * system-wide on the cpumask CPUs only. -1 with err when out of memory, or
 * when stat -C left out every CPU of the PMU's cpumask. */
struct pmu;
int event_bind_pmu(struct event *ev, const struct pmu *pmu, struct ms_error *err);
/* Why a PMU that -C left out is not counted, for messages. */
void event_pmu_outside_why(const struct pmu *pmu, struct ms_error *err);

/* Free an array of nr names (malloc'd each). */
void event_names_free(char **names, int nr);

void event_free(struct event *ev);
void event_list_free(struct event *events, int nr);

#endif
