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
	free(h->hot);
	free(h->procs);
	memset(h, 0, sizeof(*h));
}

static struct damon_hot_process *process_of(struct damon_hot_share *h, uint32_t pid)
{
	for (int i = 0; i < h->nr_procs; i++)
		if (h->procs[i].pid == pid)
			return &h->procs[i];
	if (array_grow_int(&h->procs, &h->cap_procs, h->nr_procs + 1, sizeof(*h->procs)) < 0)
		return NULL;
	h->procs[h->nr_procs] = (struct damon_hot_process){ .pid = pid };
	return &h->procs[h->nr_procs++];
}

int damon_hot_share_add(struct damon_hot_share *h, uint64_t t_ns, const struct damon_region_event *d)
{
	struct damon_hot_process *p;

	if (!d->pid || d->end <= d->start || !d->samples)
		return 0;
	if (!(p = process_of(h, d->pid)))
		return -1;
	/* The regions of one aggregation come together, at its time. */
	if (!p->aggregations || p->last_t_ns != t_ns) {
		p->aggregations++;
		p->last_t_ns = t_ns;
	}
	/* Hot: nr_accesses / samples >= hot_pct%, in integers. */
	if ((uint64_t)d->nr_accesses * 100u < (uint64_t)h->hot_pct * d->samples)
		return 0;
	if (array_grow_int(&h->hot, &h->cap_hot, h->nr_hot + 1, sizeof(*h->hot)) < 0)
		return -1;
	h->hot[h->nr_hot++] = (struct damon_hot_region){ d->pid, d->start, d->end };
	return 0;
}

bool damon_hot_share_any(const struct damon_hot_share *h)
{
	return h->nr_procs > 0;
}

uint64_t damon_hot_share_bytes(const struct damon_hot_share *h, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t *aggregations)
{
	uint64_t bytes = 0;

	*aggregations = 0;
	for (int i = 0; i < h->nr_procs; i++)
		if (h->procs[i].pid == pid)
			*aggregations = h->procs[i].aggregations;
	if (!*aggregations)
		return 0;
	for (int i = 0; i < h->nr_hot; i++) {
		const struct damon_hot_region *r = &h->hot[i];
		uint64_t lo = r->start > start ? r->start : start, hi = r->end < end ? r->end : end;

		if (r->pid == pid && hi > lo)
			bytes += hi - lo;
	}
	return bytes;
}
