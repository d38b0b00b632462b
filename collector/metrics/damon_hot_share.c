#include "metrics/damon_hot_share.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

void damon_hot_share_init(struct damon_hot_share *h, unsigned hot_pct)
{
	memset(h, 0, sizeof(*h));
	h->hot_pct = hot_pct;
}

void damon_hot_share_free(struct damon_hot_share *h)
{
	free(h->regions);
	memset(h, 0, sizeof(*h));
}

int damon_hot_share_add(struct damon_hot_share *h, const struct damon_region_event *d)
{
	if (!d->pid || d->end <= d->start || !d->samples)
		return 0;
	if (array_grow_int(&h->regions, &h->cap_regions, h->nr_regions + 1, sizeof(*h->regions)) < 0)
		return -1;
	/* Hot: nr_accesses / samples >= hot_pct%, in integers. */
	h->regions[h->nr_regions++] = (struct damon_hot_region){
		.pid = d->pid, .hot = (uint64_t)d->nr_accesses * 100u >= (uint64_t)h->hot_pct * d->samples,
		.start = d->start, .end = d->end };
	return 0;
}

bool damon_hot_share_any(const struct damon_hot_share *h)
{
	return h->nr_regions > 0;
}

uint64_t damon_hot_share_bytes(const struct damon_hot_share *h, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t *covered)
{
	uint64_t bytes = 0;

	*covered = 0;
	for (int i = 0; i < h->nr_regions; i++) {
		const struct damon_hot_region *r = &h->regions[i];
		uint64_t lo = r->start > start ? r->start : start, hi = r->end < end ? r->end : end;

		if (r->pid != pid || hi <= lo)
			continue;
		*covered += hi - lo;
		if (r->hot)
			bytes += hi - lo;
	}
	return bytes;
}
