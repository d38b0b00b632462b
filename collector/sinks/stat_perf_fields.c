#include "sinks/stat_perf_fields.h"

#include <math.h>

#include <stdio.h>
#include <string.h>

#include "util/number_format.h"

void perf_fields_row(const struct stat_table *t, int row, struct perf_fields *f)
{
	int key = t->row_keys[row];

	f->aggr_key = NULL;
	f->aggr[0] = '\0';
	f->aggr_number = t->row_cpus && key >= 0 ? t->row_cpus[row] : 1;
	if (key < 0 || t->mode == AGGR_TOTAL) {
		f->aggr_number = -1;
		return;
	}
	switch (t->mode) {
	case AGGR_CPU:
		f->aggr_key = "cpu";
		snprintf(f->aggr, sizeof(f->aggr), "CPU%d", key);
		f->aggr_number = -1;
		break;
	case AGGR_SOCKET:
		f->aggr_key = "socket";
		snprintf(f->aggr, sizeof(f->aggr), "S%d", key);
		break;
	case AGGR_NODE:
		f->aggr_key = "node";
		snprintf(f->aggr, sizeof(f->aggr), "N%d", key);
		break;
	case AGGR_CORE:
	case AGGR_DIE:
		f->aggr_key = aggr_mode_name(t->mode);
		aggr_key_label(t->mode, key, f->aggr, sizeof(f->aggr));
		break;
	case AGGR_THREAD:
		f->aggr_key = "thread";
		stat_table_thread_label(t, row, f->aggr, sizeof(f->aggr));
		f->aggr_number = -1;
		break;
	default:
		f->aggr_key = t->mode == AGGR_INSTANCE ? "instance" : t->mode == AGGR_TIER ? "tier" : "channel";
		stat_table_row_label(t, row, f->aggr, sizeof(f->aggr));
		f->aggr_number = 1;
		break;
	}
}

bool perf_fields_of(const struct stat_table *t, int row, int col, struct perf_fields *f)
{
	const struct stat_cell *cell = &t->cells[row * t->nr_columns + col];

	if (cell->status == CELL_NOT_APPLICABLE)
		return false;
	memset(f, 0, sizeof(*f));
	perf_fields_row(t, row, f);
	f->is_metric = col >= t->nr_event_columns;
	f->has_counter = !f->is_metric;
	f->event = t->names[col];
	f->cgroup = t->cgroups && !f->is_metric ? t->cgroups[col] : NULL;
	f->unit = f->is_metric ? "" : t->units[col];
	f->metric_unit = "";
	f->has_noise = t->runs > 1;
	switch (cell->status) {
	case CELL_UNSUPPORTED:
		snprintf(f->counter, sizeof(f->counter), "<not supported>");
		snprintf(f->pcnt, sizeof(f->pcnt), "100.00");
		return true;
	case CELL_NOT_COUNTED:
		snprintf(f->counter, sizeof(f->counter), "<not counted>");
		snprintf(f->pcnt, sizeof(f->pcnt), "0.00");
		return true;
	default:
		break;
	}
	/* Counted all the time (every counter but a multiplexed one): no float to format. */
	if (cell->coverage >= 1.0)
		snprintf(f->pcnt, sizeof(f->pcnt), "100.00");
	else
		snprintf(f->pcnt, sizeof(f->pcnt), "%.2f", cell->coverage * 100.0);
	if (f->has_noise && t->noise && !isnan(t->noise[row * t->nr_columns + col]))
		snprintf(f->noise, sizeof(f->noise), "%.2f", t->noise[row * t->nr_columns + col]);
	if (f->is_metric) {
		/* A metric is not a counter: its value and unit are perf's metric fields. */
		f->counter[0] = '\0';
		number_plain(f->metric_value, sizeof(f->metric_value), cell->value);
		f->metric_unit = t->units[col];
		return true;
	}
	if (cell->integer)
		number_u64(f->counter, sizeof(f->counter), cell->raw);
	else
		number_plain(f->counter, sizeof(f->counter), cell->value);
	f->runtime = cell->running_ns;
	return true;
}
