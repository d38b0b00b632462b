/* The procfs source: kernel statistics a metric plan needs, read each
 * interval from /proc/vmstat (system-wide) and
 * devices/system/node/nodeN/numastat (one series per node, under the sysfs
 * root). The files hold running totals; series carry the delta since the
 * previous read. */
#ifndef MEMSCOPE_PROCFS_SOURCE_H
#define MEMSCOPE_PROCFS_SOURCE_H

#include "util/error.h"
#include "host/host.h"
#include "metrics/metrics.h"
#include "sampler/source.h"

/* Series are named after the plan events ("vmstat/pgfault", "numastat/numa_hit"). */
int procfs_source_create(struct source *src, const struct host *host, const struct metric_plan *plan,
			 struct ms_error *err);

#endif
