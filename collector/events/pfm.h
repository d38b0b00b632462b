/* libpfm4 names ("pmu::EVENT:UMASK") turned into perf_event_attr.
 *
 * Core PMUs go through libpfm4's perf encoding. Uncore PMUs cannot (libpfm4
 * answers "not supported" for them), so their raw register code is taken and
 * placed in config/config1 through the kernel PMU's sysfs format, with the
 * perf type read from sysfs. libpfm4 marks PMUs present from CPUID alone, so
 * its notion of "present" is never trusted: sysfs decides what can be opened. */
#ifndef MEMSCOPE_PFM_H
#define MEMSCOPE_PFM_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct host;
struct event;

/* Encode text (which contains "::") into ev. */
int pfm_event_encode(const struct host *host, const char *text, struct event *ev, struct ms_error *err);

/* The sysfs PMU name that the kernel gives libpfm4's PMU pfm_name
 * ("wsm_unc" -> "uncore", "skx_unc_imc3" -> "uncore_imc_3"), as the catalog's
 * libpfm4: keys say (host/pmu_vendor.h, loaded on first use); false if none does. */
bool pfm_kernel_pmu_name(const char *pfm_name, char *buf, size_t size);

/* Iterate libpfm4's PMUs: fills name, description, whether libpfm4 thinks it
 * is present, whether it is uncore, and the kernel PMU it maps to (may be "").
 * Returns false past the end. */
struct pfm_pmu_view {
	char name[64];
	char desc[128];
	char kernel_pmu[64];
	bool libpfm_present;
	bool uncore;
	int nr_events;
	int nr_counters;
};
bool pfm_pmu_iterate(int *cursor, struct pfm_pmu_view *view);

#endif
