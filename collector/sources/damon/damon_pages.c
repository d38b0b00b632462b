#include "sources/damon/damon_pages.h"

#include <string.h>

int damon_phys_region_find(const struct damon_phys_region *regions, int nr, uint64_t addr)
{
	int lo = 0, hi = nr;

	/* First region that ends after addr. */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (regions[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && regions[lo].start <= addr ? lo : -1;
}

void damon_page_join_begin(struct damon_page_join *j)
{
	memset(j, 0, sizeof(*j));
	j->run_region = -1;
}

static void credit_run(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
		       const struct damon_classes *classes, const struct damon_phys_region *regions)
{
	struct damon_classes bytes = *classes;
	struct damon_region r;

	if (j->run_region < 0)
		return;
	bytes.addr_unit = 1;
	r = (struct damon_region){ .start = j->run_start, .end = j->run_end,
				   .nr_accesses = regions[j->run_region].nr_accesses,
				   .age = regions[j->run_region].age };
	damon_tally_add(t, map, &bytes, &r);
	j->run_region = -1;
}

void damon_page_join_add(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
			 const struct damon_classes *classes, const struct damon_phys_region *regions, int nr,
			 const uint64_t *entries, size_t n, uint64_t page_size)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t addr;
		int region;

		if (!(entries[i] & DAMON_PAGEMAP_PRESENT))
			continue;
		j->present++;
		if ((entries[i] & DAMON_PAGEMAP_PFN_MASK) == 0) {
			j->zero_pfn++;
			continue;
		}
		addr = (entries[i] & DAMON_PAGEMAP_PFN_MASK) * page_size;
		/* The next frame of the run, in the run's region: extend it. */
		if (j->run_region >= 0 && addr == j->run_end && addr + page_size <= regions[j->run_region].end) {
			j->run_end += page_size;
			j->placed++;
			continue;
		}
		credit_run(j, t, map, classes, regions);
		region = damon_phys_region_find(regions, nr, addr);
		if (region < 0)
			continue;
		j->placed++;
		j->run_region = region;
		j->run_start = addr;
		j->run_end = addr + page_size;
	}
}

void damon_page_join_end(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
			 const struct damon_classes *classes, const struct damon_phys_region *regions)
{
	credit_run(j, t, map, classes, regions);
}

bool damon_page_join_hidden(const struct damon_page_join *j)
{
	return j->present > 0 && j->zero_pfn == j->present;
}
