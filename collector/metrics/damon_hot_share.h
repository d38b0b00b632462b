/* A data object's hot share from DAMON's virtual regions (record -- CMD or
 * -p with a damon series: memscope's own vaddr kdamond): the bytes of the
 * object's address range that hot regions covered, over the object's size,
 * averaged over the aggregations of its process (each aggregation lasts the
 * same interval, so this is the time-weighted share). A region is hot when
 * its access rate (nr_accesses out of the aggregation's samples) is at least
 * hot_pct percent, the rule of damon.hot_bytes (--damon-hot). */
#ifndef MEMSCOPE_DAMON_HOT_SHARE_H
#define MEMSCOPE_DAMON_HOT_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler/sample_item.h"

struct damon_hot_region {
	uint32_t pid;
	uint64_t start, end;
};

struct damon_hot_process {
	uint32_t pid;
	uint64_t aggregations;     /* distinct aggregation times seen */
	uint64_t last_t_ns;
};

struct damon_hot_share {
	unsigned hot_pct;
	struct damon_hot_region *hot;          /* the hot regions, of every aggregation */
	int nr_hot, cap_hot;
	struct damon_hot_process *procs;
	int nr_procs, cap_procs;
};

void damon_hot_share_init(struct damon_hot_share *h, unsigned hot_pct);
void damon_hot_share_free(struct damon_hot_share *h);
/* One virtual region (d->pid set) of the aggregation at t_ns; physical
 * regions are ignored. Regions of one aggregation share its time. -1: out of
 * memory. */
int damon_hot_share_add(struct damon_hot_share *h, uint64_t t_ns, const struct damon_region_event *d);
/* Does the recording hold virtual regions at all? */
bool damon_hot_share_any(const struct damon_hot_share *h);
/* Hot bytes of [start, end) of pid added over the aggregations, and the
 * number of those aggregations (0: DAMON monitored no such process; then
 * there is no share). share = hot_bytes / (aggregations x (end - start)). */
uint64_t damon_hot_share_bytes(const struct damon_hot_share *h, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t *aggregations);

#endif
