/* A data object's hot share from DAMON's virtual regions (record -- CMD or
 * -p with a damon series: memscope's own vaddr kdamond): the bytes of the
 * object's address range that hot regions covered over the bytes of it that
 * any region covered, added over the aggregations of its process. Every
 * aggregation lasts the same interval, so this is the time-weighted share;
 * an object mapped for part of the run counts only the aggregations whose
 * regions cover it. A region is hot when its access rate (nr_accesses out of
 * the aggregation's samples) is at least hot_pct percent, the rule of
 * damon.hot_bytes (--damon-hot). */
#ifndef MEMSCOPE_DAMON_HOT_SHARE_H
#define MEMSCOPE_DAMON_HOT_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler/sample_item.h"

struct damon_hot_region {
	uint32_t pid;
	bool hot;
	uint64_t start, end;
};

struct damon_hot_share {
	unsigned hot_pct;
	struct damon_hot_region *regions;      /* every virtual region of every aggregation */
	int nr_regions, cap_regions;
};

void damon_hot_share_init(struct damon_hot_share *h, unsigned hot_pct);
void damon_hot_share_free(struct damon_hot_share *h);
/* One virtual region (d->pid set) of an aggregation; physical regions are
 * ignored. -1: out of memory. */
int damon_hot_share_add(struct damon_hot_share *h, const struct damon_region_event *d);
/* Does the recording hold virtual regions at all? */
bool damon_hot_share_any(const struct damon_hot_share *h);
/* Hot bytes of [start, end) of pid added over the aggregations, and in
 * *covered the bytes of it any region covered (0: DAMON never saw that range
 * of that process: there is no share). share = hot bytes / covered. */
uint64_t damon_hot_share_bytes(const struct damon_hot_share *h, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t *covered);

#endif
