#include "sinks/stat_perf_fields.h"

#include <math.h>

#include <stdio.h>
#include <string.h>

#include "util/number_format.h"
#include "util/array.h"

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
	case AGGR_CLUSTER:
	case AGGR_CACHE:
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

bool perf_metric_scale(const struct stat_table *t, int col, double *scale, const char **unit)
{
	if (col < t->nr_event_columns || !t->perf_scales || !t->perf_units || !(t->perf_scales[col] > 0) ||
	    !t->perf_units[col])
		return false;
	*scale = t->perf_scales[col];
	*unit = t->perf_units[col];
	return true;
}

bool perf_fields_of(const struct stat_table *t, int row, int col, struct perf_fields *f)
{
	double scale;
	const char *scaled_unit;

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
		snprintf(f->counter, sizeof(f->counter), "%s", stat_cell_status_text(cell->status));
		snprintf(f->pcnt, sizeof(f->pcnt), "100.00");
		return true;
	case CELL_NOT_COUNTED:
		snprintf(f->counter, sizeof(f->counter), "%s", stat_cell_status_text(cell->status));
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
		if (perf_metric_scale(t, col, &scale, &scaled_unit)) {
			/* perf's metrics with a ScaleUnit: "%8.1f" of the scaled value, its unit. */
			f->metric_scaled = true;
			f->value = cell->value * scale;
			snprintf(f->metric_value, sizeof(f->metric_value), "%.1f", f->value);
			f->metric_unit = scaled_unit;
			return true;
		}
		number_plain(f->metric_value, sizeof(f->metric_value), cell->value);
		f->metric_unit = t->units[col];
		return true;
	}
	/* perf's CSV: whole values without decimals, others (msec, scaled) with 2. */
	f->value = cell->integer ? (double)cell->raw : cell->value;
	if (cell->integer)
		number_u64(f->counter, sizeof(f->counter), cell->raw);
	else
		snprintf(f->counter, sizeof(f->counter), floor(cell->value) == cell->value ? "%.0f" : "%.2f",
			 cell->value);
	f->runtime = cell->running_ns;
	return true;
}

void perf_line_cell(const struct stat_table *t, int k, int *row, int *col)
{
	if (t->mode == AGGR_CPU || t->mode == AGGR_THREAD) {
		*col = k / t->nr_rows;
		*row = k % t->nr_rows;
	} else {
		*row = k / t->nr_columns;
		*col = k % t->nr_columns;
	}
}

bool perf_event_is(const char *event, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(event, name, n) && (event[n] == '\0' || event[n] == ':');
}

/* The row's counted value of the event named name (any modifiers), or -1. */
static double row_value(const struct stat_table *t, int row, const char *name)
{
	for (int c = 0; c < t->nr_event_columns; c++) {
		const struct stat_cell *cell = &t->cells[row * t->nr_columns + c];

		if (cell->status == CELL_OK && perf_event_is(t->names[c], name))
			return cell->integer ? (double)cell->raw : cell->value;
	}
	return -1;
}

/* perf's K/M/G before "/sec". */
static void rate_unit(double *rate, char *unit, size_t size)
{
	static const struct { double at; char prefix; } steps[] = { { 1e9, 'G' }, { 1e6, 'M' }, { 1e3, 'K' } };

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (*rate >= steps[i].at) {
			*rate /= steps[i].at;
			snprintf(unit, size, "%c/sec", steps[i].prefix);
			return;
		}
	snprintf(unit, size, "/sec");
}

void perf_fields_shadow(const struct stat_table *t, int row, int col, double span_s, const char *printf_format,
			struct perf_fields *f)
{
	const struct stat_cell *cell = &t->cells[row * t->nr_columns + col];
	double task_ms;

	f->shadow = f->shadow_plain = 0;
	f->shadow_unit[0] = '\0';
	f->shadow_plain_unit = NULL;
	/* A gauge is a level: a rate of it per second means nothing. */
	if (f->is_metric || cell->status != CELL_OK || cell->gauge)
		return;
	/* Both clocks count in msec; perf's task-clock is the time the task
	 * ran, the rate's denominator (cpu-clock stands in under -a). */
	task_ms = row_value(t, row, "task-clock");
	if (task_ms < 0)
		task_ms = row_value(t, row, "cpu-clock");
	if (perf_event_is(f->event, "task-clock") || perf_event_is(f->event, "cpu-clock")) {
		if (span_s <= 0)
			return;
		f->shadow = f->value / (span_s * 1e3);
		snprintf(f->shadow_unit, sizeof(f->shadow_unit), "CPUs utilized");
	} else if (perf_event_is(f->event, "cycles") || perf_event_is(f->event, "cpu-cycles")) {
		if (task_ms < 0)
			return;
		f->shadow = task_ms > 0 ? f->value / (task_ms * 1e6) : 0;
		snprintf(f->shadow_unit, sizeof(f->shadow_unit), "GHz");
	} else if (!t->units[col][0]) {
		/* A count without a unit of its own: its rate, as perf's "/sec". */
		/* No task time (an idle interval): perf's 0 /sec. */
		if (task_ms < 0)
			return;
		f->shadow = task_ms > 0 ? f->value * 1e3 / task_ms : 0;
		f->shadow_plain = f->shadow;
		f->shadow_plain_unit = "/sec";
		rate_unit(&f->shadow, f->shadow_unit, sizeof(f->shadow_unit));
	} else {
		return;
	}
	if (!f->shadow_plain_unit) {
		f->shadow_plain = f->shadow;
		f->shadow_plain_unit = f->shadow_unit[0] == 'C' ? "CPUs utilized" : "GHz";
	}
	snprintf(f->metric_value, sizeof(f->metric_value), printf_format, f->shadow);
	f->metric_unit = f->shadow_unit;
}
