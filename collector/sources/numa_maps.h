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

/* Adds the bytes of pid's mappings on node n to bytes[n] (n < nr_nodes; a
 * higher node is counted in *other). buf is scratch. 0, or -1 with errno
 * (ENOENT/ESRCH: the process has gone). */
int numa_maps_add_bytes(const char *proc_root, pid_t pid, char *buf, size_t size, uint64_t *bytes, int nr_nodes,
			uint64_t *other);

/* The same over text, a whole numa_maps file. */
void numa_maps_parse(const char *text, uint64_t *bytes, int nr_nodes, uint64_t *other);

#endif
