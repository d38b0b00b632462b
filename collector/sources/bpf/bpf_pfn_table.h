/* Which NUMA node owns each page frame, as ranges of pfns, for the eBPF
 * page-allocation probe (kmem:mm_page_alloc gives a pfn, not a node).
 *
 * Built from <sysfs>/devices/system/node/nodeN/memoryM links: memory block M
 * covers bytes [M * block_size, (M + 1) * block_size), block_size from
 * <sysfs>/devices/system/memory/block_size_bytes (hex). Adjacent blocks of
 * one node merge into one range. Tests inject tables through a fixture
 * sysfs root or bpf_pfn_table_add(). */
#ifndef MEMSCOPE_BPF_PFN_TABLE_H
#define MEMSCOPE_BPF_PFN_TABLE_H

#include <stdint.h>

#include "util/error.h"

struct bpf_pfn_range {
	uint64_t start_pfn;   /* first pfn */
	uint64_t end_pfn;     /* one past the last */
	int node;
};

struct bpf_pfn_table {
	struct bpf_pfn_range *ranges;  /* sorted by start_pfn, disjoint */
	int nr;
	int capacity;
};

/* Read the table under sys_root ("/sys" or a fixture). An error when the
 * tree has no node or no memory block to read. */
int bpf_pfn_table_load(struct bpf_pfn_table *table, const char *sys_root, struct ms_error *err);

/* Add [start_pfn, end_pfn) on node, keeping the table sorted and merged;
 * an error when it overlaps a range already there. */
int bpf_pfn_table_add(struct bpf_pfn_table *table, uint64_t start_pfn, uint64_t end_pfn, int node,
		      struct ms_error *err);

/* Node of pfn, or -1 when no range holds it. */
int bpf_pfn_table_node(const struct bpf_pfn_table *table, uint64_t pfn);

void bpf_pfn_table_free(struct bpf_pfn_table *table);

#endif
