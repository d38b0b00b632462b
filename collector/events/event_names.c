#include "events/event_names.h"
#include "util/array.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <string.h>

#define HW_CACHE(cache, op, result) \
	(PERF_COUNT_HW_CACHE_##cache | PERF_COUNT_HW_CACHE_OP_##op << 8 | PERF_COUNT_HW_CACHE_RESULT_##result << 16)

/* Names and aliases as in perf's tools/perf/util/parse-events.c tables. */
static const struct generic_event generic_events[] = {
	{ "page-faults",      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults",           PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults",     PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults",     PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs",               PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations",   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations",       PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "task-clock",       PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cpu-clock",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles",       PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches",         PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses",    PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles",       PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles",       PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend",  PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	/* perf's cache events (stat -d, -dd, -ddd): cache | operation << 8 | result << 16. */
	{ "L1-dcache-loads",           PERF_TYPE_HW_CACHE, HW_CACHE(L1D, READ, ACCESS) },
	{ "L1-dcache-load-misses",     PERF_TYPE_HW_CACHE, HW_CACHE(L1D, READ, MISS) },
	{ "L1-dcache-prefetches",      PERF_TYPE_HW_CACHE, HW_CACHE(L1D, PREFETCH, ACCESS) },
	{ "L1-dcache-prefetch-misses", PERF_TYPE_HW_CACHE, HW_CACHE(L1D, PREFETCH, MISS) },
	{ "L1-icache-loads",           PERF_TYPE_HW_CACHE, HW_CACHE(L1I, READ, ACCESS) },
	{ "L1-icache-load-misses",     PERF_TYPE_HW_CACHE, HW_CACHE(L1I, READ, MISS) },
	{ "LLC-loads",                 PERF_TYPE_HW_CACHE, HW_CACHE(LL, READ, ACCESS) },
	{ "LLC-load-misses",           PERF_TYPE_HW_CACHE, HW_CACHE(LL, READ, MISS) },
	{ "dTLB-loads",                PERF_TYPE_HW_CACHE, HW_CACHE(DTLB, READ, ACCESS) },
	{ "dTLB-load-misses",          PERF_TYPE_HW_CACHE, HW_CACHE(DTLB, READ, MISS) },
	{ "iTLB-loads",                PERF_TYPE_HW_CACHE, HW_CACHE(ITLB, READ, ACCESS) },
	{ "iTLB-load-misses",          PERF_TYPE_HW_CACHE, HW_CACHE(ITLB, READ, MISS) },
};

const struct generic_event *generic_event_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(generic_events); i++)
		if (!strcmp(generic_events[i].name, name))
			return &generic_events[i];
	return NULL;
}

const struct generic_event *generic_event_at(int index)
{
	if (index < 0 || (size_t)index >= ARRAY_SIZE(generic_events))
		return NULL;
	return &generic_events[index];
}
