#include "metrics/aggregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *aggr_mode_name(enum aggr_mode mode)
{
	switch (mode) {
	case AGGR_CPU: return "cpu";
	case AGGR_SOCKET: return "socket";
	case AGGR_NODE: return "node";
	case AGGR_THREAD: return "tid";
	case AGGR_CHANNEL: return "channel";
	case AGGR_INSTANCE: return "instance";
	case AGGR_CORE: return "core";
	case AGGR_DIE: return "die";
	case AGGR_CLUSTER: return "cluster";
	case AGGR_CACHE: return "cache";
	case AGGR_TIER: return "tier";
	default: return "total";
	}
}

bool aggr_mode_by_place(enum aggr_mode mode)
{
	return mode == AGGR_CORE || mode == AGGR_DIE || mode == AGGR_CLUSTER || mode == AGGR_CACHE;
}

int aggr_place_key(enum aggr_mode mode, const struct cpu_place *place)
{
	if (place->socket < 0 || place->socket > AGGR_KEY_MAX_SOCKET || place->die < 0 || place->die > AGGR_KEY_MAX_DIE ||
	    place->core < 0 || place->core > AGGR_KEY_MAX_CORE || place->cluster < 0 ||
	    place->cluster > AGGR_KEY_MAX_CORE || place->cache_id > AGGR_KEY_MAX_CACHE_ID)
		return -1;
	switch (mode) {
	case AGGR_CORE: return (place->socket << 22) | (place->die << 16) | place->core;
	case AGGR_CLUSTER: return (place->socket << 22) | (place->die << 16) | place->cluster;
	case AGGR_CACHE: return (place->socket << 22) | (place->die << 16) | (place->cache_level << 13) | place->cache_id;
	default: return (place->socket << 22) | (place->die << 16);
	}
}

void aggr_key_label(enum aggr_mode mode, int key, char *buf, size_t size)
{
	if (mode == AGGR_CORE)
		snprintf(buf, size, "S%d-D%d-C%d", key >> 22, (key >> 16) & AGGR_KEY_MAX_DIE, key & AGGR_KEY_MAX_CORE);
	else if (mode == AGGR_CLUSTER)
		snprintf(buf, size, "S%d-D%d-CLS%d", key >> 22, (key >> 16) & AGGR_KEY_MAX_DIE, key & AGGR_KEY_MAX_CORE);
	else if (mode == AGGR_CACHE)
		snprintf(buf, size, "S%d-D%d-L%d-ID%d", key >> 22, (key >> 16) & AGGR_KEY_MAX_DIE, (key >> 13) & 7,
			 key & AGGR_KEY_MAX_CACHE_ID);
	else
		snprintf(buf, size, "S%d-D%d", key >> 22, (key >> 16) & AGGR_KEY_MAX_DIE);
}

int aggr_topology_fits(const struct topology *topo, struct ms_error *err)
{
	for (int i = 0; i < topo->nr_cpus; i++)
		if (aggr_place_key(AGGR_CORE, &topo->cpus[i]) < 0) {
			ms_error_set(err, "cpu%d is socket %d, die %d, core %d, cluster %d, cache id %d: --per-core, "
				     "--per-die, --per-cluster and --per-cache number sockets up to %d, dies up to %d, "
				     "cores and clusters up to %d and caches up to %d", topo->cpus[i].cpu,
				     topo->cpus[i].socket, topo->cpus[i].die, topo->cpus[i].core, topo->cpus[i].cluster,
				     topo->cpus[i].cache_id, AGGR_KEY_MAX_SOCKET, AGGR_KEY_MAX_DIE, AGGR_KEY_MAX_CORE,
				     AGGR_KEY_MAX_CACHE_ID);
			return -1;
		}
	return 0;
}

static int series_key(const struct series *s, enum aggr_mode mode, const struct topology *topo)
{
	const struct cpu_place *place;
	int key;

	switch (mode) {
	case AGGR_CPU: return s->labels.cpu;
	case AGGR_SOCKET: return s->labels.socket;
	case AGGR_NODE: return s->labels.node;
	case AGGR_CORE:
	case AGGR_DIE:
	case AGGR_CLUSTER:
	case AGGR_CACHE:
		if (!topo || s->labels.cpu == LABEL_NONE || !(place = topology_cpu(topo, s->labels.cpu)))
			return LABEL_NONE;
		key = aggr_place_key(mode, place);
		return key < 0 ? LABEL_NONE : key;
	default: return -1;
	}
}

static int find_or_add(int *list, int *nr, int key)
{
	for (int i = 0; i < *nr; i++)
		if (list[i] == key)
			return i;
	list[*nr] = key;
	return (*nr)++;
}

static int compare_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int aggregation_init(struct aggregation *a, const struct series_table *table, enum aggr_mode mode,
		     const struct topology *topo)
{
	int n = table->nr > 0 ? table->nr : 1;

	memset(a, 0, sizeof(*a));
	a->mode = mode;
	a->nr_series = table->nr;
	a->columns = calloc((size_t)n, sizeof(*a->columns));
	a->units = calloc((size_t)n, sizeof(*a->units));
	a->cgroups = calloc((size_t)n, sizeof(*a->cgroups));
	a->scales = calloc((size_t)n, sizeof(*a->scales));
	a->gauges = calloc((size_t)n, sizeof(*a->gauges));
	a->row_keys = calloc((size_t)n + 1, sizeof(int));
	a->series_row = calloc((size_t)n, sizeof(int));
	a->series_col = calloc((size_t)n, sizeof(int));
	a->series_unavailable = calloc((size_t)n, sizeof(bool));
	if (!a->series_unavailable || !a->gauges || !a->columns || !a->units || !a->cgroups || !a->scales || !a->row_keys || !a->series_row || !a->series_col) {
		aggregation_free(a);
		return -1;
	}
	/* Columns in the order events were given; rows sorted by key. */
	for (int i = 0; i < table->nr; i++) {
		const struct series *s = &table->series[i];
		int col = -1;

		/* Per-process and per-thread series repeat what the totals hold. */
		if (series_is_per_task(s)) {
			a->series_col[i] = 0;
			continue;
		}
		/* A column per event and cgroup (stat -G counts an event in several). */
		for (int c = 0; c < a->nr_columns; c++)
			if (!strcmp(a->columns[c], s->name) && !s->labels.cgroup == !a->cgroups[c] &&
			    (!s->labels.cgroup || !strcmp(s->labels.cgroup, a->cgroups[c])))
				col = c;
		if (col < 0) {
			col = a->nr_columns++;
			a->columns[col] = s->name;
			a->units[col] = s->unit;
			a->cgroups[col] = s->labels.cgroup;
			a->scales[col] = s->scale;
			a->gauges[col] = s->kind == SERIES_GAUGE;
			a->nr_gauge_columns += a->gauges[col];
		}
		a->series_col[i] = col;
		a->series_unavailable[i] = s->unavailable != NULL;
		if (s->unavailable)
			continue;
		if (mode == AGGR_TOTAL)
			continue;
		if (series_key(s, mode, topo) != LABEL_NONE)
			find_or_add(a->row_keys, &a->nr_rows, series_key(s, mode, topo));
	}
	if (mode == AGGR_TOTAL || a->nr_rows == 0) {
		a->nr_rows = 1;
		a->row_keys[0] = -1;
	}
	qsort(a->row_keys, (size_t)a->nr_rows, sizeof(int), compare_int);
	for (int i = 0; i < table->nr; i++) {
		int key = series_key(&table->series[i], mode, topo);

		a->series_row[i] = 0;
		if (series_is_per_task(&table->series[i]))
			a->series_row[i] = -1;
		else if (table->series[i].unavailable)
			a->series_row[i] = -1;
		else if (mode != AGGR_TOTAL) {
			a->series_row[i] = -1;
			for (int r = 0; r < a->nr_rows; r++)
				if (a->row_keys[r] == key)
					a->series_row[i] = r;
		}
	}
	a->cell_mapped = calloc((size_t)(a->nr_rows * a->nr_columns) + 1, sizeof(bool));
	a->gauge_frame = calloc((size_t)(a->nr_rows * a->nr_columns) + 1, sizeof(double));
	a->gauge_read = calloc((size_t)(a->nr_rows * a->nr_columns) + 1, sizeof(*a->gauge_read));
	if (!a->cell_mapped || !a->gauge_frame || !a->gauge_read) {
		aggregation_free(a);
		return -1;
	}
	for (int i = 0; i < table->nr; i++) {
		if (a->series_row[i] >= 0)
			a->cell_mapped[a->series_row[i] * a->nr_columns + a->series_col[i]] = true;
		else if (a->series_unavailable[i])
			for (int r = 0; r < a->nr_rows; r++)
				a->cell_mapped[r * a->nr_columns + a->series_col[i]] = true;
	}
	return 0;
}

void aggregation_free(struct aggregation *a)
{
	free(a->columns);
	free(a->units);
	free(a->cgroups);
	free(a->scales);
	free(a->gauges);
	free(a->gauge_frame);
	free(a->gauge_read);
	free(a->row_keys);
	free(a->series_row);
	free(a->series_col);
	free(a->series_unavailable);
	free(a->cell_mapped);
	memset(a, 0, sizeof(*a));
}

void aggregation_clear(const struct aggregation *a, struct aggr_cell *cells)
{
	memset(cells, 0, sizeof(*cells) * (size_t)(a->nr_rows * a->nr_columns));
	for (int i = 0; i < a->nr_rows * a->nr_columns; i++) {
		cells[i].gauge = a->gauges[i % a->nr_columns];
		/* A gauge's cell is valid once a frame has read all of it. */
		cells[i].valid = a->cell_mapped[i] && !cells[i].gauge;
		cells[i].not_applicable = !a->cell_mapped[i];
	}
}

static void add_to_cell(struct aggr_cell *cell, const struct sample *smp)
{
	if (!smp->valid) {
		cell->valid = false;
		return;
	}
	cell->value += sample_scaled(smp);
	cell->raw += smp->value;
	cell->enabled_ns += smp->enabled_ns;
	cell->running_ns += smp->running_ns;
}

void aggregation_add(const struct aggregation *a, const struct frame *frame, struct aggr_cell *cells)
{
	for (int i = 0; i < a->nr_series && i < frame->nr; i++) {
		int row = a->series_row[i], col = a->series_col[i];

		if (row >= 0) {
			int cell = row * a->nr_columns + col;

			if (a->gauges[col]) {
				/* A frame's gauge values add up across series (nodes, CPUs),
				 * not across frames; a frame missing one of them is left out
				 * of the run's peak, mean and last, not the whole run. */
				if (frame->samples[i].valid)
					a->gauge_frame[cell] += (double)frame->samples[i].value;
				if (a->gauge_read[cell] != GAUGE_FRAME_PARTIAL)
					a->gauge_read[cell] = frame->samples[i].valid ? GAUGE_FRAME_READ : GAUGE_FRAME_PARTIAL;
			} else {
				add_to_cell(&cells[cell], &frame->samples[i]);
			}
			continue;
		}
		/* An event that could not be opened marks its column in every row;
		 * a series outside this split (no such label) is left out. */
		if (!a->series_unavailable[i])
			continue;
		for (int r = 0; r < a->nr_rows; r++) {
			cells[r * a->nr_columns + col].unsupported = true;
			cells[r * a->nr_columns + col].valid = false;
		}
	}
	for (int k = 0; a->nr_gauge_columns && k < a->nr_rows * a->nr_columns; k++) {
		struct aggr_cell *cell = &cells[k];
		double v = a->gauge_frame[k];

		if (a->gauge_read[k] != GAUGE_FRAME_READ) {
			a->gauge_frame[k] = 0;
			a->gauge_read[k] = GAUGE_FRAME_NONE;
			continue;
		}
		cell->valid = !cell->unsupported;
		if (!cell->gauge_frames || v > cell->value)
			cell->value = v;
		cell->raw = (uint64_t)cell->value;
		cell->gauge_sum += v;
		cell->gauge_last = v;
		cell->gauge_frames++;
		a->gauge_frame[k] = 0;
		a->gauge_read[k] = GAUGE_FRAME_NONE;
	}
}

double aggr_cell_coverage(const struct aggr_cell *cell)
{
	if (cell->enabled_ns == 0 || cell->running_ns >= cell->enabled_ns)
		return 1.0;
	return (double)cell->running_ns / (double)cell->enabled_ns;
}
