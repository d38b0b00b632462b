#include "sinks/stat_repeat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void stat_repeat_init(struct stat_repeat *r, int runs)
{
	memset(r, 0, sizeof(*r));
	r->runs = runs;
}

int stat_repeat_add(struct stat_repeat *r, const struct stat_table *t, double elapsed_s, struct ms_error *err)
{
	int n = t->nr_rows * t->nr_columns;

	if (!r->sum) {
		r->nr_cells = n;
		r->sum = calloc((size_t)n + 1, sizeof(double));
		r->sum_sq = calloc((size_t)n + 1, sizeof(double));
		r->noise = calloc((size_t)n + 1, sizeof(double));
		r->counted = calloc((size_t)n + 1, sizeof(int));
		if (!r->sum || !r->sum_sq || !r->noise || !r->counted) {
			ms_error_set(err, "out of memory");
			return -1;
		}
	} else if (n != r->nr_cells) {
		ms_error_set(err, "-r: run %d counted %d values where the first counted %d (rows or counters "
			     "changed between runs)", r->done + 1, n, r->nr_cells);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct stat_cell *cell = &t->cells[i];

		if (cell->status != CELL_OK)
			continue;
		r->sum[i] += cell->value;
		r->sum_sq[i] += cell->value * cell->value;
		r->counted[i]++;
	}
	r->elapsed_sum += elapsed_s;
	r->elapsed_sum_sq += elapsed_s * elapsed_s;
	r->done++;
	return 0;
}

bool stat_repeat_last(const struct stat_repeat *r)
{
	return r->done >= r->runs;
}

/* perf's estimate: the sample variance over n - 1, divided by n (the
 * variance of the mean); its square root. */
static double sd_of_mean(double sum, double sum_sq, int n)
{
	double mean, var;

	if (n < 2)
		return 0.0;
	mean = sum / n;
	var = (sum_sq - n * mean * mean) / (n - 1);
	return var > 0 ? sqrt(var / n) : 0.0;
}

void stat_repeat_apply(struct stat_repeat *r, struct stat_table *t)
{
	for (int i = 0; i < r->nr_cells; i++) {
		struct stat_cell *cell = &t->cells[i];
		int n = r->counted[i];
		double mean;

		r->noise[i] = NAN;
		if (cell->status != CELL_OK || n == 0)
			continue;
		mean = r->sum[i] / n;
		cell->value = mean;
		if (cell->integer)
			cell->raw = (uint64_t)llround(mean);
		r->noise[i] = mean != 0.0 ? 100.0 * sd_of_mean(r->sum[i], r->sum_sq[i], n) / fabs(mean) : 0.0;
	}
	r->elapsed_mean = r->done ? r->elapsed_sum / r->done : 0.0;
	r->elapsed_sd = sd_of_mean(r->elapsed_sum, r->elapsed_sum_sq, r->done);
	t->noise = r->noise;
	t->runs = r->runs;
}

void stat_repeat_free(struct stat_repeat *r)
{
	free(r->sum);
	free(r->sum_sq);
	free(r->noise);
	free(r->counted);
	memset(r, 0, sizeof(*r));
}
