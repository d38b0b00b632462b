/* The kdamonds of the DAMON sysfs interface (kernel/mm/damon/admin), read
 * and never written: which one runs, whose monitor it is (its index, thread,
 * operations set) and its intervals. memscope's passive mode reads another
 * kdamond's aggregations; it must leave that kdamond exactly as it found it,
 * so nothing here opens a file for writing. */
#ifndef MEMSCOPE_DAMON_MONITOR_H
#define MEMSCOPE_DAMON_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/sysfs.h"
#include "util/error.h"

/* Why DAMON cannot be used here (the reason damon_monitor_find gives). */
enum damon_absent {
	DAMON_NO_KERNEL_SUPPORT = 1, /* no kernel/mm/damon: built without CONFIG_DAMON_SYSFS */
	DAMON_NO_SYSFS,              /* sysfs is not mounted / kernel/mm is unreadable */
	DAMON_NOT_ALLOWED,           /* the admin directory is root's only */
	DAMON_NONE_RUNNING,          /* DAMON is there, but no kdamond runs (active mode would start one) */
	DAMON_BAD_STATE,             /* a file of the interface says something unexpected */
};

struct damon_monitor {
	int index;                  /* kdamonds/<index> */
	pid_t pid;                  /* the kdamond thread */
	char ops[16];               /* "paddr", "vaddr", "fvaddr" (context 0) */
	uint64_t sample_us, aggr_us, update_us;
	uint64_t addr_unit;         /* region addresses are in these units (1 on kernels without the file) */
	int nr_kdamonds;
};

/* The first kdamond whose state is "on". Returns 0 with mon filled, or -1
 * with *reason set and err a sentence that says why and what would make it
 * work. */
int damon_monitor_find(const struct sysfs_roots *roots, struct damon_monitor *mon, enum damon_absent *reason,
		       struct ms_error *err);

/* "kdamond 0 (pid 76, paddr, sample 500 ms, aggregation 5 s, update 60 s)" */
void damon_monitor_describe(const struct damon_monitor *mon, char *buf, size_t size);

#endif
