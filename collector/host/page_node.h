/* Which NUMA node holds a page: a process's virtual page (move_pages(2) in
 * query mode, the kernel's own answer for the page as it is now), or a
 * physical address (the node whose memory blocks cover it, from
 * devices/system/node/nodeN/memoryM in sysfs). */
#ifndef MEMSCOPE_PAGE_NODE_H
#define MEMSCOPE_PAGE_NODE_H

#include <stdint.h>
#include <sys/types.h>

#include "host/sysfs.h"
#include "util/error.h"

/* Nodes of n pages of process pid (addresses need not be page aligned).
 * nodes[i] is the node, or a negative errno for that page (-ENOENT: not
 * present, -EFAULT: not mapped). Returns 0, or a negative errno for the
 * whole call (-ESRCH: the process is gone, -EPERM: not allowed). */
int page_nodes_of_process(pid_t pid, unsigned long n, const uint64_t *addrs, int *nodes);

/* For pages move_pages calls not present (a NUMA hinting fault's page is
 * protected while the balancer samples it): the node of each address's
 * mapping from /proc/PID/numa_maps, when all of the mapping's pages are on
 * one node (nodes[i] = -1 otherwise). Mappings are found through
 * /proc/PID/maps, whose lines numa_maps follows. Returns 0 or a negative
 * errno when the files cannot be read. */
int page_nodes_from_numa_maps(const char *proc_root, pid_t pid, unsigned long n, const uint64_t *addrs, int *nodes);

/* Physical memory ranges of each node. */
struct phys_node_map {
	struct phys_range { uint64_t start, end; int node; } *ranges;   /* sorted, merged */
	int nr;
};

/* Read the memory blocks of every node under roots->sys. A machine without
 * memory block files (no CONFIG_MEMORY_HOTPLUG) gives an empty map. */
int phys_node_map_load(struct phys_node_map *map, const struct sysfs_roots *roots, struct ms_error *err);
/* The node of a physical address, or -1. */
int phys_node_map_node(const struct phys_node_map *map, uint64_t phys);
void phys_node_map_free(struct phys_node_map *map);

#endif
