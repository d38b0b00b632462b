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

/* The virtual page at va, whose frame is at physical address pa: it extends
 * the last run when it follows it and its region has the same count and age. */
static void add_vrun(struct damon_page_join *j, const struct phys_node_map *map,
		     const struct damon_phys_region *regions, int nr, uint64_t pa, uint64_t va, uint64_t page_size)
{
	int region = damon_phys_region_find(regions, nr, pa);
	int node = phys_node_map_node(map, pa);
	uint64_t bit = node >= 0 && node < 64 ? 1ull << node : 0;
	struct damon_vrun *last = j->nr_vruns ? &j->vruns[j->nr_vruns - 1] : NULL;

	if (region < 0)
		return;
	if (last && last->end == va && last->nr_accesses == regions[region].nr_accesses &&
	    last->age == regions[region].age) {
		last->end += page_size;
		last->nodes |= bit;
		return;
	}
	if (j->nr_vruns == j->cap_vruns) {
		j->overflow = true;
		return;
	}
	j->vruns[j->nr_vruns++] = (struct damon_vrun){ va, va + page_size, regions[region].nr_accesses,
						       regions[region].age, bit };
}

void damon_page_join_add(struct damon_page_join *j, struct damon_tally *t, const struct phys_node_map *map,
			 const struct damon_classes *classes, const struct damon_phys_region *regions, int nr,
			 const uint64_t *entries, size_t n, uint64_t page_size, uint64_t vaddr)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t addr;
		int region;

		if (!(entries[i] & DAMON_PAGEMAP_PRESENT))
			continue;
		if (j->vruns && (entries[i] & DAMON_PAGEMAP_PFN_MASK))
			add_vrun(j, map, regions, nr, (entries[i] & DAMON_PAGEMAP_PFN_MASK) * page_size,
				 vaddr + i * page_size, page_size);
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
