/* perf's generic event names (software and hardware), as `perf list` spells them. */
#ifndef MEMSCOPE_EVENT_NAMES_H
#define MEMSCOPE_EVENT_NAMES_H

#include <stdint.h>

struct generic_event {
	const char *name;
	uint32_t type;     /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;
};

const struct generic_event *generic_event_find(const char *name);
/* Iterate: returns NULL past the end. */
const struct generic_event *generic_event_at(int index);

#endif
