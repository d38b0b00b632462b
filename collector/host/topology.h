/* The machine's CPUs, cores, dies, sockets and NUMA nodes, read from sysfs
 * (devices/system/cpu and devices/system/node under the sysfs root). */
#ifndef MEMSCOPE_TOPOLOGY_H
#define MEMSCOPE_TOPOLOGY_H

#include "util/error.h"

#define TOPOLOGY_MAX_CACHE_LEVEL 7

struct cpu_place {
	int cpu;     /* kernel CPU number */
	int core;    /* topology/core_id */
	int die;     /* topology/die_id (0 where the kernel has none) */
	int socket;  /* topology/physical_package_id */
	int node;    /* NUMA node holding this CPU (0 on non-NUMA kernels) */
	int cluster; /* topology/cluster_id (0 where the kernel has none) */
	/* The cache instance perf's --per-cache groups it by: the last level
	 * (cache/indexN/level) unless topology_select_cache_level chose one, 0
	 * where none is described; its id as perf's, the first CPU of the
	 * cache's shared_cpu_list. */
	int cache_level;
	int cache_id;
	int cache_first_cpu[TOPOLOGY_MAX_CACHE_LEVEL + 1]; /* per level 1..: that id, -1 where no such cache */
};

struct topology {
	struct cpu_place *cpus;  /* online CPUs, ascending cpu number */
	int nr_cpus;
	int max_cpu;             /* highest online cpu number + 1 */
	int *nodes;              /* node ids, ascending */
	int nr_nodes;
	int *distance;           /* nr_nodes x nr_nodes, row = from, in node order */
	int nr_sockets;          /* distinct socket ids */
	int nr_dies;             /* distinct (socket, die) pairs */
	int nr_cores;            /* distinct (socket, die, core) triples */
	int smt;                 /* 1 when some core has more than one online CPU (kept when stat -C restricts) */
};

int topology_load(struct topology *topo, const char *sys_root, struct ms_error *err);
/* perf's --per-cache=LN: group the CPUs by their level-N cache instead of
 * the last level. An error names a CPU without one and the levels it has. */
int topology_select_cache_level(struct topology *topo, int level, struct ms_error *err);
void topology_free(struct topology *topo);

/* The place of a CPU, or NULL when it is not online. */
const struct cpu_place *topology_cpu(const struct topology *topo, int cpu);
/* Index of a node id in topo->nodes, or -1. */
int topology_node_index(const struct topology *topo, int node);
/* A node's memory (nodeN/meminfo MemTotal) in bytes: 1, 0 when the tree
 * does not say, -1 with err when the file is there but malformed. */
int topology_node_memory(const char *sys_root, int node, unsigned long long *bytes, struct ms_error *err);

#endif
