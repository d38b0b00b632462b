/* stat -r N: each run's totals kept, and on the last run the mean of every
 * cell with its spread as perf stat prints it: the standard deviation of the
 * mean, in percent of the mean. */
#ifndef MEMSCOPE_STAT_REPEAT_H
#define MEMSCOPE_STAT_REPEAT_H

#include <stdbool.h>

#include "sinks/stat_table.h"
#include "util/error.h"

struct stat_repeat {
	int runs;                 /* N */
	int done;                 /* runs added so far */
	int nr_cells;
	double *sum, *sum_sq;     /* per cell, over the runs it was counted in */
	int *counted;             /* per cell: runs it was counted in */
	double *noise;            /* per cell after the last run: percent, or NaN (none) */
	double elapsed_sum, elapsed_sum_sq;
	double elapsed_mean, elapsed_sd; /* after the last run: seconds, sd of the mean */
};

void stat_repeat_init(struct stat_repeat *r, int runs);
/* Add one run's totals; -1 with err when the table's shape changed between
 * runs or memory ran out. */
int stat_repeat_add(struct stat_repeat *r, const struct stat_table *t, double elapsed_s, struct ms_error *err);
bool stat_repeat_last(const struct stat_repeat *r);
/* After the last run: every counted cell of t becomes the mean of its runs,
 * t->noise points at the spreads and t->runs says how many. */
void stat_repeat_apply(struct stat_repeat *r, struct stat_table *t);
void stat_repeat_free(struct stat_repeat *r);

#endif
