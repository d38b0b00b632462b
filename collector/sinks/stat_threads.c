#include "sinks/stat_threads.h"

#include <stdlib.h>
#include <string.h>

struct stat_thread_row {
	int tid;
	char comm[16];            /* its name in its latest series (a rename starts new ones) */
	bool in_interval;         /* had a series in the frames since the last fill */
	uint64_t *interval;       /* nr_columns values */
	uint64_t *total;
	bool *seen;               /* the column has a series for this thread */
};

static int map(struct stat_threads *st, const struct series_table *series, int index);

int stat_threads_init(struct stat_threads *st, const struct series_table *series, struct ms_error *err)
{
	memset(st, 0, sizeof(*st));
	st->names = calloc((size_t)series->nr + 1, sizeof(char *));
	st->units = calloc((size_t)series->nr + 1, sizeof(char *));
	st->scales = calloc((size_t)series->nr + 1, sizeof(double));
	if (!st->names || !st->units || !st->scales) {
		stat_threads_free(st);
		ms_error_set(err, "out of memory");
		return -1;
	}
	/* A column per event: the eBPF sources give a whole-target series beside
	 * the threads' own, perf's counters per thread (--per-thread) only these. */
	for (int i = 0; i < series->nr; i++) {
		bool seen = false;

		for (int c = 0; c < st->nr_columns; c++)
			seen |= !strcmp(st->names[c], series->series[i].name);
		if (seen)
			continue;
		st->names[st->nr_columns] = series->series[i].name;
		st->scales[st->nr_columns] = series->series[i].scale;
		st->units[st->nr_columns++] = series->series[i].unit;
	}
	/* Threads whose series are there from the start (perf's counters of
	 * each thread); the eBPF sources add theirs as threads appear. */
	for (int i = 0; i < series->nr; i++)
		if (map(st, series, i) < 0) {
			stat_threads_free(st);
			ms_error_set(err, "out of memory");
			return -1;
		}
	return 0;
}

static int column_of(const struct stat_threads *st, const char *name)
{
	for (int c = 0; c < st->nr_columns; c++)
		if (!strcmp(st->names[c], name))
			return c;
	return -1;
}

static int row_of(struct stat_threads *st, int tid)
{
	struct stat_thread_row *r;

	for (int i = 0; i < st->nr_rows; i++)
		if (st->rows[i].tid == tid)
			return i;
	if (st->nr_rows == st->rows_cap) {
		int cap = st->rows_cap ? st->rows_cap * 2 : 64;
		struct stat_thread_row *grown = realloc(st->rows, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		st->rows = grown;
		st->rows_cap = cap;
	}
	r = &st->rows[st->nr_rows];
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	r->interval = calloc((size_t)st->nr_columns + 1, sizeof(uint64_t));
	r->total = calloc((size_t)st->nr_columns + 1, sizeof(uint64_t));
	r->seen = calloc((size_t)st->nr_columns + 1, sizeof(bool));
	if (!r->interval || !r->total || !r->seen) {
		free(r->interval);
		free(r->total);
		free(r->seen);
		return -1;
	}
	return st->nr_rows++;
}

static int map(struct stat_threads *st, const struct series_table *series, int index)
{
	const struct series *s = &series->series[index];

	if (index >= st->nr_mapped) {
		int n = index + 64;
		int *rows = realloc(st->series_row, sizeof(int) * (size_t)n);
		int *cols = rows ? realloc(st->series_col, sizeof(int) * (size_t)n) : NULL;

		if (rows)
			st->series_row = rows;
		if (!cols)
			return -1;
		st->series_col = cols;
		for (int i = st->nr_mapped; i < n; i++)
			st->series_row[i] = st->series_col[i] = -1;
		st->nr_mapped = n;
	}
	st->series_row[index] = st->series_col[index] = -1;
	if (s->labels.tid == LABEL_NONE)
		return 0;
	st->series_col[index] = column_of(st, s->name);
	if (st->series_col[index] < 0)
		return 0;
	st->series_row[index] = row_of(st, s->labels.tid);
	if (st->series_row[index] < 0)
		return -1;
	memcpy(st->rows[st->series_row[index]].comm, s->labels.comm, sizeof(st->rows[0].comm));
	st->rows[st->series_row[index]].seen[st->series_col[index]] = true;
	return 0;
}

int stat_threads_frame(struct stat_threads *st, const struct series_table *series, const struct frame *frame)
{
	const struct series_changes *c = frame->changes;

	for (int i = 0; c && i < c->nr_added; i++)
		if (map(st, series, c->added[i]) < 0)
			return -1;
	for (int i = 0; i < st->nr_mapped && i < frame->nr; i++) {
		int row = st->series_row[i], col = st->series_col[i];
		const struct sample *s = &frame->samples[i];

		if (row < 0 || col < 0)
			continue;
		st->rows[row].in_interval = true;
		if (!s->valid)
			continue;
		st->rows[row].interval[col] += s->value;
		st->rows[row].total[col] += s->value;
	}
	/* Their last values were in this frame. */
	for (int i = 0; c && i < c->nr_retired; i++)
		if (c->retired[i] < st->nr_mapped)
			st->series_row[c->retired[i]] = st->series_col[c->retired[i]] = -1;
	return 0;
}

static int by_tid(const void *a, const void *b, void *arg)
{
	const struct stat_thread_row *rows = arg;
	int x = rows[*(const int *)a].tid, y = rows[*(const int *)b].tid;

	return (x > y) - (x < y);
}

int stat_threads_fill(struct stat_threads *st, bool cumulative)
{
	struct stat_table *t = &st->table;
	int *order = calloc((size_t)st->nr_rows + 1, sizeof(int)), n = 0;

	stat_table_free(t);
	if (!order)
		return -1;
	for (int r = 0; r < st->nr_rows; r++)
		if (cumulative || st->rows[r].in_interval)
			order[n++] = r;
	qsort_r(order, (size_t)n, sizeof(int), by_tid, st->rows);
	t->mode = AGGR_THREAD;
	t->nr_rows = n;
	t->nr_columns = t->nr_event_columns = st->nr_columns;
	t->row_keys = calloc((size_t)n + 1, sizeof(int));
	t->row_names = calloc((size_t)n + 1, sizeof(t->row_names[0]));
	t->names = calloc((size_t)st->nr_columns + 1, sizeof(char *));
	t->units = calloc((size_t)st->nr_columns + 1, sizeof(char *));
	t->cells = calloc((size_t)(n * st->nr_columns) + 1, sizeof(*t->cells));
	if (!t->row_keys || !t->row_names || !t->names || !t->units || !t->cells) {
		free(order);
		return -1;
	}
	memcpy(t->names, st->names, sizeof(char *) * (size_t)st->nr_columns);
	memcpy(t->units, st->units, sizeof(char *) * (size_t)st->nr_columns);
	for (int k = 0; k < n; k++) {
		struct stat_thread_row *row = &st->rows[order[k]];

		t->row_keys[k] = row->tid;
		memcpy(t->row_names[k], row->comm, sizeof(t->row_names[k]));
		for (int c = 0; c < st->nr_columns; c++) {
			struct stat_cell *cell = &t->cells[k * st->nr_columns + c];

			if (!row->seen[c]) {
				cell->status = CELL_NOT_APPLICABLE;
				cell->why = "not kept per thread";
				continue;
			}
			cell->raw = cumulative ? row->total[c] : row->interval[c];
			if (st->skip_zero && cell->raw == 0) {
				cell->status = CELL_NOT_APPLICABLE;
				cell->why = "nothing counted";
				continue;
			}
			cell->value = (double)cell->raw * (st->scales[c] ? st->scales[c] : 1.0);
			cell->coverage = 1.0;
			cell->integer = !st->scales[c] || st->scales[c] == 1.0;
		}
	}
	/* The next interval is measured from here. */
	for (int r = 0; r < st->nr_rows; r++) {
		memset(st->rows[r].interval, 0, sizeof(uint64_t) * (size_t)st->nr_columns);
		st->rows[r].in_interval = false;
	}
	free(order);
	return 0;
}

void stat_threads_free(struct stat_threads *st)
{
	stat_table_free(&st->table);
	for (int r = 0; r < st->nr_rows; r++) {
		free(st->rows[r].interval);
		free(st->rows[r].total);
		free(st->rows[r].seen);
	}
	free(st->rows);
	free(st->names);
	free(st->units);
	free(st->scales);
	free(st->series_row);
	free(st->series_col);
	memset(st, 0, sizeof(*st));
}
