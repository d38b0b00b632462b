/* A process's memory by node, from /proc/PID/numa_maps: each mapping's
 * "N<node>=<pages>" counts, in units of its kernelpagesize_kB (4 kB, or the
 * huge page size of a hugetlb mapping), as the kernel walks the page tables
 * when the file is read (fs/proc/task_mmu.c show_numa_map). Exact for the
 * pages mapped at that moment; pages shared with other processes are counted
 * in each. */
#ifndef MEMSCOPE_NUMA_MAPS_H
#define MEMSCOPE_NUMA_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The memory policy of a mapping, as mm/mempolicy.c policy_modes[] names
 * it in numa_maps ("prefer (many)", "weighted interleave"). */
enum numa_policy {
	NUMA_POLICY_DEFAULT,
	NUMA_POLICY_PREFERRED,
	NUMA_POLICY_PREFERRED_MANY,
	NUMA_POLICY_BIND,
	NUMA_POLICY_INTERLEAVE,
	NUMA_POLICY_WEIGHTED_INTERLEAVE,
	NUMA_POLICY_LOCAL,
	NUMA_POLICY_NR
};

/* "default", "preferred", "preferred_many", "bind", "interleave", "weighted_interleave", "local". */
const char *numa_policy_name(enum numa_policy policy);

/* Sums by node id (< nr_nodes; a higher node goes to other) and, when
 * policy_bytes is set, by policy and node: policy_bytes[policy * nr_nodes + node]. */
struct numa_maps_sums {
	uint64_t *bytes;
	uint64_t *policy_bytes;
	int nr_nodes;
	uint64_t other;
};

/* Adds pid's mappings to sums. buf is scratch. 0, or -1 with errno
 * (ENOENT/ESRCH: the process has gone). */
int numa_maps_add_bytes(const char *proc_root, pid_t pid, char *buf, size_t size, struct numa_maps_sums *sums);

/* The same over text, a whole numa_maps file. */
void numa_maps_parse(const char *text, struct numa_maps_sums *sums);

#endif
