#include "sinks/stat_threads.h"

#include <stdlib.h>
#include <string.h>

#include "sources/bpf_source.h"

#define MAX_THREADS 65536

int stat_threads_init(struct stat_threads *st, struct source *bpf, const struct series_table *series,
		      struct ms_error *err)
{
	memset(st, 0, sizeof(*st));
	st->bpf = bpf;
	st->names = calloc((size_t)series->nr + 1, sizeof(char *));
	st->units = calloc((size_t)series->nr + 1, sizeof(char *));
	st->value_index = calloc((size_t)series->nr + 1, sizeof(int));
	st->capacity = 256;
	st->now = calloc((size_t)st->capacity, sizeof(*st->now));
	st->prev = calloc((size_t)st->capacity, sizeof(*st->prev));
	if (!st->names || !st->units || !st->value_index || !st->now || !st->prev) {
		stat_threads_free(st);
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < series->nr; i++) {
		bool seen = false;

		for (int c = 0; c < st->nr_columns; c++)
			seen |= !strcmp(st->names[c], series->series[i].name);
		if (seen)
			continue;
		st->names[st->nr_columns] = series->series[i].name;
		st->units[st->nr_columns] = series->series[i].unit;
		st->value_index[st->nr_columns++] = bpf_thread_value_index(series->series[i].name);
	}
	return 0;
}

static const struct bpf_thread_values *find_tid(const struct bpf_thread_values *list, int nr, pid_t tid)
{
	int lo = 0, hi = nr - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (list[mid].tid == tid)
			return &list[mid];
		if (list[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int read_threads(struct stat_threads *st)
{
	int nr;

	for (;;) {
		nr = bpf_source_threads(st->bpf, st->now, st->capacity);
		if (nr < st->capacity || st->capacity >= MAX_THREADS)
			break;
		/* Possibly more threads than room: grow and read again. */
		struct bpf_thread_values *now = realloc(st->now, sizeof(*now) * (size_t)st->capacity * 2);
		struct bpf_thread_values *prev = realloc(st->prev, sizeof(*prev) * (size_t)st->capacity * 2);

		if (now)
			st->now = now;
		if (prev)
			st->prev = prev;
		if (!now || !prev)
			return -1;
		st->capacity *= 2;
	}
	st->nr_now = nr;
	return nr;
}

int stat_threads_fill(struct stat_threads *st, bool cumulative)
{
	struct stat_table *t = &st->table;
	struct bpf_thread_values *swap;

	if (read_threads(st) < 0)
		return -1;
	stat_table_free(t);
	t->mode = AGGR_THREAD;
	t->nr_rows = st->nr_now;
	t->nr_columns = t->nr_event_columns = st->nr_columns;
	t->row_keys = calloc((size_t)st->nr_now + 1, sizeof(int));
	t->names = calloc((size_t)st->nr_columns + 1, sizeof(char *));
	t->units = calloc((size_t)st->nr_columns + 1, sizeof(char *));
	t->cells = calloc((size_t)(st->nr_now * st->nr_columns) + 1, sizeof(*t->cells));
	if (!t->row_keys || !t->names || !t->units || !t->cells)
		return -1;
	memcpy(t->names, st->names, sizeof(char *) * (size_t)st->nr_columns);
	memcpy(t->units, st->units, sizeof(char *) * (size_t)st->nr_columns);
	for (int r = 0; r < st->nr_now; r++) {
		const struct bpf_thread_values *now = &st->now[r];
		const struct bpf_thread_values *before = cumulative ? NULL : find_tid(st->prev, st->nr_prev, now->tid);

		t->row_keys[r] = (int)now->tid;
		for (int c = 0; c < st->nr_columns; c++) {
			struct stat_cell *cell = &t->cells[r * st->nr_columns + c];
			int v = st->value_index[c];

			if (v < 0) {
				cell->status = CELL_NOT_APPLICABLE;
				cell->why = "not kept per thread";
				continue;
			}
			cell->raw = now->value[v] - (before ? before->value[v] : 0);
			cell->value = (double)cell->raw;
			cell->coverage = 1.0;
			cell->integer = true;
		}
	}
	/* The next interval is measured from here. */
	swap = st->prev;
	st->prev = st->now;
	st->now = swap;
	st->nr_prev = st->nr_now;
	return 0;
}

void stat_threads_free(struct stat_threads *st)
{
	stat_table_free(&st->table);
	free(st->names);
	free(st->units);
	free(st->value_index);
	free(st->now);
	free(st->prev);
	memset(st, 0, sizeof(*st));
}
