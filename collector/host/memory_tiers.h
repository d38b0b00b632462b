/* The memory tiers of a machine as the kernel describes them: each node's
 * tier (devices/virtual/memory_tiering/memory_tierN/nodelist), whether it has
 * CPUs, the kind of memory where the kernel names it (a dax device onlined by
 * kmem, under a CXL region or not), the HMAT access attributes
 * (nodeN/access0 and access1/initiators), NUMA balancing's mode and whether
 * reclaim may demote. */
#ifndef MEMSCOPE_MEMORY_TIERS_H
#define MEMSCOPE_MEMORY_TIERS_H

#include <stdbool.h>

#include "host/sysfs.h"
#include "host/topology.h"
#include "util/error.h"

/* One access class of HMAT: -1 where the kernel has no value. */
struct hmat_access {
	long long read_bandwidth;   /* MB/s */
	long long write_bandwidth;  /* MB/s */
	long long read_latency;     /* ns */
	long long write_latency;    /* ns */
};

enum memory_kind {
	MEMORY_KIND_UNNAMED,   /* the kernel does not say (DRAM, HBM and others look alike) */
	MEMORY_KIND_DAX_KMEM,  /* a dax device onlined as system RAM by the kmem driver */
	MEMORY_KIND_CXL,       /* a dax device of a CXL region onlined by kmem */
};

struct node_tier {
	int node;
	int tier;                     /* memory_tierN's N, -1 when no tier lists the node */
	bool has_cpu;
	enum memory_kind kind;
	struct hmat_access access[2]; /* access0: any initiator, access1: CPU initiators */
	bool has_access[2];
	int demotion_targets[8];      /* nearest nodes of the next slower tier */
	int nr_demotion_targets;
};

struct memory_tiers {
	struct node_tier *nodes;      /* in topology node order */
	int nr_nodes;
	int numa_balancing;           /* /proc/sys/kernel/numa_balancing, -1 unreadable */
	int demotion_enabled;         /* /sys/kernel/mm/numa/demotion_enabled: 1, 0, -1 unreadable */
	bool have_tiers;              /* devices/virtual/memory_tiering lists at least one tier */
};

int memory_tiers_load(struct memory_tiers *tiers, const struct sysfs_roots *roots, const struct topology *topo,
		      struct ms_error *err);
void memory_tiers_free(struct memory_tiers *tiers);
const struct node_tier *memory_tiers_node(const struct memory_tiers *tiers, int node);

const char *memory_kind_name(enum memory_kind kind);
/* "tiering" for mode 2, as Documentation/admin-guide/sysctl/kernel.rst names the bits. */
const char *numa_balancing_mode_name(int mode);

#endif
