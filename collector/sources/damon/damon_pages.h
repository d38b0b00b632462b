/* A process's resident pages placed in DAMON's physical regions: the page
 * frames /proc/PID/pagemap gives for its virtual pages, joined with the
 * regions of one aggregation of a physical-address (paddr) kdamond, make the
 * process's accessed, hot and cold bytes per node by the same thresholds as
 * the node series (damon_tally_add). The join is pure arithmetic over the
 * pagemap entries and the regions: the source reads them, the tests write
 * them by hand. */
#ifndef MEMSCOPE_DAMON_PAGES_H
#define MEMSCOPE_DAMON_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/damon/damon_regions.h"

/* pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst). */
#define DAMON_PAGEMAP_PRESENT (1ull << 63)
#define DAMON_PAGEMAP_PFN_MASK ((1ull << 55) - 1)

/* One aggregation's physical regions, in bytes, sorted by start (the
 * kdamond sends them in address order). */
struct damon_phys_region {
	uint64_t start, end;
	uint32_t nr_accesses, age;
};

/* A run of a process's virtual pages whose frames lie in regions of the same
 * access count and age: the virtual memory of a physical region, for the
 * recording (report --sort obj's hot share). */
struct damon_vrun {
	uint64_t start, end;   /* virtual addresses, bytes */
	uint32_t nr_accesses, age;
	uint64_t nodes;        /* bit n: a page of it is on node n */
};

/* What one process's join found. */
struct damon_page_join {
	uint64_t present;      /* present pages seen */
	uint64_t zero_pfn;     /* of them, with a page frame number of 0 (hidden: no CAP_SYS_ADMIN) */
	uint64_t placed;       /* of them, inside a region */
	/* The run being built: consecutive frames in one region become one
	 * damon_tally_add call. */
	uint64_t run_start, run_end;
	int run_region;
	/* Optional (vruns not NULL): the virtual runs, up to cap; overflow when
	 * there were more. */
	struct damon_vrun *vruns;
	int nr_vruns, cap_vruns;
	bool overflow;
};

void damon_page_join_begin(struct damon_page_join *j);
/* Add n pagemap entries (page_size bytes each; the first is the page at
 * virtual address vaddr) to t: each present page's
 * frame is looked up in regions[0 .. nr) and credited to its node and class
 * (classes' thresholds; its addr_unit is ignored: the regions are in bytes).
 * Pages outside every region count nowhere. */
void damon_page_join_add(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
			 const struct damon_classes *classes, const struct damon_phys_region *regions, int nr,
			 const uint64_t *entries, size_t n, uint64_t page_size, uint64_t vaddr);
/* Credit the run left open. */
void damon_page_join_end(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
			 const struct damon_classes *classes, const struct damon_phys_region *regions);
/* Were the frame numbers hidden (present pages, every frame 0)? */
bool damon_page_join_hidden(const struct damon_page_join *j);

/* The region holding byte address addr, or -1. */
int damon_phys_region_find(const struct damon_phys_region *regions, int nr, uint64_t addr);

#endif
