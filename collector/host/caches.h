/* The CPU caches, from sysfs (devices/system/cpu/cpuN/cache/indexM): each
 * cache once, with the CPUs that share it. */
#ifndef MEMSCOPE_CACHES_H
#define MEMSCOPE_CACHES_H

#include <stdint.h>

#include "host/cpulist.h"
#include "host/sysfs.h"
#include "host/topology.h"
#include "util/error.h"

struct cache {
	int level;                /* 1, 2, 3... */
	char type[16];            /* "Data", "Instruction", "Unified" */
	uint64_t size;            /* bytes; 0 when the kernel does not say */
	int line_size;            /* bytes; 0 when unknown */
	int ways;                 /* 0 when unknown (or fully associative) */
	struct cpulist shared;    /* the CPUs that share this one */
};

/* A kind of cache (L1d, L2...) and every instance of it. */
struct cache_kind {
	struct cache *instances;
	int nr_instances;
};

struct cache_set {
	struct cache_kind *kinds; /* by level, then data, instruction, unified */
	int nr_kinds;
};

/* Read the caches of the online CPUs of topo. A tree without cache
 * directories (a fixture that does not describe them, a kernel without
 * cacheinfo) gives an empty set, not an error; a file that is there but
 * unreadable or malformed is an error naming it. */
int caches_load(struct cache_set *set, const struct sysfs_roots *roots, const struct topology *topo,
		struct ms_error *err);
void caches_free(struct cache_set *set);
/* "L1d", "L1i", "L2", "L3". */
void cache_name(const struct cache *c, char *buf, size_t size);

#endif
