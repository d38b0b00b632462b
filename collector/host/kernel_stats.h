/* The kernel statistics files memscope reads as procfs series, one name
 * prefix each: "vmstat/KEY" (/proc/vmstat, the whole system), "numastat/KEY"
 * (nodeN/numastat), "node_vmstat/KEY" (nodeN/vmstat: the node_stat_item
 * counters charged to that node's pgdat) and "node_meminfo/KEY" (nodeN/meminfo,
 * values in kB that are gauges, not counters). */
#ifndef MEMSCOPE_KERNEL_STATS_H
#define MEMSCOPE_KERNEL_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/sysfs.h"

struct kernel_stat_file {
	const char *prefix;    /* "node_vmstat/" */
	const char *file;      /* "vmstat": under /proc, or under nodeN/ when per_node */
	bool per_node;
	bool gauge;            /* values are levels (meminfo), not running counts */
	bool meminfo_lines;    /* "Node N Key:   value kB" rather than "key value" */
};

/* The file a name's prefix names, or NULL. */
const struct kernel_stat_file *kernel_stat_file_of(const char *name);
/* "vmstat/KEY, numastat/KEY, node_vmstat/KEY or node_meminfo/KEY": for messages. */
const char *kernel_stat_forms(void);
/* The path of f (of node, when per node). */
void kernel_stat_path(const struct kernel_stat_file *f, const struct sysfs_roots *roots, int node, char *buf,
		      size_t size);
/* The value of key in text, a whole file of kind f. */
bool kernel_stat_find(const struct kernel_stat_file *f, const char *text, const char *key, uint64_t *value);

#endif
