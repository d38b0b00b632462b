/* stat --per-thread: one row per thread of the measured processes, from the
 * eBPF source's per-thread maps. Threads come and go during a run, so these
 * rows are built at each output (outside the sampling hot path), as deltas
 * against the previous output or as totals. */
#ifndef MEMSCOPE_STAT_THREADS_H
#define MEMSCOPE_STAT_THREADS_H

#include <stdbool.h>

#include "util/error.h"
#include "sampler/frame.h"
#include "sinks/stat_table.h"
#include "sampler/source.h"

struct bpf_thread_values;

struct stat_threads {
	struct source *bpf;
	int nr_columns;
	const char **names;       /* distinct series names, table order */
	const char **units;
	int *value_index;         /* per column: index into bpf_thread_values.value, or -1 (n/a) */
	struct bpf_thread_values *now, *prev;
	int nr_now, nr_prev, capacity;
	struct stat_table table;
};

int stat_threads_init(struct stat_threads *st, struct source *bpf, const struct series_table *series,
		      struct ms_error *err);
/* Read the threads and fill st->table: totals since the start when
 * `cumulative`, else the change since the previous call. */
int stat_threads_fill(struct stat_threads *st, bool cumulative);
void stat_threads_free(struct stat_threads *st);

#endif
