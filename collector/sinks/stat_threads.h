/* stat --per-thread: one row per thread of the measured processes, from the
 * per-thread series in the frames (labels pid, tid, comm). Threads come and
 * go during a run: their series appear and are retired (sampler/frame.h),
 * and each thread keeps its row, with its totals, to the end. */
#ifndef MEMSCOPE_STAT_THREADS_H
#define MEMSCOPE_STAT_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "sampler/frame.h"
#include "sinks/stat_table.h"

struct stat_thread_row;

struct stat_threads {
	int nr_columns;
	const char **names;       /* distinct names of the series without a thread, table order */
	const char **units;
	double *scales;
	/* --per-thread -a: a thread's count of 0 gets no line (perf's: every
	 * thread of the system would, most of them idle). */
	bool skip_zero;           /* each column's scale (task-clock: ns counted, msec shown) */
	/* Per series index: the row and column its values go to, -1: none. */
	int *series_row, *series_col;
	int nr_mapped;
	struct stat_thread_row *rows;
	int nr_rows, rows_cap;
	struct stat_table table;
};

int stat_threads_init(struct stat_threads *st, const struct series_table *series, struct ms_error *err);
/* Take a frame's per-thread values (and the series it adds or retires). */
int stat_threads_frame(struct stat_threads *st, const struct series_table *series, const struct frame *frame);
/* Fill st->table: totals since the start when `cumulative`, else the frames
 * since the previous call (the threads that had a series in them). */
int stat_threads_fill(struct stat_threads *st, bool cumulative);
void stat_threads_free(struct stat_threads *st);

#endif
